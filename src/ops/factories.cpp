#include "tessel/ops/factories.hpp"

#include <cmath>
#include <cstring>

#include "backends/backend.hpp"
#include "core/check.hpp"

namespace tessel {

__extension__ using Int128 = __int128;

Tensor empty(Shape shape, DType dtype) {
  return empty(std::move(shape), dtype, current_device());
}

Tensor empty(Shape shape, DType dtype, Device device) {
  const std::int64_t numel = checked_numel(shape);
  const std::int64_t bytes = storage_bytes(dtype, numel);
  return Tensor::contiguous_over(Storage::allocate(bytes, device),
                                 std::move(shape), dtype);
}

Tensor empty_pinned(Shape shape, DType dtype, bool fall_back_to_pageable) {
  const std::int64_t bytes = storage_bytes(dtype, checked_numel(shape));
  Storage storage = Storage::allocate_pinned(bytes, fall_back_to_pageable);
  Strides strides = contiguous_strides(shape);
  return Tensor(std::move(storage), std::move(shape), std::move(strides), 0,
                dtype);
}

Tensor pin_memory(const Tensor& t, bool fall_back_to_pageable) {
  TESSEL_CHECK(t.defined(), BadShape, "pin_memory", "the tensor is undefined");
  TESSEL_CHECK(t.device().is_cpu(), DeviceMismatch, "pin_memory",
               "the tensor is on {}; pinned memory is host memory",
               t.device().str());
  Tensor out = empty_pinned(t.shape(), t.dtype(), fall_back_to_pageable);
  out.copy_(t);
  return out;
}

Tensor zeros(Shape shape, DType dtype) {
  return zeros(std::move(shape), dtype, current_device());
}

Tensor zeros(Shape shape, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  // Zero is all-zero bytes in every dtype, block formats included (scale
  // 0), which is what a backend's fill of 0 writes.
  backend_for(device, "zeros").fill(t, 0);
  return t;
}

Tensor ones(Shape shape, DType dtype) {
  return full(std::move(shape), 1, dtype);
}

Tensor ones(Shape shape, DType dtype, Device device) {
  return full(std::move(shape), 1, dtype, device);
}

Tensor full(Shape shape, Scalar value, std::optional<DType> dtype) {
  return full(std::move(shape), value, dtype.value_or(value.default_dtype()),
              current_device());
}

Tensor full(Shape shape, Scalar value, DType dtype, Device device) {
  Tensor t = empty(std::move(shape), dtype, device);
  t.fill_(value);
  return t;
}

Tensor arange(Scalar end) { return arange(0, end, 1); }
Tensor arange(Scalar end, DType dtype) { return arange(0, end, 1, dtype); }

Tensor arange(Scalar start, Scalar end, Scalar step,
              std::optional<DType> dtype) {
  TESSEL_CHECK(!start.is_complex() && !end.is_complex() && !step.is_complex(),
               BadDType, "arange",
               "complex bounds have no order; use real ones");
  const bool all_int = !start.is_floating_point() && !end.is_floating_point() &&
                       !step.is_floating_point();
  const DType out_dtype = dtype.value_or(all_int ? DType::I64 : DType::F32);
  std::int64_t length = 0;
  if (all_int) {
    const auto s = start.to<std::int64_t>();
    const auto e = end.to<std::int64_t>();
    const auto d = step.to<std::int64_t>();
    TESSEL_CHECK(d != 0, BadShape, "arange", "step must not be zero");
    const Int128 span = static_cast<Int128>(e) - s;
    const Int128 n = d > 0 ? (span + d - 1) / d : (span + d + 1) / d;
    length = n > 0 ? static_cast<std::int64_t>(n) : 0;
  } else {
    const auto s = start.to<double>();
    const auto e = end.to<double>();
    const auto d = step.to<double>();
    TESSEL_CHECK(
        d != 0.0 && std::isfinite(s) && std::isfinite(e) && std::isfinite(d),
        BadShape, "arange",
        "start {}, end {} and step {} must be finite and step nonzero", s, e,
        d);
    const double n = std::ceil((e - s) / d);
    TESSEL_CHECK(n < 9.2e18, SizeOverflow, "arange", "{} elements are too many",
                 n);
    length = n > 0 ? static_cast<std::int64_t>(n) : 0;
  }
  if (!is_byte_addressable(out_dtype)) {
    return arange(start, end, step, DType::F64).to(out_dtype);
  }
  Tensor t = empty({length}, out_dtype);
  backend_for(t.device(), "arange").fill_arange(t, start, step);
  return t;
}

Tensor linspace(double start, double end, std::int64_t steps, DType dtype) {
  TESSEL_CHECK(steps >= 0, BadShape, "linspace",
               "number of steps must be non-negative, got {}", steps);
  Tensor t = empty({steps}, dtype);
  if (steps > 0)
    backend_for(t.device(), "linspace").fill_linspace(t, start, end);
  return t;
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, DType dtype) {
  const std::int64_t cols = m.value_or(n);
  TESSEL_CHECK(n >= 0 && cols >= 0, BadShape, "eye",
               "extents must be non-negative, got {} x {}", n, cols);
  Tensor t = zeros({n, cols}, dtype);
  const std::int64_t diag = std::min(n, cols);
  if (diag > 0) {
    // The diagonal is a strided view with stride cols + 1.
    Tensor d(t.storage(), {diag}, {cols + 1}, 0, dtype);
    d.fill_(1);
  }
  return t;
}

namespace {

Tensor random_tensor(Shape shape, DType dtype, const char* op) {
  TESSEL_CHECK(is_floating_point(dtype), BadDType, op,
               "expected a floating-point dtype, got {}", dtype_name(dtype));
  return empty(std::move(shape), dtype);
}

}  // namespace

Tensor rand(Shape shape, Generator& generator, DType dtype) {
  Tensor t = random_tensor(std::move(shape), dtype, "rand");
  const auto first = generator.reserve(random_blocks(dtype, t.numel()));
  backend_for(t.device(), "rand").fill_uniform(t, generator, first, 0.0, 1.0);
  return t;
}
Tensor rand(Shape shape, DType dtype) {
  return rand(std::move(shape), default_generator(), dtype);
}

Tensor randn(Shape shape, Generator& generator, DType dtype) {
  Tensor t = random_tensor(std::move(shape), dtype, "randn");
  const auto first = generator.reserve(random_blocks(dtype, t.numel()));
  backend_for(t.device(), "randn").fill_normal(t, generator, first, 0.0, 1.0);
  return t;
}
Tensor randn(Shape shape, DType dtype) {
  return randn(std::move(shape), default_generator(), dtype);
}

Tensor randint(std::int64_t low, std::int64_t high, Shape shape,
               Generator& generator, DType dtype) {
  TESSEL_CHECK(low < high, BadShape, "randint", "empty range [{}, {})", low,
               high);
  TESSEL_CHECK(is_byte_addressable(dtype), BadDType, "randint",
               "dtype {} has no addressable elements", dtype_name(dtype));
  Tensor t = empty(std::move(shape), dtype);
  const auto first = generator.reserve(random_blocks(DType::I64, t.numel()));
  backend_for(t.device(), "randint")
      .fill_randint(t, generator, first, low, high);
  return t;
}
Tensor randint(std::int64_t low, std::int64_t high, Shape shape, DType dtype) {
  return randint(low, high, std::move(shape), default_generator(), dtype);
}

Tensor from_values(const void* values, std::int64_t count, DType dtype,
                   Shape shape) {
  const std::int64_t numel = checked_numel(shape);
  TESSEL_CHECK(numel == count, BadShape, "from_vector",
               "{} values cannot fill shape {} ({} elements)", count,
               shape_string(shape), numel);
  Tensor t = empty(std::move(shape), dtype);
  if (count > 0) {
    TESSEL_CHECK(t.storage().writable(), IoFailure, "from_vector",
                 "the output's memory is read-only");
    backend_for(t.device(), "from_vector")
        .write_host_bytes(t, values, t.nbytes());
  }
  return t;
}

Tensor from_blob(void* data, Shape shape, DType dtype, Strides strides,
                 std::function<void(void*)> deleter, Device device) {
  require_device(device, "from_blob");
  if (strides.empty()) strides = contiguous_strides(shape);
  // The blob must cover the furthest element the strides reach.
  std::int64_t last = 0;
  const std::int64_t numel = checked_numel(shape);
  TESSEL_CHECK(strides.size() == shape.size(), BadShape, "from_blob",
               "shape {} and strides {} differ in rank", shape_string(shape),
               shape_string(strides));
  for (std::size_t i = 0; i < shape.size(); ++i) {
    TESSEL_CHECK(strides[i] >= 0, BadShape, "from_blob",
                 "negative stride {} in {}", strides[i], shape_string(strides));
    if (shape[i] > 0)
      last =
          checked_add(last, checked_mul(shape[i] - 1, strides[i], "from_blob"),
                      "from_blob");
  }
  const std::int64_t bytes =
      numel == 0 ? 0 : bytes_through_element(dtype, last);
  Storage storage = Storage::borrow(data, bytes, device, std::move(deleter));
  return Tensor(std::move(storage), std::move(shape), std::move(strides), 0,
                dtype);
}

}  // namespace tessel

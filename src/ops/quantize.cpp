// Affine quantisation as a composition of element-wise ops: the scales and
// zero points are broadcast to x's shape (per tensor, per channel, per
// group), then divide, round half to even, shift, clamp and cast. The
// shapes are checked first, with a message naming the expected shape.
#include "tessel/ops/quantize.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

struct IntRange {
  double min, max;
};

IntRange range_of(DType dtype, const char* op) {
  switch (dtype) {
    case DType::I8: return {-128, 127};
    case DType::U8: return {0, 255};
    case DType::I16: return {-32768, 32767};
    case DType::U16: return {0, 65535};
    case DType::I4: return {-8, 7};
    case DType::U4: return {0, 15};
    default:
      detail::fail(ErrorCode::BadDType, op,
                   "affine quantisation targets i8, u8, i16, u16, i4 or u4, "
                   "not {}",
                   dtype_name(dtype));
  }
}

using Granularity = AffineGranularity;

// A parameter tensor (scale's shape) broadcast against x's shape.
Tensor spread(const Tensor& param, const Shape& x, const AffineQuantization& p,
              std::int64_t axis) {
  switch (affine_granularity(p)) {
    case Granularity::PerTensor: return param.reshape({});
    case Granularity::PerChannel: {
      Shape s(x.size(), 1);
      s[static_cast<std::size_t>(axis)] = x[static_cast<std::size_t>(axis)];
      return param.reshape(s);
    }
    case Granularity::PerGroup:
      return repeat(param, p.group_size, axis)
          .slice(axis, 0, x[static_cast<std::size_t>(axis)]);
  }
  return param;
}

DType compute_dtype_for(DType t) {
  return t == DType::F64 ? DType::F64 : DType::F32;
}

}  // namespace

AffineGranularity affine_granularity(const AffineQuantization& p) {
  if (p.group_size > 0) return Granularity::PerGroup;
  return p.scale.numel() == 1 && p.scale.rank() <= 1 ? Granularity::PerTensor
                                                     : Granularity::PerChannel;
}

std::string affine_scheme_name(const AffineQuantization& p) {
  const char* granularity = "per_tensor";
  if (p.scale.defined()) {
    switch (affine_granularity(p)) {
      case Granularity::PerTensor: break;
      case Granularity::PerChannel: granularity = "per_channel"; break;
      case Granularity::PerGroup: granularity = "per_group"; break;
    }
  }
  return fmt::format("{}_{}", granularity,
                     p.zero_point.defined() ? "affine" : "symmetric");
}

bool is_affine_quantized_dtype(DType dtype) {
  switch (dtype) {
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::I4:
    case DType::U4: return true;
    default: return false;
  }
}

Shape affine_parameter_shape(const Shape& x, AffineGranularity g,
                             std::int64_t axis, std::int64_t group_size) {
  constexpr const char* op = "affine_parameter_shape";
  switch (g) {
    case Granularity::PerTensor: return Shape{};
    case Granularity::PerChannel: {
      const std::int64_t a =
          normalize_axis(axis, static_cast<std::int64_t>(x.size()), op);
      return Shape{x[static_cast<std::size_t>(a)]};
    }
    case Granularity::PerGroup: {
      TESSEL_CHECK(group_size > 0, BadShape, op,
                   "group_size must be positive, not {}", group_size);
      const std::int64_t a =
          normalize_axis(axis, static_cast<std::int64_t>(x.size()), op);
      Shape s = x;
      auto& n = s[static_cast<std::size_t>(a)];
      n = (n + group_size - 1) / group_size;
      return s;
    }
  }
  return {};
}

std::int64_t check_affine_quantization(const Shape& x,
                                       const AffineQuantization& p,
                                       const char* op) {
  ops::check_defined(op, p.scale, "scale");
  TESSEL_CHECK(p.group_size >= 0, BadShape, op, "group_size {} is negative",
               p.group_size);
  TESSEL_CHECK(is_floating_point(p.scale.dtype()), BadDType, op,
               "scale must be a float tensor, not {}",
               dtype_name(p.scale.dtype()));
  const Granularity g = affine_granularity(p);
  const auto rank = static_cast<std::int64_t>(x.size());
  std::int64_t axis = 0;
  if (g != Granularity::PerTensor) {
    TESSEL_CHECK(rank > 0, BadShape, op,
                 "per-channel and per-group scales need x of rank >= 1");
    axis = normalize_axis(p.axis, rank, op);
  }
  const Shape want = affine_parameter_shape(x, g, axis, p.group_size);
  TESSEL_CHECK(
      g == Granularity::PerTensor || p.scale.shape() == want, BadShape, op,
      "scale of shape {} does not fit x of shape {} {}: expected {}",
      shape_string(p.scale.shape()), shape_string(x),
      g == Granularity::PerGroup
          ? fmt::format("in groups of {} along axis {}", p.group_size, axis)
          : fmt::format("per channel along axis {}", axis),
      shape_string(want));
  if (p.zero_point.defined()) {
    TESSEL_CHECK(is_integral(p.zero_point.dtype()), BadDType, op,
                 "zero_point must be an integer tensor, not {}",
                 dtype_name(p.zero_point.dtype()));
    TESSEL_CHECK(p.zero_point.shape() == p.scale.shape(), BadShape, op,
                 "zero_point of shape {} differs from scale's {}",
                 shape_string(p.zero_point.shape()),
                 shape_string(p.scale.shape()));
  }
  return axis;
}

Tensor quantize_affine(const Tensor& x, DType dtype,
                       const AffineQuantization& p) {
  constexpr const char* op = "quantize_affine";
  const ops::CheckedOperands checked(op, x, "x");
  const IntRange r = range_of(dtype, op);
  const std::int64_t axis = check_affine_quantization(x.shape(), p, op);
  ops::check_operands(op, {&x, &p.scale});
  if (ops::backend_of(p.scale).has_data() && p.scale.numel() > 0) {
    const bool positive =
        all(logical_and(gt(p.scale, 0.0), isfinite(p.scale))).item<bool>();
    TESSEL_CHECK(positive, BadShape, op,
                 "every scale must be positive and finite");
  }
  const DType cd = compute_dtype_for(x.dtype());
  const Tensor s = spread(p.scale, x.shape(), p, axis).to(cd);
  Tensor q = round(div(x.to(cd), s));
  q = where(isnan(q), Scalar(0.0), q);  // NaN lands on the zero point
  if (p.zero_point.defined()) {
    q = add(q, spread(p.zero_point, x.shape(), p, axis).to(cd));
  }
  return clip(q, Scalar(r.min), Scalar(r.max)).to(dtype);
}

Tensor dequantize_affine(const Tensor& q, const AffineQuantization& p,
                         DType dtype) {
  constexpr const char* op = "dequantize_affine";
  const ops::CheckedOperands checked(op, q, "q");
  TESSEL_CHECK(is_integral(q.dtype()), BadDType, op,
               "q must be an integer tensor, not {}", dtype_name(q.dtype()));
  TESSEL_CHECK(is_floating_point(dtype), BadDType, op,
               "the result must be a float dtype, not {}", dtype_name(dtype));
  const std::int64_t axis = check_affine_quantization(q.shape(), p, op);
  const DType cd = compute_dtype_for(dtype);
  Tensor v = q.to(cd);
  if (p.zero_point.defined()) {
    v = sub(v, spread(p.zero_point, q.shape(), p, axis).to(cd));
  }
  return mul(v, spread(p.scale, q.shape(), p, axis).to(cd)).to(dtype);
}

AffineQuantization choose_affine_quantization(const Tensor& x, DType dtype,
                                              const AffineChoice& c) {
  constexpr const char* op = "choose_affine_quantization";
  const ops::CheckedOperands checked(op, x, "x");
  const IntRange r = range_of(dtype, op);
  AffineQuantization p;
  p.group_size = c.group_size;
  TESSEL_CHECK(c.group_size >= 0, BadShape, op, "group_size {} is negative",
               c.group_size);
  // The extremes over each group of elements that will share a scale.
  const Tensor xf = x.to(compute_dtype_for(x.dtype()));
  Tensor lo, hi;
  if (c.group_size > 0 || c.per_channel) {
    TESSEL_CHECK(x.rank() > 0, BadShape, op,
                 "per-channel and per-group scales need x of rank >= 1");
    p.axis = normalize_axis(c.axis, x.rank(), op);
  }
  if (c.group_size > 0) {
    const auto a = static_cast<std::size_t>(p.axis);
    const std::int64_t n = x.shape()[a];
    TESSEL_CHECK(n % c.group_size == 0, BadShape, op,
                 "axis {} of extent {} is not a whole number of groups of {}",
                 p.axis, n, c.group_size);
    Shape grouped = x.shape();
    grouped[a] = n / c.group_size;
    grouped.insert(a + 1, c.group_size);
    const Tensor g = xf.reshape(grouped);
    lo = min(g, {p.axis + 1});
    hi = max(g, {p.axis + 1});
  } else if (c.per_channel) {
    Axes others;
    for (std::int64_t d = 0; d < x.rank(); ++d) {
      if (d != p.axis) others.push_back(d);
    }
    lo = min(xf, others).reshape({x.shape()[static_cast<std::size_t>(p.axis)]});
    hi = max(xf, others).reshape({x.shape()[static_cast<std::size_t>(p.axis)]});
  } else {
    lo = min(xf);
    hi = max(xf);
  }
  // PyTorch's MinMaxObserver: the range always includes 0, and the scale
  // is at least f32's epsilon (an all-zero group gets that scale).
  lo = minimum(lo, 0.0);
  hi = maximum(hi, 0.0);
  const double eps = std::numeric_limits<float>::epsilon();
  if (c.symmetric) {
    const Tensor amax = maximum(neg(lo), hi);
    p.scale = maximum(div(amax, (r.max - r.min) / 2), eps).to(DType::F32);
    if (r.min < 0) return p;
    // Unsigned symmetric: the zero point sits mid-range (PyTorch's 128).
    p.zero_point = full(p.scale.shape(), (r.min + r.max + 1) / 2, DType::I32,
                        p.scale.device());
    return p;
  }
  p.scale = maximum(div(sub(hi, lo), r.max - r.min), eps).to(DType::F32);
  const Tensor zp = sub(Scalar(r.min), round(div(lo, p.scale.to(lo.dtype()))));
  p.zero_point = clip(zp, Scalar(r.min), Scalar(r.max)).to(DType::I32);
  return p;
}

}  // namespace tessel

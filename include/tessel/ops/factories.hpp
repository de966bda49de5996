// Tensor factories (DESIGN §7). New tensors are contiguous and live on the
// calling thread's current device (see DeviceGuard).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "tessel/core/random.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel {

// Uninitialised memory.
Tensor empty(Shape shape, DType dtype = DType::F32);
// On `device` instead of the current one (how ops put their outputs on
// their operands' device).
Tensor empty(Shape shape, DType dtype, Device device);
// Uninitialised page-locked host memory (PyTorch's pin_memory=True): the
// OS never swaps it out, so a device can copy from it asynchronously.
// E3002 when the OS refuses to lock (RLIMIT_MEMLOCK) unless
// `fall_back_to_pageable`; then storage().origin() says which it got.
Tensor empty_pinned(Shape shape, DType dtype = DType::F32,
                    bool fall_back_to_pageable = false);
// A row-major copy of `t` in pinned host memory (t must be on the CPU).
Tensor pin_memory(const Tensor& t, bool fall_back_to_pageable = false);
Tensor zeros(Shape shape, DType dtype = DType::F32);
Tensor zeros(Shape shape, DType dtype, Device device);
Tensor ones(Shape shape, DType dtype = DType::F32);
Tensor ones(Shape shape, DType dtype, Device device);
// The dtype defaults to the value's (bool, i64 or f32).
Tensor full(Shape shape, Scalar value,
            std::optional<DType> dtype = std::nullopt);
Tensor full(Shape shape, Scalar value, DType dtype, Device device);

// [0, end) and [start, end) in steps of `step` (NumPy's length rule). The
// dtype defaults to i64 when every argument is an integer, else f32.
Tensor arange(Scalar end);
Tensor arange(Scalar end, DType dtype);
Tensor arange(Scalar start, Scalar end, Scalar step = 1,
              std::optional<DType> dtype = std::nullopt);
// `steps` values from start to end inclusive.
Tensor linspace(double start, double end, std::int64_t steps,
                DType dtype = DType::F32);
// Ones on the main diagonal of an n x m matrix (m defaults to n).
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt,
           DType dtype = DType::F32);

// Uniform in [0, 1), standard normal, uniform integers in [low, high);
// see Note [random streams] for the exact stream. Float dtypes only for
// rand/randn.
Tensor rand(Shape shape, Generator& generator, DType dtype = DType::F32);
Tensor rand(Shape shape, DType dtype = DType::F32);
Tensor randn(Shape shape, Generator& generator, DType dtype = DType::F32);
Tensor randn(Shape shape, DType dtype = DType::F32);
Tensor randint(std::int64_t low, std::int64_t high, Shape shape,
               Generator& generator, DType dtype = DType::I64);
Tensor randint(std::int64_t low, std::int64_t high, Shape shape,
               DType dtype = DType::I64);

// Copies `count` elements of `dtype` from `values` into a new tensor.
Tensor from_values(const void* values, std::int64_t count, DType dtype,
                   Shape shape);

// A tensor holding a copy of `values`; E2102 when the counts differ.
template <class T>
Tensor from_vector(std::span<const T> values, Shape shape) {
  return from_values(values.data(), static_cast<std::int64_t>(values.size()),
                     dtype_of_v<T>, std::move(shape));
}
template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape) {
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> packs bits; unpack to one bool per element.
    std::vector<std::uint8_t> bytes(values.begin(), values.end());
    return from_values(bytes.data(), static_cast<std::int64_t>(bytes.size()),
                       DType::Bool, std::move(shape));
  } else {
    return from_vector(std::span<const T>(values), std::move(shape));
  }
}
template <class T>
Tensor from_vector(std::initializer_list<T> values, Shape shape) {
  return from_vector(std::span<const T>(values.begin(), values.size()),
                     std::move(shape));
}
// 1-D.
template <class T>
Tensor from_vector(const std::vector<T>& values) {
  return from_vector(values, Shape{static_cast<std::int64_t>(values.size())});
}

// Zero-copy: a tensor over memory owned elsewhere. Empty strides mean
// row-major. `deleter(data)` runs when the last user lets go.
Tensor from_blob(void* data, Shape shape, DType dtype, Strides strides = {},
                 std::function<void(void*)> deleter = {},
                 Device device = Device::cpu());

}  // namespace tessel

// Shared by the element-wise kernel files: compute types, SIMD storage
// mapping and byte strides.
#pragma once

#include <type_traits>

#include "backends/cpu/simd/elementwise_simd.hpp"
#include "backends/kernel_view.hpp"
#include "tessel/core/convert.hpp"

namespace tessel::cpu {

// Narrow floats compute in f32 and round once; every other type computes
// in itself.
template <class T>
using compute_t = std::conditional_t<is_narrow_float_v<T>, float, T>;

template <class T>
constexpr bool has_simd_storage() {
  return std::is_same_v<T, float> || std::is_same_v<T, BFloat16> ||
         std::is_same_v<T, Half>;
}

template <class T>
constexpr simd::FloatStorage simd_storage() {
  if constexpr (std::is_same_v<T, float>)
    return simd::FloatStorage::F32;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return simd::FloatStorage::BF16;
  else
    return simd::FloatStorage::F16;
}

// The SIMD storage of an f32, bf16 or f16 dtype.
inline simd::FloatStorage float_storage(DType dtype) {
  return dtype == DType::F32    ? simd::FloatStorage::F32
         : dtype == DType::BF16 ? simd::FloatStorage::BF16
                                : simd::FloatStorage::F16;
}

// Operand addresses for the strided loop, which walks every operand as a
// char* (operand 0 is written, the rest only read, as in PyTorch's
// TensorIterator). The one place an input's address loses its const.
inline char* base_pointer(const KernelOutput& t) { return t.raw_data(); }
inline char* base_pointer(const KernelInput& t) {
  return const_cast<char*>(t.raw_data());
}

}  // namespace tessel::cpu

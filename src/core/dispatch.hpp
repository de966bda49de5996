// Calls a generic lambda with the C++ element type of a dtype, MLX style:
//   dispatch_element_type(t, [&]<class T>() { ... });
// Packed (i4/u4) and block-quantised dtypes have no element type: E2201.
// Complex dtypes have their own dispatchers below, so that an op's generic
// lambda (comparisons, floor, isnan, ...) is never instantiated for them;
// an op that has no complex kernel answers E2201 naming itself.
#pragma once

#include <complex>
#include <utility>

#include "core/check.hpp"
#include "tessel/core/dtype.hpp"

namespace tessel::detail {

template <class F>
decltype(auto) dispatch_element_type(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Bool: return f.template operator()<bool>();
    case DType::U8: return f.template operator()<std::uint8_t>();
    case DType::I8: return f.template operator()<std::int8_t>();
    case DType::I16: return f.template operator()<std::int16_t>();
    case DType::I32: return f.template operator()<std::int32_t>();
    case DType::I64: return f.template operator()<std::int64_t>();
    case DType::U16: return f.template operator()<std::uint16_t>();
    case DType::U32: return f.template operator()<std::uint32_t>();
    case DType::U64: return f.template operator()<std::uint64_t>();
    case DType::F16: return f.template operator()<Half>();
    case DType::BF16: return f.template operator()<BFloat16>();
    case DType::F32: return f.template operator()<float>();
    case DType::F64: return f.template operator()<double>();
    case DType::F8E4M3FN: return f.template operator()<Float8E4M3FN>();
    case DType::F8E5M2: return f.template operator()<Float8E5M2>();
    default: break;
  }
  if (is_complex(t)) {
    fail(ErrorCode::BadDType, op, "is not defined for complex tensors ({})",
         dtype_name(t));
  }
  fail(ErrorCode::BadDType, op,
       "dtype {} has no addressable element type (packed or block-quantised)",
       dtype_name(t));
}

// The complex types (std::complex<float> for c64, <double> for c128).
template <class F>
decltype(auto) dispatch_complex_type(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::C64: return f.template operator()<std::complex<float>>();
    case DType::C128: return f.template operator()<std::complex<double>>();
    default: break;
  }
  fail(ErrorCode::BadDType, op, "expected a complex dtype, got {}",
       dtype_name(t));
}

// Every dtype with an element type, complex included: for the kernels that
// only move, convert or print values.
template <class F>
decltype(auto) dispatch_any_element_type(DType t, const char* op, F&& f) {
  if (is_complex(t)) return dispatch_complex_type(t, op, std::forward<F>(f));
  return dispatch_element_type(t, op, std::forward<F>(f));
}

// The floating-point subset.
template <class F>
decltype(auto) dispatch_float_type(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::F16: return f.template operator()<Half>();
    case DType::BF16: return f.template operator()<BFloat16>();
    case DType::F32: return f.template operator()<float>();
    case DType::F64: return f.template operator()<double>();
    case DType::F8E4M3FN: return f.template operator()<Float8E4M3FN>();
    case DType::F8E5M2: return f.template operator()<Float8E5M2>();
    default: break;
  }
  fail(ErrorCode::BadDType, op, "expected a floating-point dtype, got {}",
       dtype_name(t));
}

}  // namespace tessel::detail

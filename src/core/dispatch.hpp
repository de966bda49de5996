// Calls a generic lambda with the C++ element type of a dtype, MLX style:
//   dispatch_element_type(t, [&]<class T>() { ... });
// Packed (i4/u4) and block-quantised dtypes have no element type: E2201.
#pragma once

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
  fail(ErrorCode::BadDType, op,
       "dtype {} has no addressable element type (packed or block-quantised)",
       dtype_name(t));
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

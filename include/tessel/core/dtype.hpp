// Every dtype of DESIGN §1 with one traits record each. The list below is
// the single source: the enum, the names and the traits table come from it.
#pragma once

#include <complex>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "tessel/core/float_types.hpp"

namespace tessel {

// X(enum, name, kind, bits per element, elements per block, bytes per block)
// The complex types come last so that adding them kept every older enum
// value; c64 is two f32 (real, imaginary), as std::complex<float>.
// bits is 0 for block-quantised types; bytes per block is 0 for the packed
// sub-byte integers (two elements share a byte, low nibble first).
#define TESSEL_FOR_EACH_DTYPE(X)               \
  X(Bool, "bool", Bool, 8, 1, 1)               \
  X(U8, "u8", UInt, 8, 1, 1)                   \
  X(I8, "i8", Int, 8, 1, 1)                    \
  X(I16, "i16", Int, 16, 1, 2)                 \
  X(I32, "i32", Int, 32, 1, 4)                 \
  X(I64, "i64", Int, 64, 1, 8)                 \
  X(U16, "u16", UInt, 16, 1, 2)                \
  X(U32, "u32", UInt, 32, 1, 4)                \
  X(U64, "u64", UInt, 64, 1, 8)                \
  X(F16, "f16", Float, 16, 1, 2)               \
  X(BF16, "bf16", Float, 16, 1, 2)             \
  X(F32, "f32", Float, 32, 1, 4)               \
  X(F64, "f64", Float, 64, 1, 8)               \
  X(F8E4M3FN, "f8_e4m3fn", Float, 8, 1, 1)     \
  X(F8E5M2, "f8_e5m2", Float, 8, 1, 1)         \
  X(I4, "i4", Int, 4, 1, 0)                    \
  X(U4, "u4", UInt, 4, 1, 0)                   \
  X(Q4_0, "q4_0", Quantized, 0, 32, 18)        \
  X(Q4_1, "q4_1", Quantized, 0, 32, 20)        \
  X(Q5_0, "q5_0", Quantized, 0, 32, 22)        \
  X(Q5_1, "q5_1", Quantized, 0, 32, 24)        \
  X(Q8_0, "q8_0", Quantized, 0, 32, 34)        \
  X(Q2_K, "q2_k", Quantized, 0, 256, 84)       \
  X(Q3_K, "q3_k", Quantized, 0, 256, 110)      \
  X(Q4_K, "q4_k", Quantized, 0, 256, 144)      \
  X(Q5_K, "q5_k", Quantized, 0, 256, 176)      \
  X(Q6_K, "q6_k", Quantized, 0, 256, 210)      \
  X(Q8_K, "q8_k", Quantized, 0, 256, 292)      \
  X(Q8_1, "q8_1", Quantized, 0, 32, 36)        \
  X(IQ2_XXS, "iq2_xxs", Quantized, 0, 256, 66) \
  X(IQ2_XS, "iq2_xs", Quantized, 0, 256, 74)   \
  X(IQ2_S, "iq2_s", Quantized, 0, 256, 82)     \
  X(IQ3_XXS, "iq3_xxs", Quantized, 0, 256, 98) \
  X(IQ3_S, "iq3_s", Quantized, 0, 256, 110)    \
  X(IQ1_S, "iq1_s", Quantized, 0, 256, 50)     \
  X(IQ1_M, "iq1_m", Quantized, 0, 256, 56)     \
  X(IQ4_NL, "iq4_nl", Quantized, 0, 32, 18)    \
  X(IQ4_XS, "iq4_xs", Quantized, 0, 256, 136)  \
  X(TQ1_0, "tq1_0", Quantized, 0, 256, 54)     \
  X(TQ2_0, "tq2_0", Quantized, 0, 256, 66)     \
  X(MXFP4, "mxfp4", Quantized, 0, 32, 17)      \
  X(C64, "c64", Complex, 64, 1, 8)             \
  X(C128, "c128", Complex, 128, 1, 16)

enum class DType : std::uint8_t {
#define TESSEL_DTYPE_ENUM(e, name, kind, bits, block, bytes) e,
  TESSEL_FOR_EACH_DTYPE(TESSEL_DTYPE_ENUM)
#undef TESSEL_DTYPE_ENUM
};

inline constexpr int kNumDTypes = 0
#define TESSEL_DTYPE_COUNT(e, name, kind, bits, block, bytes) +1
    TESSEL_FOR_EACH_DTYPE(TESSEL_DTYPE_COUNT)
#undef TESSEL_DTYPE_COUNT
    ;

enum class DTypeKind : std::uint8_t {
  Bool,
  UInt,
  Int,
  Float,
  Quantized,
  Complex
};

struct DTypeTraits {
  DType dtype;
  std::string_view name;
  DTypeKind kind;
  int bits;         // storage bits of one element; 0 for block types
  int block_size;   // elements per block (1 unless block-quantised)
  int block_bytes;  // bytes per block; 0 for packed sub-byte integers
};

inline constexpr DTypeTraits kDTypeTraits[] = {
#define TESSEL_DTYPE_TRAITS(e, name, kind, bits, block, bytes) \
  {DType::e, name, DTypeKind::kind, bits, block, bytes},
    TESSEL_FOR_EACH_DTYPE(TESSEL_DTYPE_TRAITS)
#undef TESSEL_DTYPE_TRAITS
};

constexpr const DTypeTraits& dtype_traits(DType t) {
  return kDTypeTraits[static_cast<int>(t)];
}
constexpr std::string_view dtype_name(DType t) { return dtype_traits(t).name; }

// Parses "f32" and the usual NumPy/PyTorch spellings ("float32", "half",
// "bfloat16", "int8", "float8_e4m3fn", ...); E2201 when unknown.
DType parse_dtype(std::string_view name);

// Real floating point only, as PyTorch's is_floating_point: complex types
// answer is_complex.
constexpr bool is_floating_point(DType t) {
  return dtype_traits(t).kind == DTypeKind::Float;
}
constexpr bool is_complex(DType t) {
  return dtype_traits(t).kind == DTypeKind::Complex;
}
// The dtype of one component of a complex type (c64 -> f32, c128 -> f64);
// any other dtype is its own.
constexpr DType complex_component_type(DType t) {
  return t == DType::C64 ? DType::F32 : t == DType::C128 ? DType::F64 : t;
}
// The complex type whose components hold a value of dtype t: c128 for f64
// and c128, c64 for everything else (f32 being the default float).
constexpr DType complex_type_for(DType t) {
  return t == DType::F64 || t == DType::C128 ? DType::C128 : DType::C64;
}
constexpr bool is_integral(DType t) {
  const auto k = dtype_traits(t).kind;
  return k == DTypeKind::Int || k == DTypeKind::UInt;
}
constexpr bool is_signed(DType t) {
  const auto k = dtype_traits(t).kind;
  return k == DTypeKind::Int || k == DTypeKind::Float ||
         k == DTypeKind::Complex;
}
constexpr bool is_block_quantized(DType t) {
  return dtype_traits(t).kind == DTypeKind::Quantized;
}
// i4/u4: two elements per byte, no addressable element.
constexpr bool is_packed(DType t) { return dtype_traits(t).bits == 4; }
// Every element has its own whole bytes (not packed, not block-quantised).
constexpr bool is_byte_addressable(DType t) {
  return dtype_traits(t).bits >= 8;
}
// Bytes of one element of a byte-addressable dtype.
constexpr int element_size(DType t) { return dtype_traits(t).bits / 8; }

// Bytes that `numel` contiguous elements occupy (packed types round up to
// whole bytes). E2303 on overflow; E2102 when a block type's count is not a
// whole number of blocks.
std::int64_t storage_bytes(DType t, std::int64_t numel);

// Bytes from the start of a buffer through the element at element offset
// `last` (its whole block for block types, its byte for packed types).
std::int64_t bytes_through_element(DType t, std::int64_t last);

// The result dtype of a binary op on tensors of dtypes a and b (DESIGN §1):
// a complex operand makes the result complex, c128 when either side holds
// f64 precision (c64 with f64 is c128, as NumPy and the array API);
// f64 wins, then f32; two different floats of 16 bits or fewer give f32;
// i8 with i8 gives i16; other integers follow the Python array-API lattice;
// i4/u4 and block types count as f32; integers and bool yield to floats.
// u64 with a signed integer has no lattice type: E2201 naming `op`.
DType promote_types(DType a, DType b, const char* op = "promote_types");

// The dtype an op that needs floats computes in for an input of dtype t:
// t itself for floats and complex, f32 for everything else (PyTorch's
// default float).
DType float_result_type(DType t);

// The DType of a C++ element type (bool, std::int32_t, float, Half, ...).
template <class T>
struct dtype_of;
#define TESSEL_DTYPE_OF(T, e)                \
  template <>                                \
  struct dtype_of<T> {                       \
    static constexpr DType value = DType::e; \
  };
TESSEL_DTYPE_OF(bool, Bool)
TESSEL_DTYPE_OF(std::uint8_t, U8)
TESSEL_DTYPE_OF(std::int8_t, I8)
TESSEL_DTYPE_OF(std::int16_t, I16)
TESSEL_DTYPE_OF(std::int32_t, I32)
TESSEL_DTYPE_OF(std::int64_t, I64)
TESSEL_DTYPE_OF(std::uint16_t, U16)
TESSEL_DTYPE_OF(std::uint32_t, U32)
TESSEL_DTYPE_OF(std::uint64_t, U64)
TESSEL_DTYPE_OF(Half, F16)
TESSEL_DTYPE_OF(BFloat16, BF16)
TESSEL_DTYPE_OF(float, F32)
TESSEL_DTYPE_OF(double, F64)
TESSEL_DTYPE_OF(Float8E4M3FN, F8E4M3FN)
TESSEL_DTYPE_OF(Float8E5M2, F8E5M2)
TESSEL_DTYPE_OF(std::complex<float>, C64)
TESSEL_DTYPE_OF(std::complex<double>, C128)
#undef TESSEL_DTYPE_OF
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

std::ostream& operator<<(std::ostream& os, DType t);

}  // namespace tessel

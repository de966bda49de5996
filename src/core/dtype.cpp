#include "tessel/core/dtype.hpp"

#include <fmt/format.h>

#include <array>
#include <ostream>
#include <utility>

#include "core/check.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

namespace {

// Table-driven sanity of the X-macro rows against the GGUF block layouts
// (FORMATS.md §2) and the enum order.
constexpr bool traits_consistent() {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (static_cast<int>(kDTypeTraits[i].dtype) != i) return false;
  }
  return dtype_traits(DType::Q4_0).block_bytes == 18 &&
         dtype_traits(DType::Q8_0).block_bytes == 34 &&
         dtype_traits(DType::Q4_K).block_bytes == 144 &&
         dtype_traits(DType::Q8_K).block_bytes == 292;
}
static_assert(traits_consistent());

constexpr std::pair<std::string_view, DType> kAliases[] = {
    {"bool", DType::Bool},
    {"uint8", DType::U8},
    {"int8", DType::I8},
    {"int16", DType::I16},
    {"short", DType::I16},
    {"int32", DType::I32},
    {"int", DType::I32},
    {"int64", DType::I64},
    {"long", DType::I64},
    {"uint16", DType::U16},
    {"uint32", DType::U32},
    {"uint64", DType::U64},
    {"float16", DType::F16},
    {"half", DType::F16},
    {"fp16", DType::F16},
    {"bfloat16", DType::BF16},
    {"float32", DType::F32},
    {"float", DType::F32},
    {"fp32", DType::F32},
    {"float64", DType::F64},
    {"double", DType::F64},
    {"fp64", DType::F64},
    {"float8_e4m3fn", DType::F8E4M3FN},
    {"f8e4m3fn", DType::F8E4M3FN},
    {"e4m3fn", DType::F8E4M3FN},
    {"float8_e5m2", DType::F8E5M2},
    {"f8e5m2", DType::F8E5M2},
    {"e5m2", DType::F8E5M2},
    {"int4", DType::I4},
    {"uint4", DType::U4},
    {"complex64", DType::C64},
    {"cfloat", DType::C64},
    {"complex128", DType::C128},
    {"cdouble", DType::C128},
};

}  // namespace

DType parse_dtype(std::string_view name) {
  for (const auto& t : kDTypeTraits) {
    if (t.name == name) return t.dtype;
  }
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == name) return dtype;
  }
  std::array<std::string_view, kNumDTypes> names{};
  for (int i = 0; i < kNumDTypes; ++i) names[i] = kDTypeTraits[i].name;
  detail::fail(ErrorCode::BadDType, "parse_dtype",
               "unknown dtype '{}'; known: {}", name, fmt::join(names, ", "));
}

std::int64_t storage_bytes(DType t, std::int64_t numel) {
  const auto& tr = dtype_traits(t);
  if (tr.kind == DTypeKind::Quantized) {
    TESSEL_CHECK(numel % tr.block_size == 0, BadShape, "storage_bytes",
                 "{} elements are not a whole number of {} blocks of {}", numel,
                 tr.name, tr.block_size);
    return checked_mul(numel / tr.block_size, tr.block_bytes, "storage_bytes");
  }
  if (tr.bits == 4) return numel / 2 + numel % 2;
  return checked_mul(numel, tr.bits / 8, "storage_bytes");
}

std::int64_t bytes_through_element(DType t, std::int64_t last) {
  const auto& tr = dtype_traits(t);
  if (tr.kind == DTypeKind::Quantized) {
    return checked_mul(last / tr.block_size + 1, tr.block_bytes,
                       "storage_bytes");
  }
  if (tr.bits == 4) return last / 2 + 1;
  return checked_mul(checked_add(last, 1, "storage_bytes"), tr.bits / 8,
                     "storage_bytes");
}

namespace {

// Integers of the array-API lattice: signedness and width in bits.
int int_bits(DType t) { return dtype_traits(t).bits; }

DType signed_of_bits(int bits) {
  switch (bits) {
    case 8: return DType::I8;
    case 16: return DType::I16;
    case 32: return DType::I32;
    default: return DType::I64;
  }
}

DType unsigned_of_bits(int bits) {
  switch (bits) {
    case 8: return DType::U8;
    case 16: return DType::U16;
    case 32: return DType::U32;
    default: return DType::U64;
  }
}

}  // namespace

DType promote_types(DType a, DType b, const char* op) {
  // Rule 4: packed and block-quantised operands count as f32.
  if (!is_byte_addressable(a)) a = DType::F32;
  if (!is_byte_addressable(b)) b = DType::F32;
  if (is_complex(a) || is_complex(b)) {
    const DType real =
        promote_types(complex_component_type(a), complex_component_type(b), op);
    return complex_type_for(real);
  }
  // Rule 3's exception: i8 arithmetic widens so that it cannot silently wrap.
  if (a == DType::I8 && b == DType::I8) return DType::I16;
  if (a == b) return a;
  const bool fa = is_floating_point(a);
  const bool fb = is_floating_point(b);
  if (fa && fb) {
    if (a == DType::F64 || b == DType::F64) return DType::F64;
    return DType::F32;  // f32 with another float, or two narrow floats
  }
  if (fa) return a;  // integer or bool with a float: the float
  if (fb) return b;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool sa = is_signed(a);
  const bool sb = is_signed(b);
  if (sa == sb) {
    const int bits = std::max(int_bits(a), int_bits(b));
    return sa ? signed_of_bits(bits) : unsigned_of_bits(bits);
  }
  const DType s = sa ? a : b;
  const DType u = sa ? b : a;
  TESSEL_CHECK(u != DType::U64, BadDType, op,
               "{} and {} have no common integer type (u64 with a signed "
               "integer); cast one of them first",
               dtype_name(a), dtype_name(b));
  // A signed type wide enough for every value of the unsigned one.
  return signed_of_bits(std::max(int_bits(s), 2 * int_bits(u)));
}

DType float_result_type(DType t) {
  return is_floating_point(t) || is_complex(t) ? t : DType::F32;
}

std::ostream& operator<<(std::ostream& os, DType t) {
  return os << dtype_name(t);
}

}  // namespace tessel

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

std::ostream& operator<<(std::ostream& os, DType t) {
  return os << dtype_name(t);
}

}  // namespace tessel

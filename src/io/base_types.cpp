#include "io/base_types.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <utility>

#include "tessel/core/error.hpp"

namespace tessel::io {

namespace {

// Base types where they differ from the upper-cased tessel name.
constexpr std::pair<DType, std::string_view> kBaseTypes[] = {
    {DType::Bool, "BOOL"},
    {DType::U8, "UINT8"},
    {DType::I8, "INT8"},
    {DType::I16, "INT16"},
    {DType::I32, "INT32"},
    {DType::I64, "INT64"},
    {DType::U16, "UINT16"},
    {DType::U32, "UINT32"},
    {DType::U64, "UINT64"},
    {DType::F16, "FLOAT16"},
    {DType::BF16, "BFLOAT16"},
    {DType::F32, "FLOAT32"},
    {DType::F64, "FLOAT64"},
    {DType::F8E4M3FN, "FLOAT8_E4M3FN"},
    {DType::F8E5M2, "FLOAT8_E5M2"},
    {DType::I4, "INT4"},
    {DType::U4, "UINT4"},
    {DType::C64, "COMPLEX64"},
    {DType::C128, "COMPLEX128"},
};

}  // namespace

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string base_type(DType d) {
  for (const auto& [dtype, name] : kBaseTypes) {
    if (dtype == d) return std::string(name);
  }
  return upper(dtype_name(d));  // the GGUF block types: Q4_0, Q6_K, ...
}

std::pair<std::int64_t, std::int64_t> int_range(DType d) {
  switch (d) {
    case DType::I4: return {-8, 7};
    case DType::U4: return {0, 15};
    case DType::I8: return {-128, 127};
    case DType::U8: return {0, 255};
    case DType::I16: return {-32768, 32767};
    case DType::U16: return {0, 65535};
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::U32: return {0, UINT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

DType parse_base_type(const std::string& name, const std::string& field) {
  const std::string u = upper(name);
  for (const auto& [dtype, standard] : kBaseTypes) {
    if (standard == u) return dtype;
  }
  std::string lower(name);
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  try {
    return parse_dtype(lower);  // "f32", "float32", "q4_0", ...
  } catch (const Error&) {
    throw FormatError(
        ErrorCode::MalformedFile,
        fmt::format("[descriptor] field '{}': unknown type '{}'", field, name));
  }
}

}  // namespace tessel::io

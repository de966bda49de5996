// The format standard's (WIA-AI-011) names of element types — FLOAT32,
// BFLOAT16, INT4, Q4_0, ... — shared by the dense and sparse descriptors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "tessel/core/dtype.hpp"

namespace tessel::io {

std::string upper(std::string_view s);
// "FLOAT32" for f32; the GGUF block types as "Q4_0", "Q6_K".
std::string base_type(DType d);
// The standard's names, and tessel/NumPy/PyTorch spellings ("f32",
// "float32"); E3001 naming `field` for anything else.
DType parse_base_type(const std::string& name, const std::string& field);
// The values an integer dtype holds, as [min, max] (i4 and u4 included;
// i64 and u64 give the i64 range).
std::pair<std::int64_t, std::int64_t> int_range(DType d);

}  // namespace tessel::io

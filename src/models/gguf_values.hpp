// GGUF metadata values as the models' writers make them (gguf_model.cpp,
// the tokenizer keys): one checked u32 for every integer key they write.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/check.hpp"
#include "tessel/io/gguf.hpp"

namespace tessel {

// `value` as the u32 of metadata key `key`: E4001 naming the key when it
// does not fit (negative, or 2^32 and more), never truncated.
inline GgufValue gguf_u32(std::string_view key, std::int64_t value) {
  TESSEL_CHECK(value >= 0 && value <= std::int64_t{UINT32_MAX}, BadConfig,
               "GGUF metadata",
               "'{}' is {}, which a u32 key cannot hold (0 to {})", key, value,
               UINT32_MAX);
  return {GgufValue::Type::U32, GgufValue::Type::U8,
          static_cast<std::uint64_t>(value)};
}

}  // namespace tessel

// UTF-8 validation, shared by the file readers (names and keys must be
// UTF-8 by the GGUF and safetensors specs) and the tokenisers.
#pragma once

#include <cstddef>
#include <string_view>

namespace tessel::detail {

// Length of the valid sequence at `pos`, or of its maximal invalid subpart
// (negated): the longest prefix that could still start a valid sequence,
// at least one byte.
int utf8_valid_or_subpart(std::string_view s, std::size_t pos);

// The offset of the first byte that does not begin a valid, shortest-form
// UTF-8 sequence of a scalar value, or npos when `text` is valid.
std::size_t utf8_invalid_offset(std::string_view text);

}  // namespace tessel::detail

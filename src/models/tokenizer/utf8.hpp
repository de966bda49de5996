// UTF-8 helpers of the tokenisers: validation (texts are checked once, so
// the regexes can skip PCRE2's own check), code point decoding and the
// lossy conversion that decoders apply to byte sequences.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.hpp"

namespace tessel::tok {

// Bytes of the UTF-8 sequence that `lead` starts (1 for a stray byte).
inline int utf8_sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

using detail::utf8_invalid_offset;

// The code point at `pos` of valid UTF-8; `pos` moves past it.
std::uint32_t utf8_next(std::string_view text, std::size_t& pos);

void utf8_append(std::string& out, std::uint32_t cp);

// Rust's String::from_utf8_lossy (what HF decoders return): every maximal
// invalid subpart becomes U+FFFD, as Unicode §3.9 recommends.
std::string utf8_lossy(std::string_view bytes);

// Unicode's White_Space property (what Rust's char::is_whitespace and the
// `regex` crate's \s test).
bool is_unicode_white_space(std::uint32_t cp);

}  // namespace tessel::tok

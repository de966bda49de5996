// GPT-2's byte-level alphabet: every byte is shown as one printable code
// point (printable Latin-1 bytes as themselves, the other 68 as U+0100 +
// their rank), so a byte-level vocabulary is a vocabulary of UTF-8 strings.
// tessel keeps pieces as raw bytes and maps only at the vocabulary's edge.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel::tok {

// The code point that shows byte `b`.
std::uint32_t byte_level_char(unsigned char b);

// The byte that code point `cp` shows, or -1 outside the alphabet.
int byte_level_byte(std::uint32_t cp);

// Appends the bytes that a byte-level token string shows; false (and
// `out` unchanged) when a character lies outside the alphabet.
bool byte_level_decode(std::string_view token, std::string& out);

// The byte-level string of raw bytes (what the vocabulary holds).
std::string byte_level_encode(std::string_view bytes);

}  // namespace tessel::tok

#include "core/utf8.hpp"

namespace tessel::detail {

int utf8_valid_or_subpart(std::string_view s, std::size_t pos) {
  const auto b = [&](std::size_t i) {
    return static_cast<unsigned char>(s[pos + i]);
  };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  int n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int i = 1; i < n; ++i) {
    if (pos + i >= s.size()) return -i;
    const unsigned char x = b(i);
    const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (x < l || x > h) return -i;
  }
  return n;
}

std::size_t utf8_invalid_offset(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    // ASCII runs are the common case.
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int n = utf8_valid_or_subpart(text, pos);
    if (n < 0) return pos;
    pos += static_cast<std::size_t>(n);
  }
  return std::string_view::npos;
}

}  // namespace tessel::detail

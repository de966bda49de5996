#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

std::uint32_t utf8_next(std::string_view text, std::size_t& pos) {
  const auto c = static_cast<unsigned char>(text[pos]);
  const int n = utf8_sequence_length(c);
  std::uint32_t cp = n == 1   ? c
                     : n == 2 ? c & 0x1Fu
                     : n == 3 ? c & 0x0Fu
                              : c & 0x07u;
  for (int i = 1; i < n && pos + i < text.size(); ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3Fu);
  }
  pos += static_cast<std::size_t>(n);
  return cp;
}

void utf8_append(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const int n = detail::utf8_valid_or_subpart(bytes, pos);
    if (n > 0) {
      out.append(bytes.substr(pos, static_cast<std::size_t>(n)));
      pos += static_cast<std::size_t>(n);
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD
      pos += static_cast<std::size_t>(-n);
    }
  }
  return out;
}

bool is_unicode_white_space(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace tessel::tok

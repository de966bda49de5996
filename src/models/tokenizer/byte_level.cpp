#include "models/tokenizer/byte_level.hpp"

#include <array>

#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

struct Alphabet {
  std::array<std::uint32_t, 256> to_char{};
  std::array<std::int16_t, 324> to_byte{};  // code points < 256 + 68

  Alphabet() {
    to_byte.fill(-1);
    // bytes_to_unicode() of GPT-2's encoder.py: '!'..'~', '¡'..'¬' and
    // '®'..'ÿ' show themselves; the rest take 256, 257, ... in byte order.
    std::uint32_t next = 256;
    for (std::uint32_t b = 0; b < 256; ++b) {
      const bool shown = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                         (b >= 0xAE && b <= 0xFF);
      to_char[b] = shown ? b : next++;
      to_byte[to_char[b]] = static_cast<std::int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

std::uint32_t byte_level_char(unsigned char b) { return alphabet().to_char[b]; }

int byte_level_byte(std::uint32_t cp) {
  const auto& a = alphabet();
  return cp < a.to_byte.size() ? a.to_byte[cp] : -1;
}

bool byte_level_decode(std::string_view token, std::string& out) {
  const std::size_t old = out.size();
  std::size_t pos = 0;
  while (pos < token.size()) {
    const int b = byte_level_byte(utf8_next(token, pos));
    if (b < 0) {
      out.resize(old);
      return false;
    }
    out.push_back(static_cast<char>(b));
  }
  return true;
}

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    utf8_append(out, byte_level_char(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace tessel::tok

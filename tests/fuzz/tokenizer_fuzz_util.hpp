// Helpers shared by the tokenizer fuzz targets: a loaded tokenizer encodes a
// few fixed texts and decodes the ids, so that hostile vocabularies, merges
// and pre-tokeniser patterns reach the encode and decode paths.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::fuzz {

inline void exercise(const Tokenizer& t) {
  static constexpr std::array<std::string_view, 6> kTexts = {
      "Hello, world! It's 2024: 12345 tokens\n\n  spaced  out\t.",
      "na\xC3\xAFve caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
      "\xF0\x9F\x98\x80\xF0\x9F\x91\x8D \xE2\x96\x81x \xC2\xA0 \xE1\xA0\x8E",
      "<s>[INST] <|endoftext|><|im_start|>user\n<unk></s><pad>"
      "<|begin_of_text|><0x41> [/INST]",
      "",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "   \r\n\r\n 'S 'll 'VE x\xCC\x81y\xE2\x80\x8D 1 22 333 4444 $$$ !!! ",
  };
  for (const std::string_view text : kTexts) {
    for (const bool special : {true, false}) {
      try {
        const std::vector<TokenId> ids = t.encode(text, special, special);
        (void)t.decode(ids, !special);
        for (const TokenId id : ids) (void)t.token_to_piece(id);
      } catch (const Error&) {
      }
    }
  }
  // Every id decodes (or is refused), the ends of the vocabulary included.
  const std::int64_t n = t.vocab_size();
  for (const std::int64_t id : {std::int64_t{0}, n - 1, n, std::int64_t{-1}}) {
    try {
      const TokenId one = static_cast<TokenId>(id);
      (void)t.decode(std::span<const TokenId>(&one, 1));
      (void)t.is_special(one);
    } catch (const Error&) {
    }
  }
}

}  // namespace tessel::fuzz

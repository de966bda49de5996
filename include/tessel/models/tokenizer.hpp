// The byte-level tokeniser: token i is byte i (vocabulary 256), so any
// text or binary file trains without a vocabulary file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

class ByteTokenizer {
 public:
  static constexpr std::int64_t kVocabSize = 256;
  std::vector<std::int64_t> encode(std::string_view text) const;
  // E2302 for an id outside [0, 256).
  std::string decode(const std::vector<std::int64_t>& ids) const;
};

}  // namespace tessel

// tokenizer.json's normalisers that the byte-level and SentencePiece-style
// families use: the Unicode forms (NFC for Qwen2; by utf8proc, since PCRE2
// does not normalise), Prepend, Replace of a literal string, and Sequence.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::tok {

class Normalizer {
 public:
  // A null or absent normaliser is the identity. E3001 naming `field` for
  // a malformed one or a type tessel does not implement.
  static Normalizer from_json(const nlohmann::json& spec,
                              const std::string& field);

  bool empty() const { return steps_.empty(); }
  // `text` normalised, into `out` (replaced).
  void apply(std::string_view text, std::string& out) const;

 private:
  enum class Kind { Nfc, Nfd, Nfkc, Nfkd, Prepend, Replace };
  struct Step {
    Kind kind;
    std::string pattern, content;  // Prepend: content; Replace: both
  };
  void add(const nlohmann::json& spec, const std::string& field);
  std::vector<Step> steps_;
};

}  // namespace tessel::tok

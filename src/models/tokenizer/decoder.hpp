// tokenizer.json's decoders: turning the token strings of a decode back
// into text. ByteLevel (GPT-2's alphabet back to bytes), and the chain the
// SentencePiece-style BPE files use: Replace, ByteFallback, Fuse, Strip.
// As in tokenizers, each step maps the list of strings to a new list, and
// the result is their concatenation.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace tessel::tok {

class Decoder {
 public:
  // A null decoder joins the tokens with spaces (as tokenizers does).
  static Decoder from_json(const nlohmann::json& spec,
                           const std::string& field);
  std::string decode(std::vector<std::string> tokens) const;

 private:
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip };
  struct Step {
    Kind kind;
    std::string pattern, content;     // Replace; Strip: content
    std::size_t start = 0, stop = 0;  // Strip
  };
  void add(const nlohmann::json& spec, const std::string& field);
  std::vector<Step> steps_;
  bool none_ = true;
};

}  // namespace tessel::tok

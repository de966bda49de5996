// Finding added and special tokens inside a text, before any other step,
// in the two ways the peers do it:
// - tokenizers' AddedVocabulary: one leftmost-longest scan over all
//   patterns; a match may widen over the whitespace around it (lstrip,
//   rstrip) or be dropped when it is not a whole word (single_word);
// - llama.cpp's partition: the longest token first, every occurrence in
//   every remaining piece of text, then the next token.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "models/tokenizer/vocab.hpp"

namespace tessel::tok {

struct AddedToken {
  std::string content;
  Id id = -1;
  bool special = false;
  bool single_word = false, lstrip = false, rstrip = false;
  bool normalized = false;  // matched against the normalised text
};

// A piece of the text: [begin, end) and the token it is, or -1 for text
// still to be tokenised.
struct Segment {
  std::size_t begin = 0, end = 0;
  Id token = -1;
};

class LeftmostLongestMatcher {
 public:
  LeftmostLongestMatcher() = default;
  // `patterns[i]` is what token `tokens[i]` matches (its content, or its
  // normalised content). Empty patterns are ignored.
  LeftmostLongestMatcher(const std::vector<std::string>& patterns,
                         std::vector<const AddedToken*> tokens);
  bool empty() const { return tokens_.empty(); }
  // Appends the segments that tile `text`. With `parse_special` false,
  // special tokens are found but left as text (tokenizers'
  // encode_special_tokens).
  void split(std::string_view text, bool parse_special,
             std::vector<Segment>& out) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::int32_t>> next;
    std::int32_t match = -1;  // index into tokens_
  };
  std::vector<Node> nodes_;
  std::vector<const AddedToken*> tokens_;
  bool first_byte_[256] = {};
};

class LongestFirstPartition {
 public:
  LongestFirstPartition() = default;
  // `special[i]`: token i is control or unknown (skipped without
  // parse_special); user-defined tokens are always split out.
  LongestFirstPartition(const Vocab& vocab, std::vector<Id> ids,
                        std::vector<bool> special);
  void split(std::string_view text, bool parse_special,
             std::vector<Segment>& out) const;

 private:
  const Vocab* vocab_ = nullptr;
  std::vector<Id> ids_;  // longest text first
  std::vector<bool> special_;
};

}  // namespace tessel::tok

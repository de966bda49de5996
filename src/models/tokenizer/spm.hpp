// llama.cpp's SentencePiece-BPE ("llama" vocabularies in GGUF): the text's
// UTF-8 characters are merged pairwise, highest token score first (the
// leftmost among equal scores), whenever the joined text is a token; a
// final piece that is no token is split back along the merges that built
// it, and characters no token covers become byte tokens <0xXX>.
#pragma once

#include <string_view>
#include <vector>

#include "models/tokenizer/vocab.hpp"

namespace tessel::tok {

class SpmModel {
 public:
  // `scores` by id (the vocabulary's size).
  SpmModel(const Vocab& vocab, std::vector<float> scores);
  // Appends the ids of `text` (spaces already shown as U+2581).
  void encode(std::string_view text, std::vector<Id>& out) const;

 private:
  Id byte_token(unsigned char b) const;
  const Vocab& vocab_;
  std::vector<float> scores_;
};

}  // namespace tessel::tok

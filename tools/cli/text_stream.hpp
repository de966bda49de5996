// Text of tokens as they are generated. A token's text depends on its
// neighbours (a character's bytes split over tokens, SentencePiece's
// leading space dropped at the start of a text, lossy UTF-8), so each new
// token is decoded together with the tokens before it and only the text
// that grew is handed out; an incomplete UTF-8 sequence (or a U+FFFD a
// lossy decoder put in its place) at the end is held back until the next
// token completes it or the stream ends. The pieces handed out join to the
// decoding of the whole sequence minus that of the prompt.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::cli {

// The length of the longest prefix of `text` that does not end inside a
// UTF-8 sequence that more bytes could complete, nor in U+FFFD.
std::size_t complete_utf8_prefix(std::string_view text);

class TextStream {
 public:
  using Decode = std::function<std::string(std::span<const std::int64_t>)>;
  // `context`: the prompt's tokens (the last few suffice).
  TextStream(Decode decode, std::span<const std::int64_t> context);

  // The text `id` adds that is final now (possibly empty).
  std::string push(std::int64_t id);
  // Whatever was held back.
  std::string finish();

 private:
  std::string window_text_since_prefix();

  Decode decode_;
  std::vector<std::int64_t> ids_;
  // ids_[prefix_, read_) is text already handed out whose decoding is the
  // baseline the new text is measured against; `emitted_` bytes past that
  // baseline were handed out too.
  std::size_t prefix_ = 0;
  std::size_t read_ = 0;
  std::size_t emitted_ = 0;
};

}  // namespace tessel::cli

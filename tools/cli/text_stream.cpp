#include "cli/text_stream.hpp"

#include <algorithm>

namespace tessel::cli {

namespace {

// Prompt tokens decoded before the first new one: enough for the new
// token's text to be measured in context (a leading space kept, a
// character whose bytes started in the prompt finished).
constexpr std::size_t kContextTokens = 8;

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

std::size_t sequence_length(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  return 1;  // ASCII, or a byte no continuation can make valid
}

}  // namespace

std::size_t complete_utf8_prefix(std::string_view text) {
  // A lossy decoder turns a character's first bytes into one U+FFFD (or
  // one per byte, as ByteFallback does): hold them all back, since the
  // next token may bring the rest.
  while (text.ends_with(kReplacement)) text.remove_suffix(kReplacement.size());
  const std::size_t n = text.size();
  // Walk back over at most three continuation bytes to the lead byte.
  std::size_t i = n;
  while (i > 0 && n - i < 3 &&
         (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) {
    --i;
  }
  if (i == 0) return n;
  const std::size_t lead = i - 1;
  const std::size_t want =
      sequence_length(static_cast<unsigned char>(text[lead]));
  return want > 1 && n - lead < want ? lead : n;
}

TextStream::TextStream(Decode decode, std::span<const std::int64_t> context)
    : decode_(std::move(decode)) {
  const std::size_t keep = std::min(context.size(), kContextTokens);
  ids_.assign(context.end() - static_cast<std::ptrdiff_t>(keep), context.end());
  read_ = ids_.size();
}

std::string TextStream::window_text_since_prefix() {
  const std::span<const std::int64_t> ids(ids_);
  const std::string before = decode_(ids.subspan(prefix_, read_ - prefix_));
  const std::string now = decode_(ids.subspan(prefix_));
  return now.size() > before.size() ? now.substr(before.size()) : "";
}

std::string TextStream::push(std::int64_t id) {
  ids_.push_back(id);
  const std::string added = window_text_since_prefix();
  const std::size_t complete = complete_utf8_prefix(added);
  std::string out;
  if (complete > emitted_) {
    out = added.substr(emitted_, complete - emitted_);
    emitted_ = complete;
  }
  if (complete == added.size()) {
    // Everything decoded so far is out: later text is measured from here,
    // so the decoded window stays a few tokens long.
    prefix_ = read_;
    read_ = ids_.size();
    emitted_ = 0;
  }
  return out;
}

std::string TextStream::finish() {
  const std::string added = window_text_since_prefix();
  std::string out = added.size() > emitted_ ? added.substr(emitted_) : "";
  prefix_ = read_ = ids_.size();
  emitted_ = 0;
  return out;
}

}  // namespace tessel::cli

#include "models/tokenizer/spm.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/check.hpp"
#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

struct Symbol {
  std::int32_t prev, next;
  std::size_t begin, size;  // into the text; size 0 once merged away
};

struct Bigram {
  std::int32_t left, right;
  float score;
  std::size_t size;
};

// Highest score first, then leftmost (llama.cpp's llm_bigram_spm order).
bool lower_priority(const Bigram& a, const Bigram& b) {
  return a.score < b.score || (a.score == b.score && a.left > b.left);
}

}  // namespace

SpmModel::SpmModel(const Vocab& vocab, std::vector<float> scores)
    : vocab_(vocab), scores_(std::move(scores)) {}

Id SpmModel::byte_token(unsigned char b) const {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const char name[] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
  if (const auto id = vocab_.find(std::string_view(name, 6))) return *id;
  // llama.cpp's fallback: the byte itself as a token.
  const char raw = static_cast<char>(b);
  const auto id = vocab_.find(std::string_view(&raw, 1));
  TESSEL_CHECK(id.has_value(), MalformedFile, "tokenizer",
               "the llama vocabulary has no byte token <0x{:02X}> for a byte "
               "no other token covers",
               b);
  return *id;
}

void SpmModel::encode(std::string_view text, std::vector<Id>& out) const {
  std::vector<Symbol> symbols;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t n = std::min<std::size_t>(
        utf8_sequence_length(static_cast<unsigned char>(text[pos])),
        text.size() - pos);
    const auto index = static_cast<std::int32_t>(symbols.size());
    symbols.push_back(
        {index - 1, pos + n == text.size() ? -1 : index + 1, pos, n});
    pos += n;
  }
  std::vector<Bigram> queue;
  // The two symbols a merged text came from (the last bigram queued for
  // that text, as llama.cpp's rev_merge map keeps).
  std::unordered_map<std::string_view, std::pair<std::int32_t, std::int32_t>>
      rev_merge;
  const auto try_add = [&](std::int32_t left, std::int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view joined = text.substr(
        symbols[left].begin, symbols[left].size + symbols[right].size);
    const auto id = vocab_.find(joined);
    if (!id) return;
    queue.push_back({left, right, scores_[*id], joined.size()});
    std::push_heap(queue.begin(), queue.end(), lower_priority);
    rev_merge[joined] = {left, right};
  };
  for (std::int32_t i = 1; i < static_cast<std::int32_t>(symbols.size()); ++i) {
    try_add(i - 1, i);
  }
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), lower_priority);
    const Bigram bigram = queue.back();
    queue.pop_back();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    if (left.size == 0 || right.size == 0 ||
        left.size + right.size != bigram.size) {
      continue;
    }
    left.size += right.size;
    right.size = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }
  // Emits a symbol: its token, or the two it was merged from, or bytes.
  const auto resegment = [&](auto&& self, const Symbol& s) -> void {
    const std::string_view piece = text.substr(s.begin, s.size);
    if (const auto id = vocab_.find(piece)) {
      out.push_back(*id);
      return;
    }
    const auto it = rev_merge.find(piece);
    if (it == rev_merge.end()) {
      for (const char c : piece) {
        out.push_back(byte_token(static_cast<unsigned char>(c)));
      }
      return;
    }
    self(self, symbols[it->second.first]);
    self(self, symbols[it->second.second]);
  };
  for (std::int32_t i = symbols.empty() ? -1 : 0; i != -1;
       i = symbols[i].next) {
    resegment(resegment, symbols[i]);
  }
}

}  // namespace tessel::tok

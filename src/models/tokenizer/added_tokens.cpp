#include "models/tokenizer/added_tokens.hpp"

#include <utf8proc.h>

#include <algorithm>
#include <numeric>

#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

// The start of the code point that ends at `end` (exclusive).
std::size_t previous_start(std::string_view s, std::size_t end) {
  std::size_t p = end - 1;
  while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
  return p;
}

// The `regex` crate's \w: Alphabetic, marks, decimal digits, connector
// punctuation, Join_Control (by general category, which covers all but a
// few symbol-category alphabetics such as circled letters).
bool is_word_char(std::uint32_t cp) {
  if (cp == 0x200C || cp == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_PC: return true;
    default: return false;
  }
}

bool ends_with_word(std::string_view s, std::size_t end) {
  if (end == 0) return false;
  std::size_t p = previous_start(s, end);
  return is_word_char(utf8_next(s, p));
}

bool starts_with_word(std::string_view s, std::size_t begin) {
  if (begin >= s.size()) return false;
  return is_word_char(utf8_next(s, begin));
}

}  // namespace

LeftmostLongestMatcher::LeftmostLongestMatcher(
    const std::vector<std::string>& patterns,
    std::vector<const AddedToken*> tokens)
    : nodes_(1), tokens_(std::move(tokens)) {
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    if (patterns[i].empty()) continue;
    std::int32_t node = 0;
    for (const char c : patterns[i]) {
      const auto b = static_cast<unsigned char>(c);
      auto& next = nodes_[node].next;
      const auto it = std::find_if(next.begin(), next.end(),
                                   [&](const auto& e) { return e.first == b; });
      if (it != next.end()) {
        node = it->second;
      } else {
        const auto child = static_cast<std::int32_t>(nodes_.size());
        nodes_[node].next.emplace_back(b, child);
        nodes_.emplace_back();
        node = child;
      }
    }
    // aho-corasick keeps the first of duplicate patterns.
    if (nodes_[node].match < 0) nodes_[node].match = static_cast<int>(i);
    first_byte_[static_cast<unsigned char>(patterns[i][0])] = true;
  }
}

void LeftmostLongestMatcher::split(std::string_view text, bool parse_special,
                                   std::vector<Segment>& out) const {
  std::size_t emitted = 0;  // end of the last segment
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    // The longest pattern that starts at pos.
    std::int32_t node = 0, match = -1;
    std::size_t match_end = 0;
    for (std::size_t i = pos; i < text.size(); ++i) {
      const auto b = static_cast<unsigned char>(text[i]);
      const auto& next = nodes_[node].next;
      const auto it = std::find_if(next.begin(), next.end(),
                                   [&](const auto& e) { return e.first == b; });
      if (it == next.end()) break;
      node = it->second;
      if (nodes_[node].match >= 0) {
        match = nodes_[node].match;
        match_end = i + 1;
      }
    }
    if (match < 0) {
      ++pos;
      continue;
    }
    const AddedToken& token = *tokens_[match];
    std::size_t start = pos, stop = match_end;
    pos = match_end;  // the scan resumes after the match, used or not
    if (!parse_special && token.special) continue;
    if (token.single_word &&
        (ends_with_word(text, start) || starts_with_word(text, stop))) {
      continue;
    }
    if (token.lstrip) {
      std::size_t s = start;
      while (s > 0) {
        std::size_t p = previous_start(text, s), q = p;
        if (!is_unicode_white_space(utf8_next(text, q))) break;
        s = p;
      }
      start = std::max(s, emitted);
    }
    if (token.rstrip) {
      while (stop < text.size()) {
        std::size_t q = stop;
        if (!is_unicode_white_space(utf8_next(text, q))) break;
        stop = q;
      }
    }
    if (emitted < start) out.push_back({emitted, start, -1});
    out.push_back({start, stop, token.id});
    emitted = stop;
  }
  if (emitted < text.size()) out.push_back({emitted, text.size(), -1});
}

LongestFirstPartition::LongestFirstPartition(const Vocab& vocab,
                                             std::vector<Id> ids,
                                             std::vector<bool> special)
    : vocab_(&vocab), ids_(std::move(ids)), special_(std::move(special)) {
  std::vector<std::size_t> order(ids_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(
      order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return vocab.tokens[ids_[a]].size() > vocab.tokens[ids_[b]].size();
      });
  std::vector<Id> ids2;
  std::vector<bool> special2;
  for (const std::size_t i : order) {
    ids2.push_back(ids_[i]);
    special2.push_back(special_[i]);
  }
  ids_ = std::move(ids2);
  special_ = std::move(special2);
}

void LongestFirstPartition::split(std::string_view text, bool parse_special,
                                  std::vector<Segment>& out) const {
  std::vector<Segment> pieces;
  if (!text.empty()) pieces.push_back({0, text.size(), -1});
  std::vector<Segment> next;
  for (std::size_t t = 0; t < ids_.size(); ++t) {
    if (!parse_special && special_[t]) continue;
    const std::string& needle = vocab_->tokens[ids_[t]];
    if (needle.empty()) continue;
    next.clear();
    for (const Segment& piece : pieces) {
      if (piece.token >= 0) {
        next.push_back(piece);
        continue;
      }
      std::size_t begin = piece.begin;
      const std::string_view window = text.substr(0, piece.end);
      for (std::size_t hit;
           begin < piece.end &&
           (hit = window.find(needle, begin)) != std::string_view::npos;) {
        if (hit > begin) next.push_back({begin, hit, -1});
        next.push_back({hit, hit + needle.size(), ids_[t]});
        begin = hit + needle.size();
      }
      if (begin < piece.end) next.push_back({begin, piece.end, -1});
    }
    pieces.swap(next);
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace tessel::tok

#include "models/tokenizer/bpe.hpp"

#include <algorithm>
#include <bit>

#include "core/check.hpp"
#include "models/tokenizer/byte_level.hpp"
#include "models/tokenizer/utf8.hpp"

namespace tessel::tok {

namespace {

// Words longer than this are not cached (as tokenizers' MAX_LENGTH); the
// cache is cleared when it holds this many words.
constexpr std::size_t kMaxCachedWordBytes = 256;
constexpr std::size_t kMaxCachedWords = 1 << 17;

// The heap's order: lowest rank first, then leftmost.
bool later(const auto& a, const auto& b) {
  return a.rank > b.rank || (a.rank == b.rank && a.pos > b.pos);
}

}  // namespace

void MergeTable::reserve(std::size_t n) {
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, 2 * n));
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  size_ = 0;
}

void MergeTable::insert(Id left, Id right, Merge merge, bool first_wins) {
  if (2 * (size_ + 1) > slots_.size()) {
    std::vector<Slot> old = std::move(slots_);
    reserve(std::max<std::size_t>(size_ + 1, old.size()));
    for (const Slot& s : old) {
      if (s.key != kEmpty) {
        insert(static_cast<Id>(s.key >> 32),
               static_cast<Id>(s.key & 0xFFFFFFFF), s.merge, true);
      }
    }
  }
  const std::uint64_t key = pack(left, right);
  for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    if (s.key == key) {
      if (!first_wins) s.merge = merge;
      return;
    }
    if (s.key == kEmpty) {
      s.key = key;
      s.merge = merge;
      ++size_;
      return;
    }
  }
}

bool WordCache::find(std::string_view word, std::vector<Id>& out) const {
  const auto it = index_.find(word);
  if (it == index_.end()) return false;
  const Id* ids = pool_.data() + it->second.first;
  out.insert(out.end(), ids, ids + it->second.second);
  return true;
}

void WordCache::insert(std::string_view word, const Id* ids, std::size_t n) {
  if (word.size() > kMaxCachedWordBytes) return;
  if (index_.size() >= kMaxCachedWords) {
    index_.clear();
    pool_.clear();
  }
  index_.emplace(std::string(word),
                 std::pair{static_cast<std::uint32_t>(pool_.size()),
                           static_cast<std::uint32_t>(n)});
  pool_.insert(pool_.end(), ids, ids + n);
}

BpeModel::BpeModel(
    const Vocab& vocab,
    const std::vector<std::pair<std::string, std::string>>& merges,
    const BpeOptions& options, bool strict, const std::string& field,
    const char* op)
    : vocab_(vocab), options_(options) {
  merges_.reserve(merges.size());
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    const auto left = vocab.find(a), right = vocab.find(b);
    const auto merged = vocab.find(a + b);
    if (!strict && (!left || !right)) continue;
    TESSEL_CHECK(left && right && merged, MalformedFile, op,
                 "{}[{}]: merge {:?} + {:?} needs tokens that the vocabulary "
                 "lacks ({:?})",
                 field, i, a, b,
                 !left    ? a
                 : !right ? b
                          : a + b);
    merges_.insert(*left, *right, {static_cast<std::uint32_t>(i), *merged},
                   !strict);
  }
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), Id{-1});
  if (options.byte_level) {
    for (int b = 0; b < 256; ++b) {
      std::string s;
      utf8_append(s, byte_level_char(static_cast<unsigned char>(b)));
      if (const auto id = vocab.find(s)) byte_ids_[b] = *id;
    }
    if (options.ignore_merges) {
      std::string raw;
      for (Id id = 0; id < vocab.size(); ++id) {
        raw.clear();
        if (!vocab.tokens[id].empty() &&
            byte_level_decode(vocab.tokens[id], raw)) {
          raw_ids_.try_emplace(raw, id);
        }
      }
      // A string that several ids spell resolves as the vocabulary does.
      // (A GGUF token that is not UTF-8, such as an overlong sequence, can
      // decode to bytes whose encoding is no token: it keeps its own id.)
      for (auto& [raw_bytes, id] : raw_ids_) {
        if (const auto found = vocab.find(byte_level_encode(raw_bytes))) {
          id = *found;
        }
      }
    }
  }
}

void BpeModel::add_unknown(std::string_view bytes, std::vector<Symbol>& symbols,
                           bool& pending_unk) const {
  const auto push = [&](Id id) {
    symbols.push_back({id, static_cast<std::int32_t>(symbols.size()) - 1,
                       static_cast<std::int32_t>(symbols.size()) + 1, true});
  };
  if (options_.unknown_blocks_merges) {
    push(-1);
    return;
  }
  if (options_.byte_fallback) {
    Id ids[8];
    std::size_t n = 0;
    for (const char c : bytes) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const auto u = static_cast<unsigned char>(c);
      const char name[] = {'<', '0', 'x', kHex[u >> 4], kHex[u & 15], '>'};
      const auto id = vocab_.find(std::string_view(name, 6));
      if (!id || n == 8) {
        n = 0;
        break;
      }
      ids[n++] = *id;
    }
    if (n == bytes.size()) {  // tokenizers leaves a pending unk pending
      for (std::size_t i = 0; i < n; ++i) push(ids[i]);
      return;
    }
  }
  if (options_.unk < 0) return;  // dropped
  if (pending_unk && !options_.fuse_unk) push(options_.unk);
  pending_unk = true;
}

void BpeModel::add_symbols(std::string_view word,
                           std::vector<Symbol>& symbols) const {
  bool pending_unk = false;
  const auto push = [&](Id id) {
    if (pending_unk) {
      pending_unk = false;
      symbols.push_back({options_.unk,
                         static_cast<std::int32_t>(symbols.size()) - 1,
                         static_cast<std::int32_t>(symbols.size()) + 1, true});
    }
    symbols.push_back({id, static_cast<std::int32_t>(symbols.size()) - 1,
                       static_cast<std::int32_t>(symbols.size()) + 1, true});
  };
  if (options_.byte_level) {
    for (const char c : word) {
      const Id id = byte_ids_[static_cast<unsigned char>(c)];
      if (id >= 0) {
        push(id);
      } else {
        std::string shown;
        utf8_append(shown, byte_level_char(static_cast<unsigned char>(c)));
        add_unknown(shown, symbols, pending_unk);
      }
    }
  } else {
    for (std::size_t pos = 0; pos < word.size();) {
      const std::size_t n = std::min<std::size_t>(
          utf8_sequence_length(static_cast<unsigned char>(word[pos])),
          word.size() - pos);
      const std::string_view c = word.substr(pos, n);
      if (const auto id = vocab_.find(c)) {
        push(*id);
      } else {
        add_unknown(c, symbols, pending_unk);
      }
      pos += n;
    }
  }
  if (pending_unk) {
    symbols.push_back({options_.unk,
                       static_cast<std::int32_t>(symbols.size()) - 1,
                       static_cast<std::int32_t>(symbols.size()) + 1, true});
  }
  if (!symbols.empty()) symbols.back().next = -1;
}

void BpeModel::merge(std::vector<Symbol>& symbols,
                     std::vector<Candidate>& heap) const {
  const auto push = [&](std::int32_t pos) {
    const std::int32_t next = symbols[pos].next;
    if (next < 0) return;
    if (const auto* m = merges_.find(symbols[pos].id, symbols[next].id)) {
      heap.push_back({m->rank, pos, m->merged});
      std::push_heap(
          heap.begin(), heap.end(),
          [](const Candidate& a, const Candidate& b) { return later(a, b); });
    }
  };
  const auto cmp = [](const Candidate& a, const Candidate& b) {
    return later(a, b);
  };
  heap.clear();
  for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(symbols.size());
       ++i) {
    if (const auto* m = merges_.find(symbols[i].id, symbols[i + 1].id)) {
      heap.push_back({m->rank, i, m->merged});
    }
  }
  std::make_heap(heap.begin(), heap.end(), cmp);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    // A candidate goes stale when either side merged since it was queued.
    const auto* m = merges_.find(left.id, right.id);
    if (m == nullptr || m->merged != top.merged) continue;
    left.id = top.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) push(left.prev);
    push(top.pos);
  }
}

void BpeModel::encode(std::string_view word, std::vector<Id>& out,
                      WordCache* cache) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (options_.byte_level) {
      const auto it = raw_ids_.find(word);
      if (it != raw_ids_.end()) {
        out.push_back(it->second);
        return;
      }
    } else if (const auto id = vocab_.find(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (cache != nullptr && cache->find(word, out)) return;
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.clear();
  add_symbols(word, symbols);
  merge(symbols, heap);
  const std::size_t start = out.size();
  for (const Symbol& s : symbols) {
    if (s.alive && s.id >= 0) out.push_back(s.id);
  }
  if (cache != nullptr) {
    cache->insert(word, out.data() + start, out.size() - start);
  }
}

}  // namespace tessel::tok

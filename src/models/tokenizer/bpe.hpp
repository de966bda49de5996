// Byte-pair encoding of one pre-tokenised piece, as the `tokenizers`
// package and llama.cpp do it: start from the piece's symbols (bytes for a
// byte-level vocabulary, UTF-8 characters otherwise) and repeatedly merge
// the adjacent pair of lowest merge rank, the leftmost among equal ranks.
// Merges are keyed by the pair of token ids (one hash probe per pair); a
// per-word cache (as `tokenizers` keeps) skips the merging for words seen
// before.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/tokenizer/vocab.hpp"

namespace tessel::tok {

// Open addressing over (left id, right id) -> (rank, merged id).
class MergeTable {
 public:
  struct Merge {
    std::uint32_t rank;
    Id merged;
  };
  void reserve(std::size_t n);
  // `first_wins`: a repeated pair keeps its first rank (llama.cpp) or takes
  // the last (tokenizers, which collects the merges into a hash map).
  void insert(Id left, Id right, Merge merge, bool first_wins);
  const Merge* find(Id left, Id right) const {
    if (left < 0 || right < 0 || slots_.empty()) return nullptr;
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.merge;
      if (s.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Slot {
    std::uint64_t key = kEmpty;
    Merge merge{};
  };
  static std::uint64_t pack(Id l, Id r) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32) |
           static_cast<std::uint32_t>(r);
  }
  static std::size_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0, size_ = 0;
};

// Words already encoded, as one pool of ids. Bounded: cleared when full.
class WordCache {
 public:
  bool find(std::string_view word, std::vector<Id>& out) const;
  void insert(std::string_view word, const Id* ids, std::size_t n);
  std::mutex mutex;  // held (try_lock) by the encode call using the cache

 private:
  StringMap<std::pair<std::uint32_t, std::uint32_t>> index_;
  std::vector<Id> pool_;
};

struct BpeOptions {
  bool byte_level = false;     // symbols are bytes shown by GPT-2's alphabet
  bool ignore_merges = false;  // a piece that is a token is that token
  bool byte_fallback = false;  // unknown symbols as <0xXX> tokens
  bool fuse_unk = false;       // consecutive unknown symbols as one unk
  Id unk = -1;                 // the unk token, -1 for none
  // llama.cpp keeps an unknown symbol in place (it blocks merges across
  // it, then yields nothing); tokenizers drops it before merging.
  bool unknown_blocks_merges = false;
};

class BpeModel {
 public:
  // `merges` in rank order, as token strings. `strict` (tokenizers): every
  // part and result must be a token, else E3001 naming merges[i] under
  // `field`. Otherwise (llama.cpp) a merge whose part is no token can never
  // apply and is dropped, and only a missing result is refused.
  BpeModel(const Vocab& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges,
           const BpeOptions& options, bool strict, const std::string& field,
           const char* op);

  // Appends the ids of `word` (raw bytes when byte-level).
  void encode(std::string_view word, std::vector<Id>& out,
              WordCache* cache) const;

  const BpeOptions& options() const { return options_; }

 private:
  struct Symbol {
    Id id;
    std::int32_t prev, next;
    bool alive;
  };
  struct Candidate {
    std::uint32_t rank;
    std::int32_t pos;
    Id merged;
  };
  void add_symbols(std::string_view word, std::vector<Symbol>& symbols) const;
  void add_unknown(std::string_view bytes, std::vector<Symbol>& symbols,
                   bool& pending_unk) const;
  void merge(std::vector<Symbol>& symbols, std::vector<Candidate>& heap) const;

  const Vocab& vocab_;
  BpeOptions options_;
  MergeTable merges_;
  Id byte_ids_[256];       // byte-level: the token of each single byte
  StringMap<Id> raw_ids_;  // byte-level ignore_merges: raw bytes -> token
};

}  // namespace tessel::tok

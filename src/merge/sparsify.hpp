// The four ways a task-arithmetic merge thins a model's delta before
// adding it (mergekit's sparsify.py), as keep-factors and one rescale
// factor, without materialising the delta: element i is x[i] - base[i]
// (x[i] alone without a base), read a block at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "merge/blocks.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge::detail {

struct Thinned {
  bool keep_all = false;           // no mask: every element kept
  std::vector<std::uint8_t> mask;  // ranked methods: 1 kept, 0 dropped
  // DARE's draws are regenerated block by block from the counter-based
  // generator instead of stored: element i is kept when its 24-bit draw
  // is below `threshold`.
  bool random = false;
  std::uint32_t key[2] = {0, 0};
  std::uint64_t stream = 0;
  std::uint32_t threshold = 0;
  // The same draws once made (by the rescale pass): element i is bit
  // i % 8 of byte i / 8.
  std::vector<std::uint8_t> bits;
  float scale = 1.0f;  // the L1 rescale, when asked for

  // Per element of [first, first + n): `kept` where kept, else 0; zeros
  // past n up to padded(n). Not for keep_all. first % 4 == 0.
  void keep_factors(std::int64_t first, std::int64_t n, float kept,
                    float* out) const;
};

// `rows` x `cols` is how della ranks (each row on its own). `base` may be
// undefined (the deltas are x itself).
Thinned thin(const Elements& x, const Elements& base, std::int64_t rows,
             std::int64_t cols, Sparsification method, const TaskInput& input,
             bool rescale, const char* method_label);

}  // namespace tessel::merge::detail

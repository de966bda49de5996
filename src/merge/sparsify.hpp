// The four ways a task-arithmetic merge thins a model's delta before
// adding it (mergekit's sparsify.py), as a keep-mask and one rescale
// factor, without materialising the delta: element i is x[i] - base[i]
// (x[i] alone without a base).
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/merge/methods.hpp"

namespace tessel::merge::detail {

struct Thinned {
  bool keep_all = false;           // no mask: every element kept
  std::vector<std::uint8_t> mask;  // 1 kept, 0 dropped
  float scale = 1.0f;              // the L1 rescale, when asked for
};

// `rows` x `cols` is how della ranks (each row on its own).
Thinned thin(const float* x, const float* base, std::int64_t rows,
             std::int64_t cols, Sparsification method, const TaskInput& input,
             bool rescale, const char* method_label);

}  // namespace tessel::merge::detail

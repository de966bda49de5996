// Rotary position embedding over contiguous rows.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

struct RopeProblem {
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;  // even, <= head_dim
  bool interleaved = false;     // GPT-J pairs (2i, 2i+1), else (i, i + half)
  // The tables' element strides over the row axes (x.shape[:-1]), 0 where
  // they broadcast; each table row of rotary_dim/2 values is contiguous.
  std::vector<std::int64_t> row_shape;
  std::vector<std::int64_t> table_strides;
};

// y = rope(x) for x and y contiguous (rows, head_dim) of one float dtype;
// cos and sin f32 (f64 for f64 data).
void rope(const RopeProblem& p, const Tensor& x, const Tensor& y,
          const Tensor& cos, const Tensor& sin);

}  // namespace tessel::cpu

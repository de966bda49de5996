// Merge inputs read the way the methods stream them: a block of elements
// at a time, widened to f32 into a small buffer that stays in L1/L2, so a
// bf16 checkpoint is merged straight from its mapped pages without an f32
// copy of any tensor. Blocks are padded with zeros to a multiple of
// simd::kPad so that every kernel of merge/simd works on whole vectors.
#pragma once

#include <cstdint>
#include <vector>

#include "merge/simd/merge_simd.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::merge::detail {

// Elements per block: a few f32 rows of it fit in L1 with room to spare.
inline constexpr std::int64_t kBlock = 2048;

inline std::int64_t padded(std::int64_t n) {
  return (n + simd::kPad - 1) / simd::kPad * simd::kPad;
}

// The dtypes a merge reads without a copy.
bool is_streamable(DType dtype);

// A contiguous CPU tensor of f32, bf16 or f16, read by blocks.
class Elements {
 public:
  Elements() = default;
  explicit Elements(const Tensor& t);
  bool defined() const { return data_ != nullptr; }
  // Elements [first, first + n) as f32 into out[0, n), zeros into
  // out[n, padded(n)).
  void load(std::int64_t first, std::int64_t n, float* out) const;

 private:
  const void* data_ = nullptr;
  DType dtype_ = DType::F32;
};

// The f32 form of a method's input, for the methods that work on whole f32
// tensors (a copy unless it already is f32).
Tensor as_f32(const Tensor& t);

// Per-thread scratch of `rows` padded blocks, reused across calls; slot 0
// for the methods' own rows, slot 1 for the block PreparedMerge::produce
// has them fill.
float* block_scratch(std::int64_t rows, int slot = 0);

}  // namespace tessel::merge::detail

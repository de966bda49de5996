// The keys and values a decoder keeps between steps of incremental
// decoding, in the dtype the user chose for them (`--cache-type`).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "tessel/core/tensor.hpp"
#include "tessel/models/config.hpp"

namespace tessel {

// Keys and values of every layer for incremental decoding: per layer
// (batch, kv_heads, capacity, head_dim) buffers of which the first
// length() positions are filled. `dtype` is what they are kept in:
// - f32 (the default): attention sees the keys and values the layer
//   computed.
// - f16 / bf16, as llama.cpp's --cache-type-k/-v f16 (its default) and
//   bf16: half the memory, and half the bytes a decode step reads at long
//   contexts. Each key and value is rounded once, to nearest even, when
//   stored, and attention computes in f32 on those values.
// - The block types llama.cpp offers for its cache (q8_0, q4_0, q4_1,
//   q5_0, q5_1, iq4_nl): each head's key and value rows are quantised in
//   32-element blocks when stored (E2102 when head_dim is not a multiple
//   of 32), and attention computes in f32 on their dequantised values.
//   Where head_dim is a multiple of 64, the keys and values are first
//   rotated, as llama.cpp rotates them (key_rotation_block).
// Other dtypes: E2201.
class KVCache {
 public:
  KVCache(const DecoderConfig& config, std::int64_t batch,
          std::int64_t capacity, DType dtype = DType::F32);
  std::int64_t length() const { return length_; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t batch() const { return batch_; }
  DType dtype() const { return dtype_; }
  void clear() { length_ = 0; }

  // Stores positions [length, length + S) of layer `layer` and returns the
  // keys and values of positions [0, length + S).
  std::pair<Tensor, Tensor> append(std::int64_t layer, const Tensor& k,
                                   const Tensor& v);
  // Marks the S positions appended to every layer as filled.
  void advance(std::int64_t steps);

  // A quantised cache stores R k and R v instead of k and v, R the
  // block-diagonal orthonormal Walsh-Hadamard matrix (symmetric, R R = I)
  // with blocks of these sizes: R x = hadamard_transform(x, block). 0 when
  // nothing is rotated. Block quantisation loses least when a block's
  // values are alike in size, and the rotation spreads a head's few large
  // channels over the whole block. Attention stays the same function of
  // q, k and v: scores take (R q)·(R k) = q·k, and its output, a weighted
  // sum of R v, is rotated back by R. llama.cpp's sizes: keys in blocks of
  // the largest power of two from 64 dividing head_dim, values in blocks
  // of 64.
  std::int64_t key_rotation_block() const { return key_rotation_block_; }
  std::int64_t value_rotation_block() const { return value_rotation_block_; }

 private:
  std::vector<Tensor> keys_;
  std::vector<Tensor> values_;
  std::int64_t key_rotation_block_ = 0;
  std::int64_t value_rotation_block_ = 0;
  std::int64_t batch_;
  std::int64_t capacity_;
  DType dtype_;
  std::int64_t length_ = 0;
};

}  // namespace tessel

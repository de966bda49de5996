// Fused scaled-dot-product attention in f32 arithmetic.
#pragma once

#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu {

// An (B, H, S, D) operand: element strides per axis, D contiguous. The
// forward pass reads keys and values in f32, f16 or bf16 (a KV cache kept
// in 16 bits, widened a tile at a time: a decode step then reads half the
// bytes); queries, and every operand of the backward pass, are f32.
struct HeadsView {
  const void* data = nullptr;
  DType dtype = DType::F32;
  std::int64_t batch_stride = 0, head_stride = 0, row_stride = 0;

  const float* f32() const { return static_cast<const float*>(data); }
};

struct AttentionProblem {
  std::int64_t batch = 0, q_heads = 0, kv_heads = 0;  // q_heads % kv_heads == 0
  std::int64_t q_len = 0, kv_len = 0, head_dim = 0, value_dim = 0;
  HeadsView q, k, v;
  float* out = nullptr;  // (B, q_heads, q_len, value_dim), contiguous
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: cap * tanh(s / cap) before masking
  bool causal = false;
  std::int64_t causal_offset = 0;  // query i sees keys j <= i + offset
  // Optional mask broadcast to (B, q_heads, q_len, kv_len) by strides:
  // additive (f32) or boolean (true = attend). At most one is set.
  const float* mask_add = nullptr;
  const bool* mask_keep = nullptr;
  std::int64_t mask_strides[4] = {0, 0, 0, 0};
};

// softmax(scale * q k^T + mask) v, streaming over key tiles with an online
// softmax: each thread holds one score tile, never the whole (q_len,
// kv_len) matrix. Rows with no key to attend to give zeros.
void attention_forward(const AttentionProblem& p);

// Where the gradients of attention_forward read and write (p.out unused).
struct AttentionGradientBuffers {
  const float* out = nullptr;   // the forward result, (B, Hq, Sq, Dv)
  const float* dout = nullptr;  // its gradient, (B, Hq, Sq, Dv)
  float* dq = nullptr;          // (B, Hq, Sq, D)
  float* dk = nullptr;          // (B, Hkv, Sk, D)
  float* dv = nullptr;          // (B, Hkv, Sk, Dv)
};                              // all contiguous

// dq, dk and dv of attention_forward(p) from dout, recomputing the weights
// tile by tile as the forward does (no (Sq, Sk) matrix is held).
void attention_backward(const AttentionProblem& p,
                        const AttentionGradientBuffers& g);

// Tile sizes shared by both directions: a 64 x 256 f32 score tile (64 KiB)
// with its 64 x head_dim accumulator stays in L2 beside the K and V tiles
// it reads.
constexpr std::int64_t kAttentionQueryBlock = 64;
constexpr std::int64_t kAttentionKeyBlock = 256;

// Adds the mask and the causal limit to a rows x cols score tile (row
// stride ld) whose first element is (query i0, key j0) of head (b, h).
void mask_score_tile(const AttentionProblem& p, float* s, std::int64_t ld,
                     std::int64_t b, std::int64_t h, std::int64_t i0,
                     std::int64_t rows, std::int64_t j0, std::int64_t cols);

// c = alpha * op(a) op(b) + beta * c for the tiles (sgemm's conventions):
// simd::small_gemm for small tiles, where a oneDNN call costs more than
// the arithmetic, oneDNN's sgemm above kSmallTileProducts multiply-adds.
void tile_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
               std::int64_t k, float alpha, const float* a, std::int64_t lda,
               const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc);

// The keys a block of `rows` queries from i0 can see: [0, end).
std::int64_t attended_key_end(const AttentionProblem& p, std::int64_t i0,
                              std::int64_t rows);

}  // namespace tessel::cpu

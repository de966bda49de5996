// Fused scaled-dot-product attention on f32 data.
#pragma once

#include <cstdint>

namespace tessel::cpu {

// An (B, H, S, D) operand: element strides per axis, D contiguous.
struct HeadsView {
  const float* data = nullptr;
  std::int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
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

}  // namespace tessel::cpu

// Scaled dot-product attention: softmax(scale * q k^T + mask) v.
#pragma once

#include <cstdint>
#include <optional>

#include "tessel/core/tensor.hpp"

namespace tessel {

struct AttentionOptions {
  // Additive (float) or boolean (true = may attend) mask that broadcasts
  // to (batch, q_heads, q_len, kv_len), e.g. one (q_len, kv_len) matrix
  // for every batch and head.
  Tensor mask;
  bool causal = false;
  // Query i attends to keys j <= i + causal_offset. The default,
  // kv_len - q_len, aligns the last query with the last key (bottom-right):
  // the KV-cache convention of llama.cpp and FlashAttention. PyTorch's
  // is_causal is top-left (offset 0); the two agree when q_len == kv_len.
  std::optional<std::int64_t> causal_offset;
  std::optional<double> scale;  // default 1 / sqrt(head_dim)
  // > 0: scores become softcap * tanh(scores / softcap) before the mask
  // (Gemma 2, ONNX Attention).
  double softcap = 0.0;
};

// q (B, Hq, Sq, D), k (B, Hkv, Sk, D), v (B, Hkv, Sk, Dv) -> (B, Hq, Sq, Dv);
// rank-3 operands (H, S, D) are one batch. Grouped-query attention when
// Hkv < Hq: query head h reads key/value head h / (Hq / Hkv). A query with
// no key to attend to (all masked) gives zeros, not NaN.
//
// f32, bf16 and f16 run the fused kernel in f32 (scores exist one tile per
// thread, never as a whole (Sq, Sk) matrix); f64 runs the unfused form.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k,
                                    const Tensor& v,
                                    const AttentionOptions& options = {});

struct AttentionGradients {
  Tensor q, k, v;  // shaped and typed as the operands
};

// The gradients of out = scaled_dot_product_attention(q, k, v, options)
// with respect to q, k and v, given grad_out (the gradient of `out`, shaped
// as it): what tessel's autograd runs, exposed for code that writes its own
// backward pass. `out` must be that forward's result: f32, bf16 and f16
// recompute the weights tile by tile (nothing of size (Sq, Sk) is held) and
// take rowsum(grad_out * out) from it; f64 runs the unfused form.
AttentionGradients scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
    const Tensor& out, const AttentionOptions& options = {});

}  // namespace tessel

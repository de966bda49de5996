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

// scaled_dot_product_attention, declared once for Tensor and Variable
// operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/attention.inc"
#undef TESSEL_VALUE

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

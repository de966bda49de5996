// The unfused attention weights, shared by the f64 forward pass and the
// backward pass (which recomputes them instead of storing them).
#pragma once

#include <cstdint>

#include "tessel/ops/attention.hpp"

namespace tessel::detail {

// (B, Hkv, S, D) -> (B, Hkv * group, S, D): each key/value head repeated for
// the `group` query heads that read it.
Tensor repeat_kv_heads(const Tensor& t, std::int64_t group);

struct AttentionWeights {
  Tensor p;             // softmax weights (B, Hq, Sq, Sk); zero rows where
                        // nothing may be attended
  Tensor softcap_tanh;  // tanh(scores / softcap) when softcap > 0
};

// q (B, Hq, Sq, D) against keys already repeated to Hq heads; `mask`
// (additive or bool) broadcasts to (B, Hq, Sq, Sk) or is undefined.
AttentionWeights attention_weights(const Tensor& q, const Tensor& k_repeated,
                                   const Tensor& mask,
                                   const AttentionOptions& o, double scale,
                                   std::int64_t causal_offset);

}  // namespace tessel::detail

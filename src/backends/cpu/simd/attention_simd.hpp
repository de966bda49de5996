// Highway kernels for the score tiles of fused attention (f32).
#pragma once

#include <cstdint>

namespace tessel::cpu::simd {

// One step of the streaming softmax over a rows x cols tile of scores
// (row stride ld) for rows whose running max is m[r] and running sum l[r]:
// m' = max(m, max_j s), s := exp(s - m'), l := l * exp(m - m') + sum_j s,
// corr[r] = exp(m - m') (the factor the caller applies to its output
// accumulator). -Inf scores (masked) become exactly 0; a row with no
// finite score so far keeps m = -Inf, l = 0 and corr = 1; a NaN score makes
// its row's m, l and weights NaN.
void online_softmax_tile(float* s, std::int64_t rows, std::int64_t cols,
                         std::int64_t ld, float* m, float* l, float* corr);

// s := cap * tanh(s / cap) over the tile (Gemma-style logit soft-capping);
// when `tanh_out` is given (same layout) it receives tanh(s / cap), which
// the backward pass needs for the cap's derivative 1 - tanh^2.
void softcap_tile(float* s, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld, float cap, float* tanh_out = nullptr);

// s := exp(s - m[r]) / l[r]: the softmax weights of a tile, given the
// row statistics online_softmax_tile reached over all of the row's tiles.
// -Inf scores give 0; rows with l = 0 (nothing attended) give 0.
void softmax_weights_tile(float* s, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld, const float* m, const float* l);

// ds := p * (ds - delta[r]), times (1 - t^2) when t is given: the
// gradient of the scores from the gradient of the weights ds (softmax's
// Jacobian with delta = rowsum(dout * out)), through the soft cap.
void score_gradient_tile(const float* p, float* ds, const float* t,
                         std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         const float* delta);

}  // namespace tessel::cpu::simd

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

// s := cap * tanh(s / cap) over the tile (Gemma-style logit soft-capping).
void softcap_tile(float* s, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld, float cap);

}  // namespace tessel::cpu::simd

// The 16-level IQ4 codebook and ggml's search for a 32-value group's scale
// over it (quantize_row_iq4_nl_impl without an importance matrix): shared by
// IQ4_NL (one group per block) and IQ4_XS (eight groups per super-block).
#pragma once

#include <cmath>
#include <cstdint>

#include "backends/cpu/simd/scale_search_simd.hpp"
#include "quant/scalars.hpp"

namespace tessel::quant {

// The values a 4-bit IQ4 code stands for, before the scale (ggml's
// kvalues_iq4nl): non-uniform, denser near zero. Format data.
inline constexpr std::int8_t kIq4Codebook[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

inline constexpr int kIq4Group = 32;

// The 6-bit scale (0..63, biased by 32) of group `ib` of an IQ4_XS
// super-block [f16 d][u16 scales_h][u8 scales_l[4]][qs]: its low 4 bits are
// nibble ib of scales_l, its high 2 bits crumb ib of scales_h.
inline int iq4_xs_scale(const std::uint8_t* block, int ib) {
  const int low = (block[4 + ib / 2] >> 4 * (ib % 2)) & 0xF;
  const int high = (load_u16(block + 2) >> 2 * ib) & 3;
  return low | high << 4;
}

// ggml's best_index_int8 over kIq4Codebook: the code whose value is nearest
// x (the lower one on a tie), by bisection. A NaN x gets code 15.
inline int nearest_iq4_code(float x) {
  constexpr int n = 16;
  if (x <= kIq4Codebook[0]) return 0;
  if (x >= kIq4Codebook[n - 1]) return n - 1;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < kIq4Codebook[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return x - kIq4Codebook[hi - 1] < kIq4Codebook[hi] - x ? hi - 1 : hi;
}

// The codes 1 / d = id picks for a 32-value group, stored in `codes`, and
// their sums with weights x^2: sumqx = sum w q x, sumq2 = sum w q^2, in
// ggml's order of operations (the run-time IQ4_NL quantiser's one fit; the
// file quantiser's search runs its candidates in cpu::simd::iq4_sums).
inline void iq4_fit(const float* xb, float id, float& sumqx, float& sumq2,
                    std::uint8_t* codes) {
  sumqx = sumq2 = 0;
  for (int j = 0; j < kIq4Group; ++j) {
    const int l = nearest_iq4_code(id * xb[j]);
    codes[j] = static_cast<std::uint8_t>(l);
    const float q = kIq4Codebook[l];
    const float w = xb[j] * xb[j];
    sumqx += w * q * xb[j];
    sumq2 += w * q * q;
  }
}

// The scale of one 32-value group, weights x^2: a least-squares scale for
// the codes that 1 / d0 = -codebook[0] / max picks (the largest magnitude
// onto +127), then the best of 15 more tries mapping it onto -127 + itry,
// by sumqx^2 / sumq2. 0 for a group whose largest magnitude is below 1e-15
// (ggml's GROUP_MAX_EPS). A NaN stays where ggml's comparisons put it.
inline float iq4_group_scale(const float* xb) {
  constexpr float kGroupMaxEps = 1e-15f;
  constexpr int kScaleTries = 7;  // ggml's ntry
  const auto [amax, max] = signed_absmax(xb, kIq4Group);
  if (amax < kGroupMaxEps) return 0;
  // Every candidate's fit at once (cpu::simd::iq4_sums, a lane each): no
  // candidate's codes depend on another's; only the choice is in order.
  constexpr int kCandidates = 2 * kScaleTries + 2;
  float ids[kCandidates];
  ids[0] = 1 / (-max / kIq4Codebook[0]);
  for (int itry = -kScaleTries; itry <= kScaleTries; ++itry) {
    ids[1 + itry + kScaleTries] = (itry + kIq4Codebook[0]) / max;
  }
  float sumqx[kCandidates], sumq2[kCandidates];
  cpu::simd::iq4_sums(xb, kIq4Codebook, ids, kCandidates, sumqx, sumq2);
  float d = sumq2[0] > 0 ? sumqx[0] / sumq2[0] : 0.f;
  float best = d * sumqx[0];
  for (int c = 1; c < kCandidates; ++c) {
    if (sumq2[c] > 0 && sumqx[c] * sumqx[c] > best * sumq2[c]) {
      d = sumqx[c] / sumq2[c];
      best = d * sumqx[c];
    }
  }
  return d;
}

}  // namespace tessel::quant

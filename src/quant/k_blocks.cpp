// The K-quants: 256-element super-blocks split into 16 sub-blocks of 16
// (Q2_K, Q3_K, Q6_K) or 8 of 32 (Q4_K, Q5_K), each sub-block with its own
// small integer scale (and min) that multiplies one f16 super-block scale;
// Q8_K is the f32-scaled 8-bit type the K-quant dot products pair with.
//
// The quantisers reproduce what ggml_quantize_chunk runs without an
// importance matrix: quantize_row_<t>_ref for every type (for Q2_K and Q3_K
// too: quantize_q2_K / quantize_q3_K only take their _impl paths when given
// weights). The scale searches are greedy and float-order sensitive, so each
// sum, product and comparison below keeps the reference's order and
// operand types (int codes converted to float at the same point); changing
// any of them changes bytes on some inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/cpu/simd/scale_search_simd.hpp"
#include "core/check.hpp"
#include "quant/block_codecs.hpp"
#include "quant/scalars.hpp"

namespace tessel::quant {

namespace {

constexpr int kSuperBlock = 256;  // ggml's QK_K

// Below this a group counts as all zero (ggml's GROUP_MAX_EPS).
constexpr float kGroupMaxEps = 1e-15f;

// ---------------------------------------------------------------------------
// Block layouts: byte offsets of each field, then the decode formula for
// element e (0..255) of sub-block j. Codes are stored unsigned (biased where
// the format is symmetric), except Q8_K's int8 ones.

// Q2_K, 84 bytes: scales[16] @0, qs[64] @16, d f16 @80, dmin f16 @82.
// scales[j]: low nibble scale, high nibble min, of sub-block j = e / 16.
// x = d * (scales[j] & 15) * q - dmin * (scales[j] >> 4), q in 0..3.
namespace q2k {
constexpr int kScales = 0, kQs = 16, kD = 80, kDmin = 82, kBytes = 84;
}

// Q3_K, 110 bytes: hmask[32] @0, qs[64] @32, scales[12] @96, d f16 @108.
// 16 six-bit scales s with a +32 bias (packed as in q3k_scale); the 3-bit
// code q = q2 + 4 * high, biased by 4, takes 2 bits from qs (as Q2_K) and
// the high bit from bit e / 32 of hmask[e % 32]:
// x = d * (s - 32) * (q - 4), j = e / 16.
namespace q3k {
constexpr int kHmask = 0, kQs = 32, kScales = 96, kD = 108, kBytes = 110;
}

// Q4_K, 144 bytes: d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16.
// Eight 6-bit (scale, min) pairs packed as in scale_min_k4; sub-block
// j = e / 32 takes the low (j even) or high (j odd) nibbles of qs bytes
// 32 * (j / 2) ... +31: x = d * scale[j] * q - dmin * min[j], q in 0..15.
namespace q4k {
constexpr int kD = 0, kDmin = 2, kScales = 4, kQs = 16, kBytes = 144;
}

// Q5_K, 176 bytes: d f16 @0, dmin f16 @2, scales[12] @4, qh[32] @16,
// qs[128] @48. As Q4_K, plus a fifth bit for element e in bit j of
// qh[e % 32]: x = d * scale[j] * (q4 + 16 * hbit) - dmin * min[j].
namespace q5k {
constexpr int kD = 0, kDmin = 2, kScales = 4, kQh = 16, kQs = 48, kBytes = 176;
}

// Q6_K, 210 bytes: ql[128] @0, qh[64] @128, scales[16] int8 @192,
// d f16 @208. Each 128-element half h has 64 ql bytes and 32 qh bytes;
// quarter t (32 elements, lane l) takes the low (t < 2) or high nibble of
// ql[64h + 32(t & 1) + l] and bits 2t..2t+1 of qh[32h + l]:
// x = d * scales[e / 16] * (q - 32), q in 0..63.
namespace q6k {
constexpr int kQl = 0, kQh = 128, kScales = 192, kD = 208, kBytes = 210;
}

// Q8_K, 292 bytes: d f32 @0, qs[256] int8 @4, bsums[16] int16 @260 (the
// sums of each 16 codes, for dot products). x = d * q.
namespace q8k {
constexpr int kD = 0, kQs = 4, kBsums = 260, kBytes = 292;
}

// ---------------------------------------------------------------------------
// Code packing shared by several layouts.

// Q2_K and Q3_K keep 2-bit codes as four "planes" per 128-element half:
// element e sits in qs byte 32 * (e / 128) + e % 32 at bit 2 * ((e % 128) /
// 32), so that one 32-byte vector load, shifted by 0, 2, 4 and 6, yields
// four runs of 32 consecutive elements.
constexpr int crumb_byte(int e) { return 32 * (e / 128) + e % 32; }
constexpr int crumb_shift(int e) { return 2 * ((e % 128) / 32); }

void pack_crumbs(const std::uint8_t* L, std::uint8_t* qs) {
  for (int j = 0; j < kSuperBlock; j += 128) {
    for (int l = 0; l < 32; ++l) {
      qs[j / 4 + l] = static_cast<std::uint8_t>(
          L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
          (L[j + l + 96] << 6));
    }
  }
}

// Q4_K / Q5_K's 12-byte table of eight 6-bit (scale, min) pairs: pairs 0..3
// sit whole in the low 6 bits of bytes j and j + 4; pairs 4..7 put their
// low nibbles in byte j + 4 (scale low, min high) and their top two bits in
// the spare top bits of bytes j - 4 (scale) and j (min).
struct ScaleMin {
  std::uint8_t scale;
  std::uint8_t min;
};

ScaleMin scale_min_k4(int j, const std::uint8_t* q) {
  if (j < 4) {
    return {static_cast<std::uint8_t>(q[j] & 63),
            static_cast<std::uint8_t>(q[j + 4] & 63)};
  }
  return {static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4)),
          static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4))};
}

// Fills all 12 bytes: the j < 4 writes cover bytes 0..7 before j >= 4 ORs
// into them.
void pack_scale_min_k4(const std::uint8_t* ls, const std::uint8_t* lm,
                       std::uint8_t* q) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      q[j] = ls[j];
      q[j + 4] = lm[j];
    } else {
      q[j + 4] =
          static_cast<std::uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      q[j - 4] |= static_cast<std::uint8_t>((ls[j] >> 4) << 6);
      q[j] |= static_cast<std::uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// Q3_K's 6-bit scale j (still biased by 32): low nibble from byte j (j < 8)
// or the high nibble of byte j - 8, top two bits from byte 8 + j % 4 at
// bit 2 * (j / 4).
int q3k_scale(int j, const std::uint8_t* s) {
  const int low = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
  return low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4);
}

// ---------------------------------------------------------------------------
// The scale searches (ggml's make_*_quants). Each fits one sub-block.

// ggml's make_qx_quants with rmse_type 1 and no weights, the form Q6_K
// uses: codes l in [-nmax, nmax) with x ~ scale * l, weighted by x^2. Tries
// the inverse scale -nmax / max and 18 nudges of nmax by +-0.1 .. 0.9,
// keeping one only if it strictly improves the least-squares fit (compared
// cross-multiplied, as ggml does). L gets l + nmax.
float search_symmetric_scale(const float* x, int n, int nmax, std::int8_t* L) {
  const auto [amax, max] = signed_absmax(x, n);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, std::int8_t{0});
    return 0.f;
  }
  float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<std::int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  // The 19 candidates' sums at once (symmetric_sums_steps, a lane each):
  // unlike the affine search, no candidate's sums depend on another's.
  constexpr int kFirst = -9, kSteps = 19;
  float step_sumlx[kSteps], step_suml2[kSteps];
  cpu::simd::symmetric_sums_steps(x, n, nmax, max, kFirst, kSteps, step_sumlx,
                                  step_suml2);
  for (int j = 0; j < kSteps; ++j) {
    const int is = kFirst + j;
    if (is == 0) continue;
    sumlx = step_sumlx[j];
    suml2 = step_suml2[j];
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      iscale =
          -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
      for (int i = 0; i < n; ++i) {
        const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = static_cast<std::int8_t>(l + nmax);
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// ggml's make_q3_quants with do_rmse: start from codes at -nmax / max, then
// up to 5 sweeps of coordinate descent, moving one code at a time to its
// best value given the others when that raises sumlx^2 / suml2 (x^2
// weights). L gets l + nmax.
float search_symmetric_scale_q3(const float* x, int n, int nmax,
                                std::int8_t* L) {
  const auto [amax, max] = signed_absmax(x, n);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, std::int8_t{0});
    return 0.f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<std::int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * static_cast<float>(L[i]);
      if (slx > 0) {
        float sl2 =
            suml2 - w * static_cast<float>(L[i]) * static_cast<float>(L[i]);
        const int new_l =
            std::clamp(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (new_l != L[i]) {
          slx += w * x[i] * static_cast<float>(new_l);
          sl2 += w * static_cast<float>(new_l) * static_cast<float>(new_l);
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<std::int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

struct ScaleSearch {
  int nmax;
  float rmin;    // first candidate: nmax + rmin steps over the range
  float rdelta;  // step between candidates
  int nstep;     // candidates nstep + 1 (every caller has nstep >= 1)
  bool use_mad;  // weighted |error| rather than squared error
};

struct AffineFit {
  float scale;
  float min;  // subtracted: x ~ scale * L - min, min >= 0
};

// ggml's make_qkx2_quants: codes L in [0, nmax] for x ~ scale * L - min
// with the offset clamped so that 0 is representable. Starts from the
// plain [min(x, 0), max(x)] range, then for each candidate inverse scale
// rounds the codes and solves the weighted least-squares (scale, min) for
// them, keeping a candidate only if its weighted error is strictly lower.
AffineFit search_scale_min(const float* x, const float* weights, int n,
                           const ScaleSearch& p, std::uint8_t* L) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  // ggml returns -min here too, i.e. -0.0f for a non-negative constant
  // group; kept although no byte depends on it.
  if (max == min) {
    std::fill(L, L + n, std::uint8_t{0});
    return {0.f, -min};
  }
  float iscale = static_cast<float>(p.nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<std::uint8_t>(std::clamp(l, 0, p.nmax));
    float diff = scale * static_cast<float>(L[i]) + min - x[i];
    diff = p.use_mad ? std::fabs(diff) : diff * diff;
    best_error += weights[i] * diff;
  }
  // The steps run a lane each (fit_scale_min_steps); a step that improves
  // the fit moves `min`, so the steps after it run again from there, which
  // is the order ggml's loop takes them in.
  constexpr int kMaxSteps = 32;
  TESSEL_ASSERT(p.nstep < kMaxSteps);
  float fit_scale[kMaxSteps], fit_min[kMaxSteps], fit_error[kMaxSteps];
  for (int is = 0; is <= p.nstep;) {
    const int count = p.nstep + 1 - is;
    cpu::simd::fit_scale_min_steps({x, weights, n, p.nmax, p.rmin, p.rdelta,
                                    p.use_mad, min, max, sum_w, sum_x},
                                   is, count, fit_scale, fit_min, fit_error);
    int j = 0;
    while (j < count && !(fit_error[j] < best_error)) ++j;
    if (j == count) break;
    // That step's codes, against the min it was fitted with.
    iscale = (p.rmin + p.rdelta * static_cast<float>(is + j) +
              static_cast<float>(p.nmax)) /
             (max - min);
    for (int i = 0; i < n; ++i) {
      L[i] = static_cast<std::uint8_t>(
          std::clamp(nearest_int(iscale * (x[i] - min)), 0, p.nmax));
    }
    best_error = fit_error[j];
    scale = fit_scale[j];
    min = fit_min[j];
    is += j + 1;
  }
  return {scale, -min};
}

// ---------------------------------------------------------------------------
// Q2_K

void dequantize_q2_k_block(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + q2k::kD);
  const float dmin = load_f16(b + q2k::kDmin);
  for (int j = 0; j < 16; ++j) {
    const int sc = b[q2k::kScales + j];
    const float dl = d * static_cast<float>(sc & 0xF);
    const float ml = dmin * static_cast<float>(sc >> 4);
    for (int e = 16 * j; e < 16 * j + 16; ++e) {
      const int q = (b[q2k::kQs + crumb_byte(e)] >> crumb_shift(e)) & 3;
      y[e] = dl * static_cast<float>(q) - ml;
    }
  }
}

void quantize_q2_k_block(const float* x, std::uint8_t* b) {
  constexpr ScaleSearch kSearch{3, -0.5f, 0.1f, 15, true};
  constexpr float kScaleMax = 15.f;  // 4-bit sub-block scales and mins
  std::uint8_t L[kSuperBlock];
  float weights[16];
  float scales[16];
  float mins[16];
  float max_scale = 0;  // the min is subtracted, so scales are positive
  float max_min = 0;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    const AffineFit fit =
        search_scale_min(x + 16 * j, weights, 16, kSearch, L + 16 * j);
    scales[j] = fit.scale;
    mins[j] = fit.min;
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  std::uint8_t* sc = b + q2k::kScales;
  if (max_scale > 0) {
    const float iscale = kScaleMax / max_scale;
    for (int j = 0; j < 16; ++j) {
      sc[j] = static_cast<std::uint8_t>(nearest_int(iscale * scales[j]));
    }
    store_f16(b + q2k::kD, max_scale / kScaleMax);
  } else {
    std::fill(sc, sc + 16, std::uint8_t{0});
    store_f16(b + q2k::kD, 0.f);
  }
  if (max_min > 0) {
    const float iscale = kScaleMax / max_min;
    for (int j = 0; j < 16; ++j) {
      sc[j] |= static_cast<std::uint8_t>(nearest_int(iscale * mins[j]) << 4);
    }
    store_f16(b + q2k::kDmin, max_min / kScaleMax);
  } else {
    store_f16(b + q2k::kDmin, 0.f);
  }

  // Re-round every code against the scales as stored (quantised to 4 bits
  // and f16); a sub-block whose scale rounded to 0 keeps its search codes.
  for (int j = 0; j < 16; ++j) {
    const float d = load_f16(b + q2k::kD) * static_cast<float>(sc[j] & 0xF);
    if (d == 0) continue;
    const float dm = load_f16(b + q2k::kDmin) * static_cast<float>(sc[j] >> 4);
    for (int i = 16 * j; i < 16 * j + 16; ++i) {
      L[i] = static_cast<std::uint8_t>(
          std::clamp(nearest_int((x[i] + dm) / d), 0, 3));
    }
  }
  pack_crumbs(L, b + q2k::kQs);
}

// ---------------------------------------------------------------------------
// Q3_K

void dequantize_q3_k_block(const std::uint8_t* b, float* y) {
  const float d_all = load_f16(b + q3k::kD);
  for (int j = 0; j < 16; ++j) {
    const float dl =
        d_all * static_cast<float>(q3k_scale(j, b + q3k::kScales) - 32);
    for (int e = 16 * j; e < 16 * j + 16; ++e) {
      const int low = (b[q3k::kQs + crumb_byte(e)] >> crumb_shift(e)) & 3;
      const bool high = (b[q3k::kHmask + e % 32] >> (e / 32)) & 1;
      y[e] = dl * static_cast<float>(low - (high ? 0 : 4));
    }
  }
}

void quantize_q3_k_block(const float* x, std::uint8_t* b) {
  std::int8_t L[kSuperBlock];
  float scales[16];
  for (int j = 0; j < 16; ++j) {
    scales[j] = search_symmetric_scale_q3(x + 16 * j, 16, 4, L + 16 * j);
  }
  // The signed scale of largest magnitude.
  const auto [amax, max_scale] = signed_absmax(scales, 16);

  std::uint8_t* sc = b + q3k::kScales;
  std::fill(sc, sc + 12, std::uint8_t{0});
  if (max_scale != 0) {
    // The sign of max_scale is folded into d so that the largest scale
    // lands on -32, the end with the extra code.
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < 16; ++j) {
      // ggml narrows to int8 before clamping; the wrap matters only for
      // out-of-range (non-finite) input.
      const auto l8 = static_cast<std::int8_t>(nearest_int(iscale * scales[j]));
      const int l = std::clamp<int>(l8, -32, 31) + 32;
      if (j < 8) {
        sc[j] = static_cast<std::uint8_t>(l & 0xF);
      } else {
        sc[j - 8] |= static_cast<std::uint8_t>((l & 0xF) << 4);
      }
      sc[j % 4 + 8] |= static_cast<std::uint8_t>((l >> 4) << (2 * (j / 4)));
    }
    store_f16(b + q3k::kD, 1 / iscale);
  } else {
    store_f16(b + q3k::kD, 0.f);
  }

  for (int j = 0; j < 16; ++j) {
    const float d =
        load_f16(b + q3k::kD) * static_cast<float>(q3k_scale(j, sc) - 32);
    if (d == 0) continue;
    for (int i = 16 * j; i < 16 * j + 16; ++i) {
      const int l = std::clamp(nearest_int(x[i] / d), -4, 3);
      L[i] = static_cast<std::int8_t>(l + 4);
    }
  }

  // The high bit goes to hmask[e % 32] bit e / 32; what is left is 2 bits.
  std::uint8_t low[kSuperBlock];
  std::uint8_t* hmask = b + q3k::kHmask;
  std::fill(hmask, hmask + 32, std::uint8_t{0});
  for (int e = 0; e < kSuperBlock; ++e) {
    int l = L[e];
    if (l > 3) {
      hmask[e % 32] |= static_cast<std::uint8_t>(1 << (e / 32));
      l -= 4;
    }
    low[e] = static_cast<std::uint8_t>(l);
  }
  pack_crumbs(low, b + q3k::kQs);
}

// ---------------------------------------------------------------------------
// Q4_K and Q5_K share their scale search and scale table; only the code
// width (and so nmax and the candidate range) and the code packing differ.

void dequantize_q4_k_block(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + q4k::kD);
  const float dmin = load_f16(b + q4k::kDmin);
  for (int j = 0; j < 8; ++j) {
    const ScaleMin sm = scale_min_k4(j, b + q4k::kScales);
    const float dl = d * static_cast<float>(sm.scale);
    const float ml = dmin * static_cast<float>(sm.min);
    const std::uint8_t* q = b + q4k::kQs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 32; ++l) {
      y[32 * j + l] = dl * static_cast<float>((q[l] >> shift) & 0xF) - ml;
    }
  }
}

void dequantize_q5_k_block(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + q5k::kD);
  const float dmin = load_f16(b + q5k::kDmin);
  const std::uint8_t* qh = b + q5k::kQh;
  for (int j = 0; j < 8; ++j) {
    const ScaleMin sm = scale_min_k4(j, b + q5k::kScales);
    const float dl = d * static_cast<float>(sm.scale);
    const float ml = dmin * static_cast<float>(sm.min);
    const std::uint8_t* q = b + q5k::kQs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; l < 32; ++l) {
      const int code = ((q[l] >> shift) & 0xF) + ((qh[l] >> j) & 1 ? 16 : 0);
      y[32 * j + l] = dl * static_cast<float>(code) - ml;
    }
  }
}

// Shared front half of the Q4_K / Q5_K quantisers: searches each 32-element
// sub-block, writes d, dmin and the scale table, and leaves in L the codes
// (0..nmax) re-rounded against the scales as stored.
void quantize_k4_scales_and_codes(const float* x, const ScaleSearch& search,
                                  std::uint8_t* d_at, std::uint8_t* dmin_at,
                                  std::uint8_t* table, std::uint8_t* L) {
  constexpr float kScaleMax = 63.f;  // 6-bit sub-block scales and mins
  float weights[32];
  float scales[8];
  float mins[8];
  float max_scale = 0;  // the min is subtracted, so scales are positive
  float max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    // Weights favour large magnitudes over a floor of the RMS.
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xj[l] * xj[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xj[l]);
    const AffineFit fit = search_scale_min(xj, weights, 32, search, L + 32 * j);
    scales[j] = fit.scale;
    mins[j] = fit.min;
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? kScaleMax / max_scale : 0.f;
  const float inv_min = max_min > 0 ? kScaleMax / max_min : 0.f;
  std::uint8_t ls[8];
  std::uint8_t lm[8];
  for (int j = 0; j < 8; ++j) {
    // ggml narrows to uint8 before capping at 63.
    ls[j] = std::min<std::uint8_t>(
        63, static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j])));
    lm[j] = std::min<std::uint8_t>(
        63, static_cast<std::uint8_t>(nearest_int(inv_min * mins[j])));
  }
  pack_scale_min_k4(ls, lm, table);
  store_f16(d_at, max_scale / kScaleMax);
  store_f16(dmin_at, max_min / kScaleMax);

  for (int j = 0; j < 8; ++j) {
    const ScaleMin sm = scale_min_k4(j, table);
    const float d = load_f16(d_at) * static_cast<float>(sm.scale);
    if (d == 0) continue;  // keeps the search's codes
    const float dm = load_f16(dmin_at) * static_cast<float>(sm.min);
    for (int i = 32 * j; i < 32 * j + 32; ++i) {
      L[i] = static_cast<std::uint8_t>(
          std::clamp(nearest_int((x[i] + dm) / d), 0, search.nmax));
    }
  }
}

void quantize_q4_k_block(const float* x, std::uint8_t* b) {
  constexpr ScaleSearch kSearch{15, -1.f, 0.1f, 20, false};
  std::uint8_t L[kSuperBlock];
  quantize_k4_scales_and_codes(x, kSearch, b + q4k::kD, b + q4k::kDmin,
                               b + q4k::kScales, L);
  std::uint8_t* q = b + q4k::kQs;
  for (int j = 0; j < kSuperBlock; j += 64) {
    for (int l = 0; l < 32; ++l) {
      q[l] = static_cast<std::uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
    q += 32;
  }
}

void quantize_q5_k_block(const float* x, std::uint8_t* b) {
  constexpr ScaleSearch kSearch{31, -0.5f, 0.1f, 15, false};
  std::uint8_t L[kSuperBlock];
  quantize_k4_scales_and_codes(x, kSearch, b + q5k::kD, b + q5k::kDmin,
                               b + q5k::kScales, L);
  std::uint8_t* qh = b + q5k::kQh;
  std::fill(qh, qh + 32, std::uint8_t{0});
  std::uint8_t* q = b + q5k::kQs;
  for (int j = 0; j < 8; j += 2) {
    for (int l = 0; l < 32; ++l) {
      int lo = L[32 * j + l];
      int hi = L[32 * j + 32 + l];
      if (lo > 15) {
        lo -= 16;
        qh[l] |= static_cast<std::uint8_t>(1 << j);
      }
      if (hi > 15) {
        hi -= 16;
        qh[l] |= static_cast<std::uint8_t>(1 << (j + 1));
      }
      q[l] = static_cast<std::uint8_t>(lo | (hi << 4));
    }
    q += 32;
  }
}

// ---------------------------------------------------------------------------
// Q6_K

void dequantize_q6_k_block(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + q6k::kD);
  // Element e = 128 h + 32 t + l; its sub-block e / 16 = 8 h + 2 t + l / 16.
  // Looping that way keeps the byte arithmetic out of the inner loop, which
  // the compiler then vectorises.
  for (int h = 0; h < 2; ++h) {
    const std::uint8_t* ql = b + q6k::kQl + 64 * h;
    const std::uint8_t* qh = b + q6k::kQh + 32 * h;
    for (int t = 0; t < 4; ++t) {
      const std::uint8_t* low = ql + 32 * (t & 1);
      const int low_shift = 4 * (t / 2), high_shift = 2 * t;
      for (int half = 0; half < 2; ++half) {
        const auto sc =
            static_cast<std::int8_t>(b[q6k::kScales + 8 * h + 2 * t + half]);
        // (d * scale) * code, the reference's order.
        const float ds = d * static_cast<float>(sc);
        float* out = y + 128 * h + 32 * t + 16 * half;
        for (int l = 16 * half; l < 16 * half + 16; ++l) {
          const int lo = (low[l] >> low_shift) & 0xF;
          const int hi = (qh[l] >> high_shift) & 3;
          out[l - 16 * half] = ds * static_cast<float>((lo | (hi << 4)) - 32);
        }
      }
    }
  }
}

void quantize_q6_k_block(const float* x, std::uint8_t* b) {
  std::int8_t L[kSuperBlock];
  float scales[16];
  for (int j = 0; j < 16; ++j) {
    scales[j] = search_symmetric_scale(x + 16 * j, 16, 32, L + 16 * j);
  }
  // The signed scale of largest magnitude.
  const auto [max_abs_scale, max_scale] = signed_absmax(scales, 16);
  if (max_abs_scale < kGroupMaxEps) {
    std::fill(b, b + q6k::kBytes, std::uint8_t{0});  // d = +0 too
    return;
  }

  // As Q3_K: the sign goes into d so the largest scale maps to -128.
  const float iscale = -128.f / max_scale;
  store_f16(b + q6k::kD, 1 / iscale);
  auto* sc = b + q6k::kScales;
  for (int j = 0; j < 16; ++j) {
    sc[j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(
        std::min(127, nearest_int(iscale * scales[j]))));
  }

  for (int j = 0; j < 16; ++j) {
    const float d = load_f16(b + q6k::kD) *
                    static_cast<float>(static_cast<std::int8_t>(sc[j]));
    if (d == 0) continue;  // keeps the search's codes
    for (int i = 16 * j; i < 16 * j + 16; ++i) {
      const int l = std::clamp(nearest_int(x[i] / d), -32, 31);
      L[i] = static_cast<std::int8_t>(l + 32);
    }
  }

  for (int h = 0; h < 2; ++h) {
    const std::int8_t* Lh = L + 128 * h;
    std::uint8_t* ql = b + q6k::kQl + 64 * h;
    std::uint8_t* qh = b + q6k::kQh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      const int q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
      ql[l] = static_cast<std::uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
      ql[l + 32] = static_cast<std::uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
      qh[l] = static_cast<std::uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) |
                                        ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
    }
  }
}

// ---------------------------------------------------------------------------
// Q8_K

void dequantize_q8_k_block(const std::uint8_t* b, float* y) {
  const float d = load_f32(b + q8k::kD);
  for (int e = 0; e < kSuperBlock; ++e) {
    y[e] = d * static_cast<float>(static_cast<std::int8_t>(b[q8k::kQs + e]));
  }
}

void quantize_q8_k_block(const float* x, std::uint8_t* b) {
  const auto [amax, max] = signed_absmax(x, kSuperBlock);
  if (amax == 0) {
    // ggml leaves bsums as they were here; we write their true value, 0.
    std::fill(b, b + q8k::kBytes, std::uint8_t{0});
    return;
  }
  // -127, not -128: ggml keeps codes symmetric for its IQ2 dot products.
  const float iscale = -127.f / max;
  std::int8_t* qs = reinterpret_cast<std::int8_t*>(b + q8k::kQs);
  for (int e = 0; e < kSuperBlock; ++e) {
    qs[e] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * x[e])));
  }
  for (int j = 0; j < 16; ++j) {
    int sum = 0;
    for (int l = 0; l < 16; ++l) sum += qs[16 * j + l];
    store_u16(b + q8k::kBsums + 2 * j,
              static_cast<std::uint16_t>(static_cast<std::int16_t>(sum)));
  }
  store_f32(b + q8k::kD, 1 / iscale);
}

// ---------------------------------------------------------------------------

template <int kBytes, void (*Decode)(const std::uint8_t*, float*)>
void dequantize_all(const std::uint8_t* blocks, float* out,
                    std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    Decode(blocks + i * kBytes, out + i * kSuperBlock);
  }
}

template <int kBytes, void (*Encode)(const float*, std::uint8_t*)>
void quantize_all(const float* in, std::uint8_t* blocks, std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    Encode(in + i * kSuperBlock, blocks + i * kBytes);
  }
}

}  // namespace

#define TESSEL_DEFINE_K_CODEC(name, layout)                                \
  void dequantize_##name(const std::uint8_t* blocks, float* out,           \
                         std::int64_t nblocks) {                           \
    dequantize_all<layout::kBytes, dequantize_##name##_block>(blocks, out, \
                                                              nblocks);    \
  }                                                                        \
  void quantize_##name(const float* in, std::uint8_t* blocks,              \
                       std::int64_t nblocks) {                             \
    quantize_all<layout::kBytes, quantize_##name##_block>(in, blocks,      \
                                                          nblocks);        \
  }

TESSEL_DEFINE_K_CODEC(q2_k, q2k)
TESSEL_DEFINE_K_CODEC(q3_k, q3k)
TESSEL_DEFINE_K_CODEC(q4_k, q4k)
TESSEL_DEFINE_K_CODEC(q5_k, q5k)
TESSEL_DEFINE_K_CODEC(q6_k, q6k)
TESSEL_DEFINE_K_CODEC(q8_k, q8k)

#undef TESSEL_DEFINE_K_CODEC

}  // namespace tessel::quant

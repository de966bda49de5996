// Compiled once per Highway target. See scale_search_simd.hpp for the
// contract.
//
// ggml's searches try 16-21 scales per sub-block, each a pass over the
// sub-block's values whose sums are sequential f32 adds (and for IQ4 a
// bisection of the codebook per value): most of a Q4_K, Q6_K or IQ4_XS
// quantisation was those passes on one scalar lane. Here each lane takes
// one candidate. The symmetric and IQ4 candidates are independent; the
// affine ones are until one improves the fit (it moves `min`, which the
// later ones use), so quant/k_blocks.cpp runs the candidates after an
// improvement again from the new state (about 2.7 times per sub-block of
// normal data).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/scale_search_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "backends/cpu/simd/scale_search_simd.hpp"
#include "core/check.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<DF>;

// quant/scalars.hpp's nearest_int on every lane: adding 1.5 * 2^23 leaves
// the rounded integer in the low mantissa bits.
HWY_INLINE hn::Vec<DI> nearest_int(hn::Vec<DF> v) {
  const DF df;
  const DI di;
  const auto bits = hn::BitCast(di, hn::Add(v, hn::Set(df, 12582912.f)));
  return hn::Sub(hn::And(bits, hn::Set(di, 0x007fffff)),
                 hn::Set(di, 0x00400000));
}

// Candidates first, first + 1, ..., one a lane, as f32.
HWY_INLINE hn::Vec<DF> candidates_from(int first) {
  const DI di;
  return hn::ConvertTo(DF(), hn::Add(hn::Iota(di, 0), hn::Set(di, first)));
}

// The first `count` lanes of v (count <= Lanes) to out.
HWY_INLINE void store_first(hn::Vec<DF> v, int count, float* out) {
  const DF df;
  HWY_ALIGN float lanes[hn::MaxLanes(df)];
  hn::Store(v, df, lanes);
  std::copy(lanes, lanes + count, out);
}

// in[0, count) in the first lanes (count <= Lanes), zeros after.
HWY_INLINE hn::Vec<DF> load_first(const float* in, int count) {
  const DF df;
  HWY_ALIGN float lanes[hn::MaxLanes(df)] = {};
  std::copy(in, in + count, lanes);
  return hn::Load(df, lanes);
}

constexpr int kMaxValues = 32;  // a sub-block: 16 (Q2_K) or 32 values

static void FitScaleMinStepsImpl(const ScaleMinSteps& p, int first, int count,
                                 float* scale_out, float* min_out,
                                 float* error_out) {
  TESSEL_ASSERT(p.n <= kMaxValues);  // codes[] below holds kMaxValues rows
  const DF df;
  const DI di;
  const int lanes = static_cast<int>(hn::Lanes(df));
  const auto min = hn::Set(df, p.min);
  const auto range = hn::Set(df, p.max - p.min);
  const auto zero_i = hn::Zero(di);
  const auto nmax_i = hn::Set(di, p.nmax);
  const auto sum_w = hn::Set(df, p.sum_w);
  const auto sum_x = hn::Set(df, p.sum_x);
  const auto nan = hn::Set(df, std::numeric_limits<float>::quiet_NaN());
  // The codes of the first pass, which the error pass reads again.
  HWY_ALIGN float codes[kMaxValues * hn::MaxLanes(df)];
  for (int j0 = 0; j0 < count; j0 += lanes) {
    const auto step = candidates_from(first + j0);
    const auto iscale = hn::Div(
        hn::Add(
            hn::Add(hn::Set(df, p.rmin), hn::Mul(hn::Set(df, p.rdelta), step)),
            hn::Set(df, static_cast<float>(p.nmax))),
        range);
    auto sum_l = hn::Zero(df), sum_l2 = hn::Zero(df), sum_xl = hn::Zero(df);
    for (int i = 0; i < p.n; ++i) {
      const auto xi = hn::Set(df, p.x[i]);
      const auto code = hn::ConvertTo(
          df, hn::Min(hn::Max(nearest_int(hn::Mul(iscale, hn::Sub(xi, min))),
                              zero_i),
                      nmax_i));
      hn::Store(code, df, codes + i * lanes);
      const auto wl = hn::Mul(hn::Set(df, p.weights[i]), code);
      sum_l = hn::Add(sum_l, wl);
      sum_l2 = hn::Add(sum_l2, hn::Mul(wl, code));
      sum_xl = hn::Add(sum_xl, hn::Mul(wl, xi));
    }
    const auto det = hn::Sub(hn::Mul(sum_w, sum_l2), hn::Mul(sum_l, sum_l));
    auto this_scale =
        hn::Div(hn::Sub(hn::Mul(sum_w, sum_xl), hn::Mul(sum_x, sum_l)), det);
    auto this_min =
        hn::Div(hn::Sub(hn::Mul(sum_l2, sum_x), hn::Mul(sum_l, sum_xl)), det);
    // A positive min is clamped to 0 and the scale refitted through it.
    const auto positive = hn::Gt(this_min, hn::Zero(df));
    this_scale = hn::IfThenElse(positive, hn::Div(sum_xl, sum_l2), this_scale);
    this_min = hn::IfThenZeroElse(positive, this_min);
    auto error = hn::Zero(df);
    for (int i = 0; i < p.n; ++i) {
      const auto xi = hn::Set(df, p.x[i]);
      const auto code = hn::Load(df, codes + i * lanes);
      auto diff = hn::Sub(hn::Add(hn::Mul(this_scale, code), this_min), xi);
      diff = p.use_mad ? hn::Abs(diff) : hn::Mul(diff, diff);
      error = hn::Add(error, hn::Mul(hn::Set(df, p.weights[i]), diff));
    }
    // det > 0 is false for NaN too, as the scalar `if (D > 0)`.
    error = hn::IfThenElse(hn::Gt(det, hn::Zero(df)), error, nan);
    const int take = std::min(lanes, count - j0);
    store_first(this_scale, take, scale_out + j0);
    store_first(this_min, take, min_out + j0);
    store_first(error, take, error_out + j0);
  }
}

static void SymmetricSumsStepsImpl(const float* x, int n, int nmax, float max,
                                   int first, int count, float* sumlx_out,
                                   float* suml2_out) {
  const DF df;
  const DI di;
  const int lanes = static_cast<int>(hn::Lanes(df));
  const auto low = hn::Set(di, -nmax);
  const auto high = hn::Set(di, nmax - 1);
  for (int j0 = 0; j0 < count; j0 += lanes) {
    const auto step = candidates_from(first + j0);
    const auto iscale =
        hn::Div(hn::Neg(hn::Add(hn::Set(df, static_cast<float>(nmax)),
                                hn::Mul(hn::Set(df, 0.1f), step))),
                hn::Set(df, max));
    auto sumlx = hn::Zero(df), suml2 = hn::Zero(df);
    for (int i = 0; i < n; ++i) {
      const auto xi = hn::Set(df, x[i]);
      const auto code = hn::ConvertTo(
          df, hn::Min(hn::Max(nearest_int(hn::Mul(iscale, xi)), low), high));
      const float w = x[i] * x[i];
      sumlx = hn::Add(sumlx, hn::Mul(hn::Set(df, w * x[i]), code));
      suml2 = hn::Add(suml2, hn::Mul(hn::Mul(hn::Set(df, w), code), code));
    }
    const int take = std::min(lanes, count - j0);
    store_first(sumlx, take, sumlx_out + j0);
    store_first(suml2, take, suml2_out + j0);
  }
}

static void Iq4SumsImpl(const float* x, const std::int8_t* codebook,
                        const float* ids, int count, float* sumqx_out,
                        float* sumq2_out) {
  constexpr int kValues = 32;
  constexpr int kEntries = 16;
  const DF df;
  const int lanes = static_cast<int>(hn::Lanes(df));
  float entry[kEntries];
  for (int k = 0; k < kEntries; ++k) entry[k] = codebook[k];
  const auto first = hn::Set(df, entry[0]);
  const auto last = hn::Set(df, entry[kEntries - 1]);
  for (int c0 = 0; c0 < count; c0 += lanes) {
    const int take = std::min(lanes, count - c0);
    const auto id = load_first(ids + c0, take);
    auto sumqx = hn::Zero(df), sumq2 = hn::Zero(df);
    for (int j = 0; j < kValues; ++j) {
      const auto xj = hn::Set(df, x[j]);
      const auto v = hn::Mul(id, xj);
      // The bracket entry[k] <= v < entry[k + 1] that ggml's bisection
      // ends on, by a scan (v past the last entry is settled below).
      auto below = first;
      auto above = hn::Set(df, entry[1]);
      for (int k = 1; k < kEntries - 1; ++k) {
        const auto reached = hn::Le(hn::Set(df, entry[k]), v);
        below = hn::IfThenElse(reached, hn::Set(df, entry[k]), below);
        above = hn::IfThenElse(reached, hn::Set(df, entry[k + 1]), above);
      }
      auto q = hn::IfThenElse(hn::Lt(hn::Sub(v, below), hn::Sub(above, v)),
                              below, above);
      q = hn::IfThenElse(hn::Le(v, first), first, q);
      // v >= last, or NaN (where ggml's bisection ends on the last entry;
      // IsNaN because Ne is an ordered compare on AVX2 and AVX-512).
      q = hn::IfThenElse(hn::Or(hn::Ge(v, last), hn::IsNaN(v)), last, q);
      const auto wq = hn::Mul(hn::Set(df, x[j] * x[j]), q);
      sumqx = hn::Add(sumqx, hn::Mul(wq, xj));
      sumq2 = hn::Add(sumq2, hn::Mul(wq, q));
    }
    store_first(sumqx, take, sumqx_out + c0);
    store_first(sumq2, take, sumq2_out + c0);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(FitScaleMinStepsImpl);
HWY_EXPORT(SymmetricSumsStepsImpl);
HWY_EXPORT(Iq4SumsImpl);

void fit_scale_min_steps(const ScaleMinSteps& p, int first, int count,
                         float* scale, float* min, float* error) {
  HWY_DYNAMIC_DISPATCH(FitScaleMinStepsImpl)
  (p, first, count, scale, min, error);
}

void symmetric_sums_steps(const float* x, int n, int nmax, float max, int first,
                          int count, float* sumlx, float* suml2) {
  HWY_DYNAMIC_DISPATCH(SymmetricSumsStepsImpl)
  (x, n, nmax, max, first, count, sumlx, suml2);
}

void iq4_sums(const float* x, const std::int8_t* codebook, const float* ids,
              int count, float* sumqx, float* sumq2) {
  HWY_DYNAMIC_DISPATCH(Iq4SumsImpl)(x, codebook, ids, count, sumqx, sumq2);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

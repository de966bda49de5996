// Compiled once per Highway target. See attention_simd.hpp for the contracts.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/attention_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cmath>
#include <limits>

#include "backends/cpu/simd/attention_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// exp(x - m) for finite m; exactly 0 where x is -Inf (masked).
HWY_INLINE V shifted_exp(D d, V x, V m) {
  const V y = hn::Exp(d, hn::Max(hn::Sub(x, m), hn::Set(d, -104.0f)));
  return hn::IfThenElseZero(hn::Gt(x, hn::Set(d, kNegInf)), y);
}

static void OnlineSoftmaxTileImpl(float* s, std::int64_t rows,
                                  std::int64_t cols, std::int64_t ld, float* m,
                                  float* l, float* corr) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    V vmax = hn::Set(d, kNegInf);
    auto nan = hn::FirstN(d, 0);
    std::int64_t j = 0;
    for (; j + N <= cols; j += N) {
      const V x = hn::LoadU(d, row + j);
      vmax = hn::Max(vmax, x);
      nan = hn::Or(nan, hn::IsNaN(x));
    }
    if (j < cols) {
      const V x =
          load_partial(d, row + j, static_cast<std::size_t>(cols - j), kNegInf);
      vmax = hn::Max(vmax, x);
      nan = hn::Or(nan, hn::IsNaN(x));
    }
    const float tile_max = hn::GetLane(hn::MaxOfLanes(d, vmax));
    const bool saw_nan = !hn::AllFalse(d, nan);
    if (saw_nan || std::isnan(m[r])) {
      // A NaN score poisons its row, as in softmax: the output becomes NaN.
      const float q = std::numeric_limits<float>::quiet_NaN();
      for (j = 0; j < cols; ++j) row[j] = q;
      m[r] = l[r] = q;
      corr[r] = 1.0f;
      continue;
    }
    const float m_new = std::max(m[r], tile_max);
    if (m_new == kNegInf) {
      // Nothing to attend to yet: the tile contributes nothing.
      for (j = 0; j < cols; ++j) row[j] = 0.0f;
      corr[r] = 1.0f;
      continue;
    }
    const V vm = hn::Set(d, m_new);
    V acc = hn::Zero(d);
    for (j = 0; j + N <= cols; j += N) {
      const V e = shifted_exp(d, hn::LoadU(d, row + j), vm);
      hn::StoreU(e, d, row + j);
      acc = hn::Add(acc, e);
    }
    if (j < cols) {
      const auto count = static_cast<std::size_t>(cols - j);
      const V e = hn::IfThenElseZero(
          hn::FirstN(d, count),
          shifted_exp(d, load_partial(d, row + j, count, kNegInf), vm));
      store_partial(d, e, row + j, count);
      acc = hn::Add(acc, e);
    }
    const float c = m[r] == kNegInf ? 0.0f : std::exp(m[r] - m_new);
    l[r] = l[r] * c + hn::GetLane(hn::SumOfLanes(d, acc));
    corr[r] = c;
    m[r] = m_new;
  }
}

// Applies body(row offset, column, lane count or 0 for a full vector) over
// a rows x cols tile of row stride ld.
template <class Body>
HWY_INLINE void each_tile_vector(std::int64_t rows, std::int64_t cols,
                                 std::int64_t ld, Body body) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t j = 0;
    for (; j + N <= cols; j += N) body(r, r * ld + j, std::size_t{0});
    if (j < cols) body(r, r * ld + j, static_cast<std::size_t>(cols - j));
  }
}

static void SoftcapTileImpl(float* s, std::int64_t rows, std::int64_t cols,
                            std::int64_t ld, float cap, float* tanh_out) {
  const D d;
  const V vcap = hn::Set(d, cap);
  const V inv = hn::Set(d, 1.0f / cap);
  each_tile_vector(
      rows, cols, ld, [&](std::int64_t, std::int64_t at, std::size_t count) {
        const V t = hn::Tanh(d, hn::Mul(load_lanes(d, s + at, count), inv));
        if (tanh_out != nullptr) store_lanes(d, t, tanh_out + at, count);
        store_lanes(d, hn::Mul(vcap, t), s + at, count);
      });
}

static void SoftmaxWeightsTileImpl(float* s, std::int64_t rows,
                                   std::int64_t cols, std::int64_t ld,
                                   const float* m, const float* l) {
  const D d;
  each_tile_vector(
      rows, cols, ld, [&](std::int64_t r, std::int64_t at, std::size_t count) {
        if (l[r] == 0.0f) {
          store_lanes(d, hn::Zero(d), s + at, count);
          return;
        }
        // A NaN row (m = l = NaN) stays NaN: exp(x - NaN) is NaN.
        const V x = count == 0 ? hn::LoadU(d, s + at)
                               : load_partial(d, s + at, count, kNegInf);
        const V e = std::isnan(m[r]) ? hn::Set(d, m[r])
                                     : shifted_exp(d, x, hn::Set(d, m[r]));
        store_lanes(d, hn::Mul(e, hn::Set(d, 1.0f / l[r])), s + at, count);
      });
}

static void ScoreGradientTileImpl(const float* p, float* ds, const float* t,
                                  std::int64_t rows, std::int64_t cols,
                                  std::int64_t ld, const float* delta) {
  const D d;
  const V one = hn::Set(d, 1.0f);
  each_tile_vector(
      rows, cols, ld, [&](std::int64_t r, std::int64_t at, std::size_t count) {
        V g = hn::Mul(
            load_lanes(d, p + at, count),
            hn::Sub(load_lanes(d, ds + at, count), hn::Set(d, delta[r])));
        if (t != nullptr) {
          const V tv = load_lanes(d, t + at, count);
          g = hn::Mul(g, hn::NegMulAdd(tv, tv, one));
        }
        store_lanes(d, g, ds + at, count);
      });
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(OnlineSoftmaxTileImpl);
HWY_EXPORT(SoftcapTileImpl);
HWY_EXPORT(SoftmaxWeightsTileImpl);
HWY_EXPORT(ScoreGradientTileImpl);

void online_softmax_tile(float* s, std::int64_t rows, std::int64_t cols,
                         std::int64_t ld, float* m, float* l, float* corr) {
  HWY_DYNAMIC_DISPATCH(OnlineSoftmaxTileImpl)(s, rows, cols, ld, m, l, corr);
}

void softcap_tile(float* s, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld, float cap, float* tanh_out) {
  HWY_DYNAMIC_DISPATCH(SoftcapTileImpl)(s, rows, cols, ld, cap, tanh_out);
}

void softmax_weights_tile(float* s, std::int64_t rows, std::int64_t cols,
                          std::int64_t ld, const float* m, const float* l) {
  HWY_DYNAMIC_DISPATCH(SoftmaxWeightsTileImpl)(s, rows, cols, ld, m, l);
}

void score_gradient_tile(const float* p, float* ds, const float* t,
                         std::int64_t rows, std::int64_t cols, std::int64_t ld,
                         const float* delta) {
  HWY_DYNAMIC_DISPATCH(ScoreGradientTileImpl)(p, ds, t, rows, cols, ld, delta);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

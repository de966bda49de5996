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
    float tile_max = hn::GetLane(hn::MaxOfLanes(d, vmax));
    bool saw_nan = !hn::AllFalse(d, nan);
    for (; j < cols; ++j) {
      tile_max = std::max(tile_max, row[j]);
      saw_nan = saw_nan || std::isnan(row[j]);
    }
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

static void SoftcapTileImpl(float* s, std::int64_t rows, std::int64_t cols,
                            std::int64_t ld, float cap) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V vcap = hn::Set(d, cap);
  const V inv = hn::Set(d, 1.0f / cap);
  auto f = [&](V x) { return hn::Mul(vcap, hn::Tanh(d, hn::Mul(x, inv))); };
  for (std::int64_t r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    std::int64_t j = 0;
    for (; j + N <= cols; j += N)
      hn::StoreU(f(hn::LoadU(d, row + j)), d, row + j);
    if (j < cols) {
      const auto count = static_cast<std::size_t>(cols - j);
      store_partial(d, f(load_partial(d, row + j, count, 0.0f)), row + j,
                    count);
    }
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(OnlineSoftmaxTileImpl);
HWY_EXPORT(SoftcapTileImpl);

void online_softmax_tile(float* s, std::int64_t rows, std::int64_t cols,
                         std::int64_t ld, float* m, float* l, float* corr) {
  HWY_DYNAMIC_DISPATCH(OnlineSoftmaxTileImpl)(s, rows, cols, ld, m, l, corr);
}

void softcap_tile(float* s, std::int64_t rows, std::int64_t cols,
                  std::int64_t ld, float cap) {
  HWY_DYNAMIC_DISPATCH(SoftcapTileImpl)(s, rows, cols, ld, cap);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

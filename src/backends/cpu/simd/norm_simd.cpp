// Compiled once per Highway target. See norm_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/norm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cmath>

#include "backends/cpu/simd/norm_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// sum over the row of term(x) (term(fill) must be 0): f32 lanes over blocks
// of 64 vectors, block totals in f64, as the reductions do.
template <class T, class Term>
HWY_INLINE double row_sum(const T* x, std::int64_t n, float fill, Term term) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  double total = 0.0;
  V acc = hn::Zero(d);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    acc = hn::Add(acc, term(load(d, x + i)));
    if ((i / N) % 64 == 63) {
      total += hn::GetLane(hn::SumOfLanes(d, acc));
      acc = hn::Zero(d);
    }
  }
  if (i < n) {
    acc = hn::Add(acc, term(load_partial(
                           d, x + i, static_cast<std::size_t>(n - i), fill)));
  }
  return total + hn::GetLane(hn::SumOfLanes(d, acc));
}

template <class T>
RowStats normalize_typed(NormKind kind, const T* x, T* y, std::int64_t n,
                         float eps, const NormAffine& affine) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  RowStats s;
  double var;
  if (kind == NormKind::Layer) {
    s.mean = static_cast<float>(row_sum(x, n, 0.0f, [](V v) { return v; }) /
                                static_cast<double>(n));
    // Two passes: the centred sum of squares does not cancel.
    const V m = hn::Set(d, s.mean);
    var = row_sum(x, n, s.mean,
                  [m](V v) {
                    const V c = hn::Sub(v, m);
                    return hn::Mul(c, c);
                  }) /
          static_cast<double>(n);
  } else {
    var = row_sum(x, n, 0.0f, [](V v) { return hn::Mul(v, v); }) /
          static_cast<double>(n);
  }
  s.rstd = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));

  const V vm = hn::Set(d, s.mean);
  const V vr = hn::Set(d, s.rstd);
  if (affine.segment == 1) {
    // Per-element weights: y = (x - mean) * (rstd * w) + b.
    auto one = [&](V v, std::int64_t i, std::size_t count) {
      const V scale = affine.weight != nullptr
                          ? hn::Mul(vr, load_lanes(d, affine.weight + i, count))
                          : vr;
      const V shift = affine.bias != nullptr
                          ? load_lanes(d, affine.bias + i, count)
                          : hn::Zero(d);
      return hn::MulAdd(hn::Sub(v, vm), scale, shift);
    };
    std::int64_t i = 0;
    for (; i + N <= n; i += N) store(d, one(load(d, x + i), i, 0), y + i);
    if (i < n) {
      const auto count = static_cast<std::size_t>(n - i);
      store_partial(d, one(load_partial(d, x + i, count, 0.0f), i, count),
                    y + i, count);
    }
    return s;
  }
  // Per-segment weights: y = x * scale + shift with scalars per segment.
  const std::int64_t seg = affine.segment;
  for (std::int64_t k = 0; k * seg < n; ++k) {
    const float w = affine.weight != nullptr ? affine.weight[k] : 1.0f;
    const float b = affine.bias != nullptr ? affine.bias[k] : 0.0f;
    const float scale = s.rstd * w;
    const V vs = hn::Set(d, scale);
    const V vb = hn::Set(d, b - s.mean * scale);
    const T* xs = x + k * seg;
    T* ys = y + k * seg;
    std::int64_t i = 0;
    for (; i + N <= seg; i += N)
      store(d, hn::MulAdd(load(d, xs + i), vs, vb), ys + i);
    if (i < seg) {
      const auto count = static_cast<std::size_t>(seg - i);
      store_partial(d, hn::MulAdd(load_partial(d, xs + i, count, 0.0f), vs, vb),
                    ys + i, count);
    }
  }
  return s;
}

static RowStats NormalizeRowImpl(int kind, int storage, const void* x, void* y,
                                 std::int64_t n, float eps,
                                 const NormAffine& affine) {
  const auto k = static_cast<NormKind>(kind);
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32:
      return normalize_typed(k, static_cast<const float*>(x),
                             static_cast<float*>(y), n, eps, affine);
    case FloatStorage::BF16:
      return normalize_typed(k, static_cast<const hwy::bfloat16_t*>(x),
                             static_cast<hwy::bfloat16_t*>(y), n, eps, affine);
    case FloatStorage::F16:
      return normalize_typed(k, static_cast<const hwy::float16_t*>(x),
                             static_cast<hwy::float16_t*>(y), n, eps, affine);
  }
  return {};
}

static void NormalizeRowBackwardImpl(int kind, const float* x, const float* dy,
                                     const float* weight, std::int64_t n,
                                     float mean, float rstd, float* dx,
                                     float* dw, float* db) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V vm = hn::Set(d, mean), vr = hn::Set(d, rstd);
  // Lanes i.. of xhat, dy and gh; count 0 for a whole vector.
  auto lanes = [&](std::int64_t i, std::size_t count, V& xhat, V& g, V& gh) {
    g = load_lanes(d, dy + i, count);
    xhat = hn::Mul(hn::Sub(load_lanes(d, x + i, count), vm), vr);
    gh = weight != nullptr ? hn::Mul(g, load_lanes(d, weight + i, count)) : g;
  };
  V dot = hn::Zero(d), total = hn::Zero(d);
  std::int64_t i = 0;
  for (; i < n; i += N) {
    const auto count = static_cast<std::size_t>(i + N <= n ? 0 : n - i);
    V xhat, g, gh;
    lanes(i, count, xhat, g, gh);
    dot = hn::MulAdd(gh, xhat, dot);  // zero lanes past n add nothing
    total = hn::Add(total, gh);
  }
  const float inv_n = 1.0f / static_cast<float>(n);
  const V c1 = hn::Set(d, hn::GetLane(hn::SumOfLanes(d, dot)) * inv_n);
  const V c2 = hn::Set(d, kind == static_cast<int>(NormKind::Layer)
                              ? hn::GetLane(hn::SumOfLanes(d, total)) * inv_n
                              : 0.0f);
  for (i = 0; i < n; i += N) {
    const auto count = static_cast<std::size_t>(i + N <= n ? 0 : n - i);
    V xhat, g, gh;
    lanes(i, count, xhat, g, gh);
    const V dxv = hn::Mul(vr, hn::Sub(hn::NegMulAdd(xhat, c1, gh), c2));
    auto accumulate = [&](float* to, V v) {
      store_lanes(d, hn::Add(load_lanes(d, to + i, count), v), to + i, count);
    };
    store_lanes(d, dxv, dx + i, count);
    if (dw != nullptr) accumulate(dw, hn::Mul(g, xhat));
    if (db != nullptr) accumulate(db, g);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(NormalizeRowImpl);
HWY_EXPORT(NormalizeRowBackwardImpl);

void normalize_row_backward(NormKind kind, const float* x, const float* dy,
                            const float* weight, std::int64_t n, float mean,
                            float rstd, float* dx, float* dw, float* db) {
  HWY_DYNAMIC_DISPATCH(NormalizeRowBackwardImpl)
  (static_cast<int>(kind), x, dy, weight, n, mean, rstd, dx, dw, db);
}

RowStats normalize_row(NormKind kind, FloatStorage storage, const void* x,
                       void* y, std::int64_t n, float eps,
                       const NormAffine& affine) {
  return HWY_DYNAMIC_DISPATCH(NormalizeRowImpl)(
      static_cast<int>(kind), static_cast<int>(storage), x, y, n, eps, affine);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

// Compiled once per Highway target. See optimizer_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/optimizer_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include "backends/cpu/simd/optimizer_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The operations in the order of the composite form (and of PyTorch's
// single-tensor Adam), each rounded once: no fused multiply-adds (this file
// is built with -ffp-contract=off), so the fused step and the op-by-op
// step agree bit for bit.
static void AdamUpdateImpl(const AdamStep& s, std::int64_t n, float* param,
                           const float* grad, float* exp_avg,
                           float* exp_avg_sq) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V shrink = hn::Set(d, s.shrink), l2 = hn::Set(d, s.l2);
  const V keep1 = hn::Set(d, s.keep1), beta2 = hn::Set(d, s.beta2);
  const V keep2 = hn::Set(d, s.keep2), eps = hn::Set(d, s.eps);
  const V step = hn::Set(d, s.step_size), c2 = hn::Set(d, s.c2_root);
  auto one = [&](std::int64_t i, std::size_t count) {
    auto ld = [&](const float* from) { return load_lanes(d, from + i, count); };
    auto st = [&](V v, float* to) { store_lanes(d, v, to + i, count); };
    V p = ld(param);
    if (s.shrink != 1.0f) p = hn::Mul(p, shrink);
    V g = ld(grad);
    if (s.l2 != 0.0f) g = hn::Add(g, hn::Mul(p, l2));
    V m = ld(exp_avg);
    m = hn::Add(m, hn::Mul(hn::Sub(g, m), keep1));
    V v = ld(exp_avg_sq);
    v = hn::Add(hn::Mul(v, beta2), hn::Mul(hn::Mul(g, g), keep2));
    const V denom = hn::Add(hn::Div(hn::Sqrt(v), c2), eps);
    p = hn::Sub(p, hn::Mul(hn::Div(m, denom), step));
    st(m, exp_avg);
    st(v, exp_avg_sq);
    st(p, param);
  };
  std::int64_t i = 0;
  for (; i + N <= n; i += N) one(i, 0);
  if (i < n) one(i, static_cast<std::size_t>(n - i));
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(AdamUpdateImpl);

void adam_update(const AdamStep& s, std::int64_t n, float* param,
                 const float* grad, float* exp_avg, float* exp_avg_sq) {
  HWY_DYNAMIC_DISPATCH(AdamUpdateImpl)(s, n, param, grad, exp_avg, exp_avg_sq);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

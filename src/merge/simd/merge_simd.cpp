// Compiled once per Highway target. See merge_simd.hpp for the contracts.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "merge/simd/merge_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <algorithm>

#include "merge/simd/merge_simd.hpp"
#include "tessel/core/random.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::merge::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using cpu::simd::HWY_NAMESPACE::D;
using cpu::simd::HWY_NAMESPACE::first;
using cpu::simd::HWY_NAMESPACE::load;

static void WidenBf16Impl(const std::uint16_t* in, float* out, std::int64_t n) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const auto* h = reinterpret_cast<const hwy::bfloat16_t*>(in);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(load(d, h + i), d, out + i);
  for (; i < n; ++i) out[i] = first(h + i);
}

static void PackNonzeroImpl(const float* in, std::int64_t n,
                            std::uint8_t* out) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  if (N % 8 == 0) {
    // A vector's mask bits are whole bytes, lane 0 in bit 0.
    for (std::int64_t i = 0; i < n; i += N) {
      hn::StoreMaskBits(d, hn::Ne(hn::LoadU(d, in + i), hn::Zero(d)),
                        out + i / 8);
    }
    return;
  }
  for (std::int64_t i = 0; i < n; i += 8) {
    std::uint8_t byte = 0;
    for (int k = 0; k < 8; ++k) byte |= std::uint8_t(in[i + k] != 0.0f) << k;
    out[i / 8] = byte;
  }
}

// f64 lanes of half an f32 vector at a time: every product exact, the
// lanes added in Highway's fixed reduction order at the end.
static void AddDotSumsImpl(const float* a, const float* b, std::int64_t n,
                           double* acc) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const auto N = static_cast<std::int64_t>(hn::Lanes(dd));
  auto aa = hn::Zero(dd), bb = hn::Zero(dd), ab = hn::Zero(dd);
  for (std::int64_t i = 0; i < n; i += N) {
    const auto x = hn::PromoteTo(dd, hn::LoadU(df, a + i));
    const auto y = hn::PromoteTo(dd, hn::LoadU(df, b + i));
    aa = hn::MulAdd(x, x, aa);
    bb = hn::MulAdd(y, y, bb);
    ab = hn::MulAdd(x, y, ab);
  }
  acc[0] += hn::GetLane(hn::SumOfLanes(dd, aa));
  acc[1] += hn::GetLane(hn::SumOfLanes(dd, bb));
  acc[2] += hn::GetLane(hn::SumOfLanes(dd, ab));
}

static void AddL1SumsImpl(const float* d, const float* keep, std::int64_t n,
                          double* acc) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const auto N = static_cast<std::int64_t>(hn::Lanes(dd));
  auto all = hn::Zero(dd), kept = hn::Zero(dd);
  const auto zero = hn::Zero(dd);
  for (std::int64_t i = 0; i < n; i += N) {
    const auto m = hn::Abs(hn::PromoteTo(dd, hn::LoadU(df, d + i)));
    const auto k = hn::Ne(hn::PromoteTo(dd, hn::LoadU(df, keep + i)), zero);
    all = hn::Add(all, m);
    kept = hn::Add(kept, hn::IfThenElseZero(k, m));
  }
  acc[0] += hn::GetLane(hn::SumOfLanes(dd, all));
  acc[1] += hn::GetLane(hn::SumOfLanes(dd, kept));
}

static void Combine2Impl(float ca, const float* a, float cb, const float* b,
                         std::int64_t n, float* out) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const auto va = hn::Set(d, ca), vb = hn::Set(d, cb);
  for (std::int64_t i = 0; i < n; i += N) {
    hn::StoreU(hn::Add(hn::Mul(va, hn::LoadU(d, a + i)),
                       hn::Mul(vb, hn::LoadU(d, b + i))),
               d, out + i);
  }
}

// Philox4x32-10 on one block per 64-bit lane (the counter words in the low
// halves): MulEven gives the full 32 x 32 -> 64 products.
static void RandomKeepImpl(const std::uint32_t key[2], std::uint64_t stream,
                           std::int64_t first_element, std::int64_t n,
                           std::uint32_t threshold, float kept, float* out) {
#if HWY_TARGET == HWY_SCALAR
  // One lane cannot hold the 32-bit halves MulEven needs: the scalar
  // generator, word for word the same.
  for (std::int64_t b = 0; b < n / 4; ++b) {
    const auto block = static_cast<std::uint64_t>(first_element / 4 + b);
    const auto w = philox4x32_10({static_cast<std::uint32_t>(block),
                                  static_cast<std::uint32_t>(block >> 32),
                                  static_cast<std::uint32_t>(stream),
                                  static_cast<std::uint32_t>(stream >> 32)},
                                 {key[0], key[1]});
    for (int k = 0; k < 4; ++k) {
      out[4 * b + k] = (w[k] >> 8) < threshold ? kept : 0.0f;
    }
  }
#else
  constexpr std::uint32_t kMul0 = 0xD2511F53u;
  constexpr std::uint32_t kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u;
  constexpr std::uint32_t kWeyl1 = 0xBB67AE85u;
  const hn::ScalableTag<std::uint64_t> du;
  const hn::Repartition<std::uint32_t, decltype(du)> d32;
  const auto N = static_cast<std::int64_t>(hn::Lanes(du));
  constexpr std::int64_t kMaxLanes = 64;
  HWY_DASSERT(N <= kMaxLanes);
  const auto low = hn::Set(du, 0xffffffffull);
  const auto m0 = hn::BitCast(d32, hn::Set(du, kMul0));
  const auto m1 = hn::BitCast(d32, hn::Set(du, kMul1));
  const auto c2_start = hn::Set(du, stream & 0xffffffffull);
  const auto c3_start = hn::Set(du, stream >> 32);
  const std::int64_t blocks = n / 4;
  const std::int64_t block0 = first_element / 4;
  HWY_ALIGN std::uint64_t words[4][kMaxLanes];
  for (std::int64_t b = 0; b < blocks; b += N) {
    const auto counter = hn::Add(
        hn::Set(du, static_cast<std::uint64_t>(block0 + b)), hn::Iota(du, 0));
    auto c0 = hn::And(counter, low);
    auto c1 = hn::ShiftRight<32>(counter);
    auto c2 = c2_start;
    auto c3 = c3_start;
    std::uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; ++round) {
      const auto p0 = hn::MulEven(m0, hn::BitCast(d32, c0));
      const auto p1 = hn::MulEven(m1, hn::BitCast(d32, c2));
      c0 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p1), c1), hn::Set(du, k0));
      c1 = hn::And(p1, low);
      c2 = hn::Xor(hn::Xor(hn::ShiftRight<32>(p0), c3), hn::Set(du, k1));
      c3 = hn::And(p0, low);
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    hn::Store(c0, du, words[0]);
    hn::Store(c1, du, words[1]);
    hn::Store(c2, du, words[2]);
    hn::Store(c3, du, words[3]);
    const std::int64_t lanes = std::min(N, blocks - b);
    float* o = out + 4 * b;
    for (std::int64_t l = 0; l < lanes; ++l) {
      for (int k = 0; k < 4; ++k) {
        const auto w = static_cast<std::uint32_t>(words[k][l]);
        o[4 * l + k] = (w >> 8) < threshold ? kept : 0.0f;
      }
    }
  }
#endif
}

static void TaskBlockImpl(const TaskBlock& t) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const auto zero = hn::Zero(d);
  const auto one = hn::Set(d, 1.0f);
  const auto lambda = hn::Set(d, t.lambda);
  const auto weight_sum = hn::Set(d, t.weight_sum);
  for (std::int64_t i = 0; i < t.n; i += N) {
    const auto base = hn::LoadU(d, t.base + i);
    auto sum = zero;
    for (std::size_t m = 0; m < t.models; ++m) {
      auto delta = hn::Sub(hn::LoadU(d, t.x[m] + i), base);
      if (t.keep[m]) delta = hn::Mul(delta, hn::LoadU(d, t.keep[m] + i));
      delta = hn::Mul(delta, hn::Set(d, t.weight[m]));
      hn::StoreU(delta, d, t.deltas + std::int64_t(m) * t.n + i);
      sum = hn::Add(sum, delta);
    }
    auto mixed = sum;
    auto divisor = weight_sum;
    if (t.consensus != Consensus::None) {
      auto vote = sum;
      if (t.consensus == Consensus::Count) {
        vote = zero;
        for (std::size_t m = 0; m < t.models; ++m) {
          const auto delta = hn::LoadU(d, t.deltas + std::int64_t(m) * t.n + i);
          vote = hn::Add(vote,
                         hn::Sub(hn::IfThenElseZero(hn::Gt(delta, zero), one),
                                 hn::IfThenElseZero(hn::Lt(delta, zero), one)));
        }
      }
      const auto positive = hn::Ge(vote, zero);
      mixed = zero;
      divisor = zero;
      for (std::size_t m = 0; m < t.models; ++m) {
        const auto delta = hn::LoadU(d, t.deltas + std::int64_t(m) * t.n + i);
        const auto agree = hn::Or(hn::And(positive, hn::Gt(delta, zero)),
                                  hn::AndNot(positive, hn::Lt(delta, zero)));
        mixed = hn::Add(mixed, hn::IfThenElseZero(agree, delta));
        divisor = hn::Add(divisor,
                          hn::IfThenElseZero(agree, hn::Set(d, t.weight[m])));
      }
      divisor = hn::IfThenElse(hn::Eq(divisor, zero), one, divisor);
    }
    if (t.normalize) mixed = hn::Div(mixed, divisor);
    if (t.lambda != 1.0f) mixed = hn::Mul(mixed, lambda);
    hn::StoreU(hn::Add(base, mixed), d, t.out + i);
  }
}

}  // namespace tessel::merge::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::merge::simd {

HWY_EXPORT(WidenBf16Impl);
HWY_EXPORT(PackNonzeroImpl);
HWY_EXPORT(AddDotSumsImpl);
HWY_EXPORT(AddL1SumsImpl);
HWY_EXPORT(Combine2Impl);
HWY_EXPORT(RandomKeepImpl);
HWY_EXPORT(TaskBlockImpl);

void widen_bf16(const std::uint16_t* in, float* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenBf16Impl)(in, out, n);
}
void pack_nonzero(const float* in, std::int64_t n, std::uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(PackNonzeroImpl)(in, n, out);
}
void add_dot_sums(const float* a, const float* b, std::int64_t n, double* acc) {
  HWY_DYNAMIC_DISPATCH(AddDotSumsImpl)(a, b, n, acc);
}
void add_l1_sums(const float* d, const float* keep, std::int64_t n,
                 double* acc) {
  HWY_DYNAMIC_DISPATCH(AddL1SumsImpl)(d, keep, n, acc);
}
void combine2(float ca, const float* a, float cb, const float* b,
              std::int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(Combine2Impl)(ca, a, cb, b, n, out);
}
void random_keep(const std::uint32_t key[2], std::uint64_t stream,
                 std::int64_t first, std::int64_t n, std::uint32_t threshold,
                 float kept, float* out) {
  HWY_DYNAMIC_DISPATCH(RandomKeepImpl)
  (key, stream, first, n, threshold, kept, out);
}
void task_block(const TaskBlock& block) {
  HWY_DYNAMIC_DISPATCH(TaskBlockImpl)(block);
}

}  // namespace tessel::merge::simd
#endif  // HWY_ONCE

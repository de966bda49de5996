// Compiled once per Highway target. See hadamard_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/hadamard_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cmath>

#include "backends/cpu/hadamard_butterflies.hpp"
#include "backends/cpu/simd/hadamard_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using ::tessel::cpu::hadamard_run_serial;

// The butterflies of stride h < N pair lanes of one vector, lane i with
// lane i ^ h: y[i] = sign[i] x[i] + x[i ^ h], sign -1 where bit h of i is
// set (that lane takes a - b, its partner a + b). One permute and one FMA
// a stage; runs start at multiples of n >= N, so lane bits are index bits.
struct LaneStage {
  decltype(hn::IndicesFromVec(D(), hn::Zero(hn::RebindToSigned<D>()))) partner;
  V sign;
};

// Stages h = 1, 2, .., N / 2 (log2 N of them, at most 16 for 2^16 lanes).
HWY_INLINE int lane_stages(LaneStage* stages) {
  const D d;
  const hn::RebindToSigned<D> di;
  const auto iota = hn::Iota(di, 0);
  int count = 0;
  for (std::int32_t h = 1; h < static_cast<std::int32_t>(hn::Lanes(d));
       h *= 2) {
    const auto bit = hn::Set(di, h);
    stages[count].partner = hn::IndicesFromVec(d, hn::Xor(iota, bit));
    stages[count].sign =
        hn::IfThenElse(hn::RebindMask(d, hn::Eq(hn::And(iota, bit), bit)),
                       hn::Set(d, -1.0f), hn::Set(d, 1.0f));
    ++count;
  }
  return count;
}

// One run of n values, n >= N.
HWY_INLINE void hadamard_run(const float* x, float* y, std::int64_t n,
                             const LaneStage* stages, int lane_count,
                             float scale) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V s = hn::Set(d, scale);
  // The strides inside a vector, one load and store per vector; the run's
  // only stages when it is one vector, which then also scales.
  for (std::int64_t i = 0; i < n; i += N) {
    V v = hn::LoadU(d, x + i);
    for (int k = 0; k < lane_count; ++k) {
      v = hn::MulAdd(v, stages[k].sign,
                     hn::TableLookupLanes(v, stages[k].partner));
    }
    hn::StoreU(n == N ? hn::Mul(v, s) : v, d, y + i);
  }
  // Strides h >= N pair whole vectors; the last stage scales. A run of up
  // to a few thousand values (a KV cache's 64 or 128) stays in L1 between
  // these passes; a longer one makes log2(n / N) passes through memory.
  for (std::int64_t h = N; h < n; h *= 2) {
    const bool last = 2 * h == n;
    for (std::int64_t base = 0; base < n; base += 2 * h) {
      for (std::int64_t j = base; j < base + h; j += N) {
        const V a = hn::LoadU(d, y + j), b = hn::LoadU(d, y + j + h);
        V sum = hn::Add(a, b), difference = hn::Sub(a, b);
        if (last) {
          sum = hn::Mul(sum, s);
          difference = hn::Mul(difference, s);
        }
        hn::StoreU(sum, d, y + j);
        hn::StoreU(difference, d, y + j + h);
      }
    }
  }
}

static void HadamardRunsImpl(const float* x, float* y, std::int64_t runs,
                             std::int64_t n) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  // 1 / sqrt(n) rounded once; exact for powers of four.
  const auto scale =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
  if (n < N || N == 1) {
    for (std::int64_t r = 0; r < runs; ++r) {
      // Runs shorter than a vector, and the scalar target's.
      hadamard_run_serial(x + r * n, y + r * n, n, scale);
    }
    return;
  }
  LaneStage stages[16];
  const int lane_count = lane_stages(stages);
  for (std::int64_t r = 0; r < runs; ++r) {
    hadamard_run(x + r * n, y + r * n, n, stages, lane_count, scale);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(HadamardRunsImpl);

void hadamard_runs(const float* x, float* y, std::int64_t runs,
                   std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(HadamardRunsImpl)(x, y, runs, n);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

// Compiled once per Highway target. See gemv_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/gemv_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/address_ahead.hpp"
#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/float_io-inl.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/simd/gemv_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Software prefetches of the lines ahead of a weight row's line at `p`:
// 4 KiB ahead into L2 and 2 KiB ahead into L1 (RowStreaming::prefetch).
// The L2 requests keep more lines coming than L1's fill buffers hold: the
// 160M-parameter Qwen3 decodes against 2 KiB into L1 alone, alternated
// (Sapphire Rapids), f16 +19-20 %, bf16 +8-9 %, f32 +5-6 % (8 KiB into L2
// alike, f32 less).
constexpr std::ptrdiff_t kIntoL2Bytes = 4096;
constexpr std::ptrdiff_t kIntoL1Bytes = 2048;
HWY_INLINE void prefetch_ahead_of(const void* p) {
  __builtin_prefetch(address_ahead(p, kIntoL2Bytes), 0, 2);  // prefetcht1
  __builtin_prefetch(address_ahead(p, kIntoL1Bytes), 0, 3);  // prefetcht0
}

// One weight row against x: four accumulators cover the FMA latency.
// kPrefetch: every cache line of the step is asked for ahead
// (prefetch_ahead_of).
template <bool kPrefetch, class T>
HWY_INLINE float dot_row(const T* w, std::int64_t k, const float* x) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  V a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  std::int64_t j = 0;
  // Asking for two lines a step covered all of f16's and AVX2's but half
  // of a 512-bit f32 step's four, and the f32 decode of a 160M-parameter
  // Qwen3 ran at 57 tokens/s against 65 with every line (1.5 and 2.5 KiB:
  // 61-64; Sapphire Rapids).
  constexpr auto kLine = static_cast<std::int64_t>(64 / sizeof(T));
  for (; j + 4 * N <= k; j += 4 * N) {
    if constexpr (kPrefetch) {
      for (std::int64_t line = 0; line < 4 * N; line += kLine) {
        prefetch_ahead_of(w + j + line);
      }
    }
    a0 = hn::MulAdd(load(d, w + j), hn::LoadU(d, x + j), a0);
    a1 = hn::MulAdd(load(d, w + j + N), hn::LoadU(d, x + j + N), a1);
    a2 = hn::MulAdd(load(d, w + j + 2 * N), hn::LoadU(d, x + j + 2 * N), a2);
    a3 = hn::MulAdd(load(d, w + j + 3 * N), hn::LoadU(d, x + j + 3 * N), a3);
  }
  for (; j < k; j += N) {
    const auto count =
        static_cast<std::size_t>(std::min<std::int64_t>(N, k - j));
    a0 = hn::MulAdd(load_partial(d, w + j, count, 0.0f),
                    load_partial(d, x + j, count, 0.0f), a0);
  }
  return hn::GetLane(
      hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
}

template <bool kPrefetch, class T>
void rows_typed(const T* w, std::int64_t ldw, std::int64_t rows, std::int64_t k,
                const float* x, float* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    y[r] = dot_row<kPrefetch>(w + r * ldw, k, x);
  }
}

// bf16 rows without a widening shuffle: a 32-bit lane holding two bf16
// values gives the even one as f32 by a shift and the odd one by a mask,
// against x split into its even and odd elements once per call (per chunk
// of rows: splitting once per product measured no faster). PromoteTo's zero
// extension is a cross-lane shuffle on x86, one port's worth per vector,
// which left the bf16 GEMV at two thirds of the f32 one's bytes per
// second on Sapphire Rapids (RowStreaming::bf16_pairs). The split is
// vector deinterleaves into a buffer each thread keeps: a call covers 16
// rows of a 1024-wide matrix, and an element-by-element split into a
// fresh vector held the 160M Qwen3's bf16 decode 7-9 % below its f16 one.
template <bool kPrefetch>
void rows_bf16(const hwy::bfloat16_t* w, std::int64_t ldw, std::int64_t rows,
               std::int64_t k, const float* x, float* y) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t pairs = k / 2;
  static thread_local std::vector<float> split;
  if (split.size() < static_cast<std::size_t>(2 * pairs)) {
    split.resize(static_cast<std::size_t>(2 * pairs));
  }
  float* xe = split.data();
  float* xo = split.data() + pairs;
  std::int64_t p = 0;
  for (; p + N <= pairs; p += N) {
    V even, odd;
    hn::LoadInterleaved2(d, x + 2 * p, even, odd);
    hn::StoreU(even, d, xe + p);
    hn::StoreU(odd, d, xo + p);
  }
  for (; p < pairs; ++p) {
    xe[p] = x[2 * p];
    xo[p] = x[2 * p + 1];
  }
  const auto high = hn::Set(du, 0xFFFF0000u);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto* lanes = reinterpret_cast<const std::uint32_t*>(w + r * ldw);
    V e0 = hn::Zero(d), e1 = hn::Zero(d), o0 = hn::Zero(d), o1 = hn::Zero(d);
    std::int64_t i = 0;
    for (; i + 2 * N <= pairs; i += 2 * N) {
      if constexpr (kPrefetch) {
        prefetch_ahead_of(lanes + i);
        prefetch_ahead_of(lanes + i + N);
      }
      const auto a = hn::LoadU(du, lanes + i);
      const auto b = hn::LoadU(du, lanes + i + N);
      e0 = hn::MulAdd(hn::BitCast(d, hn::ShiftLeft<16>(a)),
                      hn::LoadU(d, xe + i), e0);
      o0 = hn::MulAdd(hn::BitCast(d, hn::And(a, high)), hn::LoadU(d, xo + i),
                      o0);
      e1 = hn::MulAdd(hn::BitCast(d, hn::ShiftLeft<16>(b)),
                      hn::LoadU(d, xe + i + N), e1);
      o1 = hn::MulAdd(hn::BitCast(d, hn::And(b, high)),
                      hn::LoadU(d, xo + i + N), o1);
    }
    float sum = hn::GetLane(
        hn::SumOfLanes(d, hn::Add(hn::Add(e0, e1), hn::Add(o0, o1))));
    const hwy::bfloat16_t* row = w + r * ldw;
    for (std::int64_t j = 2 * i; j < k; ++j) sum += first(row + j) * x[j];
    y[r] = sum;
  }
}

template <bool kPrefetch>
void rows(FloatStorage storage, const void* w, std::int64_t ldw, std::int64_t n,
          std::int64_t k, const float* x, float* y, bool bf16_pairs) {
  switch (storage) {
    case FloatStorage::F32:
      return rows_typed<kPrefetch>(static_cast<const float*>(w), ldw, n, k, x,
                                   y);
    case FloatStorage::BF16: {
      const auto* w16 = static_cast<const hwy::bfloat16_t*>(w);
      return bf16_pairs ? rows_bf16<kPrefetch>(w16, ldw, n, k, x, y)
                        : rows_typed<kPrefetch>(w16, ldw, n, k, x, y);
    }
    case FloatStorage::F16:
      return rows_typed<kPrefetch>(static_cast<const hwy::float16_t*>(w), ldw,
                                   n, k, x, y);
  }
}

static void GemvRowsImpl(int storage, const void* w, std::int64_t ldw,
                         std::int64_t n, std::int64_t k, const float* x,
                         float* y, bool prefetch, bool bf16_pairs) {
  const auto kind = static_cast<FloatStorage>(storage);
  return prefetch ? rows<true>(kind, w, ldw, n, k, x, y, bf16_pairs)
                  : rows<false>(kind, w, ldw, n, k, x, y, bf16_pairs);
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(GemvRowsImpl);

// Measured with the 0.6B and 160M Qwen3 decode and a GEMV over cold
// 4096 x 4096 weights:
// - Sapphire Rapids needs every line asked for ahead to read DRAM at full
//   rate from one core (the 160M f32 decode 57 -> 65 tokens/s), and the
//   bf16 pairs beat PromoteTo's cross-lane zero extension, which held bf16
//   to two thirds of f32's bytes per second.
// - On Zen 4 the hardware prefetchers keep up alone: the software ones
//   cost 2-24 % of the decode (f32, f16, bf16, six interleaved pairs), and
//   PromoteTo reads bf16 rows at 24.5-25.7 GB/s on one core against
//   19.3 for the pairs (three rounds each).
RowStreaming row_streaming() {
  static const RowStreaming how =
      cpu_is_amd() ? RowStreaming{false, false} : RowStreaming{true, true};
  return how;
}

void gemv_rows(FloatStorage w_storage, const void* w, std::int64_t ldw,
               std::int64_t rows, std::int64_t k, const float* x, float* y,
               RowStreaming how) {
  HWY_DYNAMIC_DISPATCH(GemvRowsImpl)
  (static_cast<int>(w_storage), w, ldw, rows, k, x, y, how.prefetch,
   how.bf16_pairs);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

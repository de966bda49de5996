// Compiled once per Highway target. See reduce_simd.hpp for the contracts.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/reduce_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cmath>
#include <limits>

#include "backends/cpu/simd/reduce_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <RowReduce K>
HWY_INLINE V term(V x) {
  if constexpr (K == RowReduce::SumSquares)
    return hn::Mul(x, x);
  else if constexpr (K == RowReduce::SumAbs || K == RowReduce::MaxAbs)
    return hn::Abs(x);
  else
    return x;
}

template <RowReduce K>
constexpr bool is_sum() {
  return K == RowReduce::Sum || K == RowReduce::SumSquares ||
         K == RowReduce::SumAbs;
}

// The neutral element of a max/min-style reduction.
template <RowReduce K>
constexpr float neutral() {
  if constexpr (K == RowReduce::Min || K == RowReduce::ArgMin)
    return kInf;
  else if constexpr (K == RowReduce::MaxAbs)
    return 0.0f;
  else
    return -kInf;
}

template <RowReduce K>
HWY_INLINE V combine(V a, V b) {
  if constexpr (K == RowReduce::Min || K == RowReduce::ArgMin)
    return hn::Min(a, b);
  else
    return hn::Max(a, b);
}

template <RowReduce K, class T>
double sum_row(const T* x, std::int64_t n) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  constexpr std::int64_t kBlock = 1024;
  double total = 0.0;
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t end = std::min(n, start + kBlock);
    // Eight accumulators: enough independent adds to stay load-bound.
    V a[8];
    for (auto& v : a) v = hn::Zero(d);
    std::int64_t i = start;
    for (; i + 8 * N <= end; i += 8 * N) {
      for (int k = 0; k < 8; ++k)
        a[k] = hn::Add(a[k], term<K>(load(d, x + i + k * N)));
    }
    for (; i + N <= end; i += N) a[0] = hn::Add(a[0], term<K>(load(d, x + i)));
    if (i < end) {
      a[1] = hn::Add(
          a[1], term<K>(load_partial(d, x + i,
                                     static_cast<std::size_t>(end - i), 0.0f)));
    }
    const V sum = hn::Add(hn::Add(hn::Add(a[0], a[1]), hn::Add(a[2], a[3])),
                          hn::Add(hn::Add(a[4], a[5]), hn::Add(a[6], a[7])));
    total += static_cast<double>(hn::GetLane(hn::SumOfLanes(d, sum)));
  }
  return total;
}

// Max/min over the row, NaN-propagating; also returns whether a NaN was seen.
template <RowReduce K, class T>
float extreme_row(const T* x, std::int64_t n, bool* saw_nan) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  V acc = hn::Set(d, neutral<K>());
  auto nan = hn::FirstN(d, 0);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    const V v = term<K>(load(d, x + i));
    nan = hn::Or(nan, hn::IsNaN(v));
    acc = combine<K>(acc, v);
  }
  if (i < n) {
    const V v = term<K>(
        load_partial(d, x + i, static_cast<std::size_t>(n - i), neutral<K>()));
    nan = hn::Or(nan, hn::IsNaN(v));
    acc = combine<K>(acc, v);
  }
  *saw_nan = !hn::AllFalse(d, nan);
  if (*saw_nan) return kNaN;
  if constexpr (K == RowReduce::Min || K == RowReduce::ArgMin) {
    return hn::GetLane(hn::MinOfLanes(d, acc));
  } else {
    return hn::GetLane(hn::MaxOfLanes(d, acc));
  }
}

// The first index whose value equals `target` (or is NaN when `nan`).
template <class T>
std::int64_t find_first(const T* x, std::int64_t n, float target, bool nan) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V t = hn::Set(d, target);
  std::int64_t i = 0;
  for (; i < n; i += N) {
    const auto count =
        static_cast<std::size_t>(std::min<std::int64_t>(N, n - i));
    const V v = count == static_cast<std::size_t>(N)
                    ? load(d, x + i)
                    : load_partial(d, x + i, count, 0.0f);
    auto hit = nan ? hn::IsNaN(v) : hn::Eq(v, t);
    hit = hn::And(hit, hn::FirstN(d, count));
    const intptr_t lane = hn::FindFirstTrue(d, hit);
    if (lane >= 0) return i + lane;
  }
  return 0;  // not reached: the target came from this row
}

template <RowReduce K, class T>
RowResult reduce_row_typed(const T* x, std::int64_t n) {
  if constexpr (is_sum<K>()) {
    return {sum_row<K>(x, n), 0};
  } else {
    bool saw_nan = false;
    const float v = extreme_row<K>(x, n, &saw_nan);
    if constexpr (K == RowReduce::ArgMax || K == RowReduce::ArgMin) {
      return {v, find_first(x, n, v, saw_nan)};
    } else {
      return {v, 0};
    }
  }
}

template <class T>
RowResult reduce_row_dispatch(RowReduce kind, const void* row, std::int64_t n) {
  const auto* x = static_cast<const T*>(row);
  switch (kind) {
    case RowReduce::Sum: return reduce_row_typed<RowReduce::Sum>(x, n);
    case RowReduce::SumSquares:
      return reduce_row_typed<RowReduce::SumSquares>(x, n);
    case RowReduce::SumAbs: return reduce_row_typed<RowReduce::SumAbs>(x, n);
    case RowReduce::Max: return reduce_row_typed<RowReduce::Max>(x, n);
    case RowReduce::Min: return reduce_row_typed<RowReduce::Min>(x, n);
    case RowReduce::MaxAbs: return reduce_row_typed<RowReduce::MaxAbs>(x, n);
    case RowReduce::ArgMax: return reduce_row_typed<RowReduce::ArgMax>(x, n);
    case RowReduce::ArgMin: return reduce_row_typed<RowReduce::ArgMin>(x, n);
  }
  return {};
}

static RowResult ReduceRowImpl(int kind, int storage, const void* row,
                               std::int64_t n) {
  const auto k = static_cast<RowReduce>(kind);
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32: return reduce_row_dispatch<float>(k, row, n);
    case FloatStorage::BF16:
      return reduce_row_dispatch<hwy::bfloat16_t>(k, row, n);
    case FloatStorage::F16:
      return reduce_row_dispatch<hwy::float16_t>(k, row, n);
  }
  return {};
}

// ---- column reductions ----

// Rows stream through contiguously: partial[j] (in L1) accumulates each
// row segment, and every kRowBlock rows the f32 partials go into the f64
// accumulators.
template <RowReduce K, class T>
void columns_typed(const T* x, std::int64_t rows, std::int64_t cols,
                   std::int64_t stride, double* acc) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  constexpr std::int64_t kRowBlock = 64;
  constexpr std::int64_t kColBlock = 4096;  // 16 KiB of partials stay in L1
  constexpr float kInit = is_sum<K>() ? 0.0f : neutral<K>();
  HWY_ALIGN static thread_local float
      partial_storage[kColBlock + 2 * hn::MaxLanes(d)];
  float* partial = partial_storage;
  for (std::int64_t c0 = 0; c0 < cols; c0 += kColBlock) {
    const std::int64_t width = std::min(kColBlock, cols - c0);
    const std::int64_t full = width / N * N;
    for (std::int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const std::int64_t r1 = std::min(rows, r0 + kRowBlock);
      for (std::int64_t j = 0; j < width + N; j += N)
        hn::Store(hn::Set(d, kInit), d, partial + j);
      std::int64_t r = r0;
      if constexpr (is_sum<K>()) {
        // Four rows per pass over the partials: a quarter of the L1 traffic.
        for (; r + 4 <= r1; r += 4) {
          const T* row = x + r * stride + c0;
          for (std::int64_t j = 0; j < full; j += N) {
            const V s01 = hn::Add(term<K>(load(d, row + j)),
                                  term<K>(load(d, row + stride + j)));
            const V s23 = hn::Add(term<K>(load(d, row + 2 * stride + j)),
                                  term<K>(load(d, row + 3 * stride + j)));
            hn::Store(hn::Add(hn::Load(d, partial + j), hn::Add(s01, s23)), d,
                      partial + j);
          }
          for (std::int64_t k = 0; k < 4 && full < width; ++k) {
            const V v = term<K>(
                load_partial(d, row + k * stride + full,
                             static_cast<std::size_t>(width - full), kInit));
            hn::Store(hn::Add(hn::Load(d, partial + full), v), d,
                      partial + full);
          }
        }
      }
      for (; r < r1; ++r) {
        const T* row = x + r * stride + c0;
        for (std::int64_t j = 0; j <= width - N && j < full; j += N) {
          const V v = term<K>(load(d, row + j));
          const V a = hn::Load(d, partial + j);
          if constexpr (is_sum<K>()) {
            hn::Store(hn::Add(a, v), d, partial + j);
          } else {
            // NaN-propagating: a NaN anywhere in the column poisons it.
            hn::Store(hn::IfThenElse(hn::Or(hn::IsNaN(v), hn::IsNaN(a)),
                                     hn::Add(a, v), combine<K>(a, v)),
                      d, partial + j);
          }
        }
        if (full < width) {
          const V v = term<K>(load_partial(
              d, row + full, static_cast<std::size_t>(width - full), kInit));
          const V a = hn::Load(d, partial + full);
          if constexpr (is_sum<K>()) {
            hn::Store(hn::Add(a, v), d, partial + full);
          } else {
            hn::Store(hn::IfThenElse(hn::Or(hn::IsNaN(v), hn::IsNaN(a)),
                                     hn::Add(a, v), combine<K>(a, v)),
                      d, partial + full);
          }
        }
      }
      for (std::int64_t j = 0; j < width; ++j) {
        const double p = partial[j];
        double& out = acc[c0 + j];
        if constexpr (is_sum<K>()) {
          out += p;
        } else if (std::isnan(p) || std::isnan(out)) {
          out = std::numeric_limits<double>::quiet_NaN();
        } else if constexpr (K == RowReduce::Min) {
          out = std::min(out, p);
        } else {
          out = std::max(out, p);
        }
      }
    }
  }
}

template <class T>
void columns_dispatch(RowReduce kind, const void* data, std::int64_t rows,
                      std::int64_t cols, std::int64_t stride, double* acc) {
  const auto* x = static_cast<const T*>(data);
  switch (kind) {
    case RowReduce::Sum:
      return columns_typed<RowReduce::Sum>(x, rows, cols, stride, acc);
    case RowReduce::SumSquares:
      return columns_typed<RowReduce::SumSquares>(x, rows, cols, stride, acc);
    case RowReduce::SumAbs:
      return columns_typed<RowReduce::SumAbs>(x, rows, cols, stride, acc);
    case RowReduce::Max:
      return columns_typed<RowReduce::Max>(x, rows, cols, stride, acc);
    case RowReduce::Min:
      return columns_typed<RowReduce::Min>(x, rows, cols, stride, acc);
    case RowReduce::MaxAbs:
      return columns_typed<RowReduce::MaxAbs>(x, rows, cols, stride, acc);
    default: return;  // arg-reductions over columns use the scalar kernel
  }
}

static void ReduceColumnsImpl(int kind, int storage, const void* data,
                              std::int64_t rows, std::int64_t cols,
                              std::int64_t stride, double* acc) {
  const auto k = static_cast<RowReduce>(kind);
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32:
      return columns_dispatch<float>(k, data, rows, cols, stride, acc);
    case FloatStorage::BF16:
      return columns_dispatch<hwy::bfloat16_t>(k, data, rows, cols, stride,
                                               acc);
    case FloatStorage::F16:
      return columns_dispatch<hwy::float16_t>(k, data, rows, cols, stride, acc);
  }
}

// ---- softmax ----

// exp clamped to Highway's valid range (see elementwise_simd.cpp).
HWY_INLINE V exp_clamped(D d, V x) {
  const V y = hn::Exp(d, hn::Max(x, hn::Set(d, -104.0f)));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

template <class T>
void softmax_typed(const T* x, T* out, std::int64_t n, bool log, float* scratch,
                   const T* next_row) {
  // f32 rows keep exp(x - max) in the output itself: a smaller cache
  // footprint than a separate scratch row.
  if constexpr (std::is_same_v<T, float>) {
    if (!log) scratch = out;
  }
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  bool saw_nan = false;
  const float m = extreme_row<RowReduce::Max>(x, n, &saw_nan);
  const V vm = hn::Set(d, m);
  // exp(x - max) into scratch, summing in f32 blocks and f64 totals. A row
  // whose max is +-Inf or NaN gives NaN or the IEEE limits, as PyTorch does.
  double total = 0.0;
  std::int64_t i = 0;
  V acc = hn::Zero(d);
  for (; i + N <= n; i += N) {
    // The exp pass is compute-bound: fetch the next row meanwhile.
    if (next_row != nullptr) __builtin_prefetch(next_row + i);
    const V e = exp_clamped(d, hn::Sub(load(d, x + i), vm));
    if (!log) hn::StoreU(e, d, scratch + i);
    acc = hn::Add(acc, e);
    if ((i / N) % 64 == 63) {
      total += hn::GetLane(hn::SumOfLanes(d, acc));
      acc = hn::Zero(d);
    }
  }
  if (i < n) {
    const auto count = static_cast<std::size_t>(n - i);
    const V e = hn::IfThenElseZero(
        hn::FirstN(d, count),
        exp_clamped(d, hn::Sub(load_partial(d, x + i, count, m), vm)));
    HWY_ALIGN float tmp[hn::MaxLanes(d)];
    hn::Store(e, d, tmp);
    if (!log) std::memcpy(scratch + i, tmp, count * sizeof(float));
    acc = hn::Add(acc, e);
  }
  total += hn::GetLane(hn::SumOfLanes(d, acc));
  const auto sum = static_cast<float>(total);
  // log-softmax is (x - max) - log(sum): subtracting max first keeps the
  // small differences exact.
  const V log_sum = hn::Set(d, std::log(sum));
  const V scale = hn::Set(d, 1.0f / sum);
  for (i = 0; i + N <= n; i += N) {
    const V y = log ? hn::Sub(hn::Sub(load(d, x + i), vm), log_sum)
                    : hn::Mul(hn::LoadU(d, scratch + i), scale);
    store(d, y, out + i);
  }
  if (i < n) {
    const auto count = static_cast<std::size_t>(n - i);
    const V y =
        log ? hn::Sub(hn::Sub(load_partial(d, x + i, count, 0.0f), vm), log_sum)
            : hn::Mul(load_partial(d, scratch + i, count, 0.0f), scale);
    store_partial(d, y, out + i, count);
  }
}

static void SoftmaxRowImpl(int storage, const void* in, void* out,
                           std::int64_t n, bool log, float* scratch,
                           const void* next_row) {
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32:
      return softmax_typed(static_cast<const float*>(in),
                           static_cast<float*>(out), n, log, scratch,
                           static_cast<const float*>(next_row));
    case FloatStorage::BF16:
      return softmax_typed(static_cast<const hwy::bfloat16_t*>(in),
                           static_cast<hwy::bfloat16_t*>(out), n, log, scratch,
                           static_cast<const hwy::bfloat16_t*>(next_row));
    case FloatStorage::F16:
      return softmax_typed(static_cast<const hwy::float16_t*>(in),
                           static_cast<hwy::float16_t*>(out), n, log, scratch,
                           static_cast<const hwy::float16_t*>(next_row));
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(ReduceRowImpl);
HWY_EXPORT(ReduceColumnsImpl);
HWY_EXPORT(SoftmaxRowImpl);

RowResult reduce_row(RowReduce kind, FloatStorage storage, const void* row,
                     std::int64_t n) {
  return HWY_DYNAMIC_DISPATCH(ReduceRowImpl)(static_cast<int>(kind),
                                             static_cast<int>(storage), row, n);
}

void reduce_columns(RowReduce kind, FloatStorage storage, const void* data,
                    std::int64_t rows, std::int64_t cols, std::int64_t stride,
                    double* acc) {
  HWY_DYNAMIC_DISPATCH(ReduceColumnsImpl)
  (static_cast<int>(kind), static_cast<int>(storage), data, rows, cols, stride,
   acc);
}

void softmax_row(FloatStorage storage, const void* in, void* out,
                 std::int64_t n, bool log, float* scratch,
                 const void* next_row) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowImpl)
  (static_cast<int>(storage), in, out, n, log, scratch, next_row);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

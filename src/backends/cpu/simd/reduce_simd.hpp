// Highway kernels for reductions and softmax over f32, bf16 and f16 data.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/elementwise_simd.hpp"

namespace tessel::cpu::simd {

enum class RowReduce : int {
  Sum,         // sum x
  SumSquares,  // sum x^2
  SumAbs,      // sum |x|
  Max,         // NaN if any NaN
  Min,
  MaxAbs,
  ArgMax,  // first index of the maximum; NaN counts as the maximum
  ArgMin,
};

struct RowResult {
  double value = 0.0;
  std::int64_t index = 0;
};

// Reduces one contiguous run of n >= 1 elements. Sums accumulate in f32
// over blocks of 1024 elements (at most 16 additions per lane) and add the
// block totals in f64.
RowResult reduce_row(RowReduce kind, FloatStorage storage, const void* row,
                     std::int64_t n);

// Column reductions of a rows x cols block with row stride `stride`
// (elements): acc[j] (+)= reduce_i x[i, j]. Sums accumulate up to 64 rows
// in f32, then add into the f64 `acc`; Max/Min/MaxAbs combine into acc.
void reduce_columns(RowReduce kind, FloatStorage storage, const void* data,
                    std::int64_t rows, std::int64_t cols, std::int64_t stride,
                    double* acc);

// Softmax (or log-softmax) of one contiguous row; `scratch` holds n floats.
// `next_row` (may be null) is prefetched while the row is computed.
void softmax_row(FloatStorage storage, const void* in, void* out,
                 std::int64_t n, bool log, float* scratch,
                 const void* next_row);

}  // namespace tessel::cpu::simd

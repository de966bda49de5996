// The loops a streamed merge spends its time in, as Highway kernels
// dispatched at run time: each works on one L1-sized block of f32 values
// whose length is padded to a multiple of kPad (merge/blocks.hpp loads the
// blocks, widening bf16 and f16 on the way), so no kernel has a scalar
// tail. Every result is the same bits as the scalar formulas of
// docs/merge.md evaluated element by element (this file is compiled
// without FMA contraction); only the f64 sums are reassociated, and those
// in a fixed order for a given CPU, so a merge gives the same bytes on any
// thread count.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessel/merge/methods.hpp"

namespace tessel::merge::simd {

// Blocks are padded to a multiple of this many floats (the widest vector,
// AVX-512's 16 lanes).
inline constexpr std::int64_t kPad = 16;

// out[0, n) = the f32 of n bf16 values given as their bits (f16 and the
// narrowing casts are backends/cpu/simd/cast_simd.hpp's).
void widen_bf16(const std::uint16_t* in, float* out, std::int64_t n);

// Bit j % 8 of out[j / 8] = in[j] != 0, for j in [0, n). n % kPad == 0.
void pack_nonzero(const float* in, std::int64_t n, std::uint8_t* out);

// acc[0] += sum a*a, acc[1] += sum b*b, acc[2] += sum a*b over [0, n), in
// f64 (each product of the f32 values widened exactly). n % kPad == 0.
void add_dot_sums(const float* a, const float* b, std::int64_t n, double* acc);

// acc[0] += sum |d|, acc[1] += sum |d| * keep, in f64; keep holds 0 or any
// non-zero factor per element (DARE's rescale norms). n % kPad == 0.
void add_l1_sums(const float* d, const float* keep, std::int64_t n,
                 double* acc);

// out = ca * a + cb * b, each product rounded to f32 before the sum (slerp's
// combine). n % kPad == 0.
void combine2(float ca, const float* a, float cb, const float* b,
              std::int64_t n, float* out);

// DARE's random keep-factors for elements [first, first + n) of one stream:
// element i draws word i % 4 of Philox4x32-10 block (i / 4, stream) under
// `key`, and gets `kept` when its top 24 bits are below `threshold`, else
// 0 (threshold = ceil(density * 2^24) gives u < density exactly for
// u = (word >> 8) / 2^24). first % 4 == 0, n % kPad == 0.
void random_keep(const std::uint32_t key[2], std::uint64_t stream,
                 std::int64_t first, std::int64_t n, std::uint32_t threshold,
                 float kept, float* out);

// One block of mergekit's generalized task arithmetic. For each model m,
// d_m = (x_m - base) * keep_m * weight_m (without the keep factor when
// keep[m] is null); then, with a consensus, the elected sign (of the sum
// of d_m, or of the sum of their signs) and the sum over agreeing d_m
// divided by the agreeing weights (1 when none agree); else the plain sum
// and `weight_sum`. Divided when `normalize`, times lambda, added to base.
struct TaskBlock {
  std::int64_t n = 0;  // % kPad == 0
  const float* base = nullptr;
  std::size_t models = 0;
  const float* const* x = nullptr;
  const float* const* keep = nullptr;  // per model; null entries: all kept
  const float* weight = nullptr;
  Consensus consensus = Consensus::None;
  bool normalize = false;
  float weight_sum = 1.0f;
  float lambda = 1.0f;
  float* deltas = nullptr;  // models * n floats of scratch
  float* out = nullptr;
};
void task_block(const TaskBlock& block);

}  // namespace tessel::merge::simd

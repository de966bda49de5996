// Highway kernel for layer and RMS normalisation of one contiguous row of
// f32, bf16 or f16 data; statistics in f32 with f64 block totals.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/elementwise_simd.hpp"
#include "backends/kernel_problems.hpp"

namespace tessel::cpu::simd {

using ::tessel::NormKind;

// The affine part y = norm(x) * weight + bias. `segment` consecutive
// elements share one weight and bias value (1 for layer norm; the spatial
// size for group norm, whose weights are per channel).
struct NormAffine {
  const float* weight = nullptr;  // null: 1
  const float* bias = nullptr;    // null: 0
  std::int64_t segment = 1;
};

struct RowStats {
  float mean = 0.0f;  // 0 for RMS
  float rstd = 0.0f;  // 1 / sqrt(var + eps) (or mean square + eps)
};

RowStats normalize_row(NormKind kind, FloatStorage storage, const void* x,
                       void* y, std::int64_t n, float eps,
                       const NormAffine& affine);

// The gradient of one f32 row of a layer or RMS norm (per-element weights
// or none) with its saved statistics, xhat = (x - mean) * rstd:
//   dx = rstd * (gh - xhat * mean(gh * xhat) - mean(gh)),  gh = dy * w,
// the mean(gh) term for layer norm only; and dw += dy * xhat, db += dy
// (each may be null).
void normalize_row_backward(NormKind kind, const float* x, const float* dy,
                            const float* weight, std::int64_t n, float mean,
                            float rstd, float* dx, float* dw, float* db);

}  // namespace tessel::cpu::simd

// Layer/RMS/group normalisation over contiguous rows.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/norm_simd.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

struct NormRows {
  simd::NormKind kind = simd::NormKind::Layer;
  std::int64_t rows = 0;
  std::int64_t n = 0;  // elements per row
  double eps = 0.0;
  // Row r uses weight/bias set (r % weight_period), each of n / segment
  // values (group norm: period = groups, segment = spatial size).
  std::int64_t segment = 1;
  std::int64_t weight_period = 1;
};

// x and y contiguous with `rows * n` elements of one float dtype (f32,
// bf16, f16 or f64); weight and bias (may be undefined) contiguous f32, or
// f64 for f64 data; mean and rstd (may be undefined) contiguous [rows] of
// the statistics dtype (f32, f64 for f64 data).
void normalize_rows(const NormRows& p, const Tensor& x, const Tensor& y,
                    const Tensor& weight, const Tensor& bias,
                    const Tensor& mean, const Tensor& rstd);

}  // namespace tessel::cpu

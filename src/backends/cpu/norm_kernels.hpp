// Layer/RMS/group normalisation over contiguous rows.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/norm_simd.hpp"
#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// x and y contiguous with `rows * n` elements of one float dtype (f32,
// bf16, f16 or f64); weight and bias (may be undefined) contiguous f32, or
// f64 for f64 data; mean and rstd (may be undefined) contiguous [rows] of
// the statistics dtype (f32, f64 for f64 data).
void normalize_rows(const NormRows& p, const KernelInput& x,
                    const KernelOutput& y, const KernelInput& weight,
                    const KernelInput& bias, const KernelOutput& mean,
                    const KernelOutput& rstd);

}  // namespace tessel::cpu

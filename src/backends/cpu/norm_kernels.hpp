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

// The gradients of a layer or RMS norm over trailing axes (p.segment 1,
// p.weight_period 1), all operands contiguous f32 (or all f64): dx (rows * n)
// from dy and the saved statistics (mean undefined for RMS); dweight and dbias
// ([n], each may be undefined) summed over the rows.
void normalize_rows_backward(const NormRows& p, const KernelInput& x,
                             const KernelInput& weight, const KernelInput& mean,
                             const KernelInput& rstd, const KernelInput& dy,
                             const KernelOutput& dx,
                             const KernelOutput& dweight,
                             const KernelOutput& dbias);

}  // namespace tessel::cpu

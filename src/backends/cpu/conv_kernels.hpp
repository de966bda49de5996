// The direct (reference) convolutions, on contiguous channels-first data.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// Direct convolution in f64 (or for any float dtype, accumulating in f64):
// x (N, C, S...), w (O, C/groups, K...), y (N, O, S'...), all contiguous.
void conv_reference(const KernelInput& x, const KernelInput& w,
                    const KernelInput& bias, const KernelOutput& y,
                    const std::vector<std::int64_t>& stride,
                    const std::vector<std::int64_t>& dilation,
                    const std::vector<std::int64_t>& pad_begin,
                    std::int64_t groups);

// The transposed convolution, directly: w (C, O/groups, K...), y the larger
// output; pad_begin crops the start (the end is y's extent).
void conv_transpose_reference(const KernelInput& x, const KernelInput& w,
                              const KernelInput& bias, const KernelOutput& y,
                              const std::vector<std::int64_t>& stride,
                              const std::vector<std::int64_t>& dilation,
                              const std::vector<std::int64_t>& pad_begin,
                              std::int64_t groups);

}  // namespace tessel::cpu

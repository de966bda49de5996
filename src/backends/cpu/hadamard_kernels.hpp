// The orthonormal Walsh-Hadamard transform over contiguous runs.
#pragma once

#include <cstdint>

#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// y = x H / sqrt(block) for each run of `block` values, x and y contiguous
// f32 (Highway) or f64 (scalar), block a power of two dividing their size.
void hadamard_runs(std::int64_t block, const KernelInput& x,
                   const KernelOutput& y);

}  // namespace tessel::cpu

// Rotary position embedding over contiguous rows.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// y = rope(x) for x and y contiguous (rows, head_dim) of one float dtype;
// cos and sin f32 (f64 for f64 data).
void rope(const RopeProblem& p, const KernelInput& x, const KernelOutput& y,
          const KernelInput& cos, const KernelInput& sin);

}  // namespace tessel::cpu

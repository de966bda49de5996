// Highway kernels for the optimiser updates (f32).
#pragma once

#include <cstdint>

#include "backends/kernel_problems.hpp"

namespace tessel::cpu::simd {

// One Adam/AdamW step over n contiguous elements (see AdamStep).
void adam_update(const AdamStep& s, std::int64_t n, float* param,
                 const float* grad, float* exp_avg, float* exp_avg_sq);

}  // namespace tessel::cpu::simd

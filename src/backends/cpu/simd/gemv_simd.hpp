// Highway kernel for the decode step of a language model: y = W x for one
// activation row against row-major weights. Memory-bound: each weight row
// streams through once while x stays in L1.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/elementwise_simd.hpp"

namespace tessel::cpu::simd {

// y[r] = sum_j w[r * ldw + j] * x[j] for r < rows, j < k; x and y f32, w
// f32, bf16 or f16. Accumulates in f32.
void gemv_rows(FloatStorage w_storage, const void* w, std::int64_t ldw,
               std::int64_t rows, std::int64_t k, const float* x, float* y);

}  // namespace tessel::cpu::simd

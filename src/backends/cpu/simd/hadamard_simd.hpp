// Highway kernel for the orthonormal Walsh-Hadamard transform of runs of
// f32 values (ops/hadamard.cpp, backends/cpu/hadamard.cpp).
#pragma once

#include <cstdint>

namespace tessel::cpu::simd {

// y = x H / sqrt(n) for each of `runs` consecutive runs of n values, H
// Sylvester's n x n matrix (H[i][j] = (-1)^popcount(i & j)), n a power of
// two: log2(n) butterfly stages, (a, b) -> (a + b, a - b), the scale
// applied once at the end.
void hadamard_runs(const float* x, float* y, std::int64_t runs, std::int64_t n);

}  // namespace tessel::cpu::simd

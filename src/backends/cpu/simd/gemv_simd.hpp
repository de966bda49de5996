// Highway kernel for the decode step of a language model: y = W x for one
// activation row against row-major weights. Memory-bound: each weight row
// streams through once while x stays in L1.
#pragma once

#include <cstdint>

#include "backends/cpu/simd/elementwise_simd.hpp"

namespace tessel::cpu::simd {

// How the weight rows are streamed. Every choice gives a correct result
// on every CPU; which is fastest depends on the CPU (row_streaming).
struct RowStreaming {
  bool prefetch;    // software prefetches of every line, into L2 and L1
  bool bf16_pairs;  // bf16 read as 32-bit pairs against x split even/odd
};
// The choice for this CPU, by vendor (measured: gemv_simd.cpp).
RowStreaming row_streaming();

// y[r] = sum_j w[r * ldw + j] * x[j] for r < rows, j < k; x and y f32, w
// f32, bf16 or f16. Accumulates in f32.
void gemv_rows(FloatStorage w_storage, const void* w, std::int64_t ldw,
               std::int64_t rows, std::int64_t k, const float* x, float* y,
               RowStreaming how = row_streaming());

}  // namespace tessel::cpu::simd

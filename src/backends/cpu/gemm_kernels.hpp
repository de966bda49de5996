// GEMM kernels of tessel's own: the reference GEMM for the dtypes oneDNN
// has no kernel for (f64, 16/32/64-bit integers), and the skinny GEMV of
// the decode step.
#pragma once

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// out[b, i, j] = sum_k a[b, i, k] * b[b, k, j] for rank-3 operands of one
// dtype (batch axes already broadcast, any strides); out contiguous.
// Floats accumulate in f64, integers in 64 bits with wrap-around.
void gemm_reference(const KernelInput& a, const KernelInput& b,
                    const KernelOutput& out);

// y (n) f32 = w x for one contiguous f32 row x (k) and weights w (n, k) of
// f32, bf16 or f16 with unit stride along k (row stride ldw). Rows of w
// are split over the pool.
void gemv(const KernelInput& x, const void* w, DType w_dtype, std::int64_t ldw,
          std::int64_t n, const KernelOutput& y);

}  // namespace tessel::cpu

// GEMM kernels of tessel's own: the reference GEMM for the dtypes oneDNN
// has no kernel for (f64, 16/32/64-bit integers), and the skinny GEMV of
// the decode step.
#pragma once

#include <algorithm>

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

// Weight rows a thread takes at a time when a matrix-vector product
// streams its weights (parallel_for_dynamic): 32 KiB, at least 16 rows.
// Long enough runs for the prefetchers, short enough that a thread the
// host slows down holds the other at the join for little: 6-8 % more Q8_0
// decode tokens/s than two fixed halves on a Qwen3-0.6B; 128 KiB gave
// less (docs/tensor-contract.md).
inline std::int64_t streamed_chunk_rows(std::int64_t row_bytes) {
  constexpr std::int64_t kChunkBytes = 32 * 1024;
  return std::max<std::int64_t>(
      16, kChunkBytes / std::max<std::int64_t>(row_bytes, 1));
}

}  // namespace tessel::cpu

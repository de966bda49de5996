// GEMM for the dtypes oneDNN has no kernel for (f64, 16/32/64-bit integers).
#pragma once

#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

// out[b, i, j] = sum_k a[b, i, k] * b[b, k, j] for rank-3 operands of one
// dtype (batch axes already broadcast, any strides); out contiguous.
// Floats accumulate in f64, integers in 64 bits with wrap-around.
void gemm_reference(const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace tessel::cpu

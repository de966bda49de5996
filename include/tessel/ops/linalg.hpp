// Matrix products (DESIGN §7 names, NumPy semantics). A linear layer is
// y = x @ W^T + b with W of shape [N, K] (output first), as in PyTorch and
// GGUF. Floats of 16 bits accumulate in f32 and round once; 8-bit integer
// operands give i32 (VNNI where the CPU has it); other integers promote and
// wrap. The engine is oneDNN (see docs/gemm.md).
#pragma once

#include <string_view>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel {

// NumPy matmul: a 1-D left operand is a row vector and a 1-D right operand
// a column vector (the added axis is removed again); leading batch axes
// broadcast. E2103 when the inner dimensions differ, E2102 for rank 0.
Tensor matmul(const Tensor& a, const Tensor& b);
// Inner product of two 1-D tensors (a rank-0 result).
Tensor dot(const Tensor& a, const Tensor& b);
// Outer product of two 1-D tensors.
Tensor outer(const Tensor& a, const Tensor& b);
// x[..., K] @ weight[N, K]^T + bias[N] (bias may be undefined).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
// Einstein summation over one or two operands: "ij,jk->ik", "bij,bkj->bik",
// "ii->i" (diagonal), "i,i" (implicit output: the labels used once, in
// alphabetical order), "...ij,...jk->...ik" (ellipsis broadcast).
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

}  // namespace tessel

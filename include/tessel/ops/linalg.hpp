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

// matmul dot outer linear einsum, declared once for Tensor and Variable
// operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/linalg.inc"
#undef TESSEL_VALUE

}  // namespace tessel

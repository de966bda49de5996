// Matrix products (DESIGN §7 names, NumPy semantics). A linear layer is
// y = x @ W^T + b with W of shape [N, K] (output first), as in PyTorch and
// GGUF. Floats of 16 bits accumulate in f32 and round once; 8-bit integer
// operands give i32 (VNNI where the CPU has it); other integers promote and
// wrap. The engine is oneDNN (see docs/gemm.md).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel {

// matmul dot outer linear hadamard_transform einsum, declared once for Tensor
// and Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/linalg.inc"
#undef TESSEL_VALUE

// linear(x, weights[i], biases[i]) for every i, the results bit for bit
// those of one call each, for weights that read the same x: a decoder's
// q/k/v projections, its gate and up. Work the products have in common is
// done once: for GGUF block weights the CPU backend quantises x to 8-bit
// blocks once and runs every product's rows in one parallel pass (a
// decode step's three q/k/v quantisations and two thread-team
// start-ups become one). `biases` is empty or has one (possibly
// undefined) tensor per weight. Not recorded for gradients.
std::vector<Tensor> linear_shared(const Tensor& x,
                                  const std::vector<Tensor>& weights,
                                  const std::vector<Tensor>& biases = {});

}  // namespace tessel

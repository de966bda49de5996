// Normalisation layers' forward ops. Statistics are computed in f32 (f64
// for f64 inputs) whatever the input dtype, and the result is rounded once
// to the input's dtype. Variances are biased (divide by the count), as in
// PyTorch's and ONNX's normalisation layers.
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel {

// The result of a normalisation with the statistics kept for a backward
// pass: `mean` and `rstd` (1 / sqrt(var + eps)) have x's shape with the
// normalised axes as extent 1, in the statistics dtype. RMS norm has no mean.
struct NormResult {
  Tensor y;
  Tensor mean;
  Tensor rstd;
};

// layer_norm rms_norm group_norm instance_norm batch_norm, declared once
// for Tensor and Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/norm.inc"
#undef TESSEL_VALUE

// The forward ops with the statistics a backward pass needs.
NormResult layer_norm_with_stats(const Tensor& x, const Tensor& weight = {},
                                 const Tensor& bias = {}, double eps = 1e-5,
                                 std::int64_t axis = -1);
NormResult rms_norm_with_stats(const Tensor& x, const Tensor& weight = {},
                               double eps = 1e-6, std::int64_t axis = -1);
NormResult group_norm_with_stats(const Tensor& x, std::int64_t groups,
                                 const Tensor& weight = {},
                                 const Tensor& bias = {}, double eps = 1e-5);

// The gradients of layer_norm_with_stats / rms_norm_with_stats (the same
// x, weight and axis; `stats` is what they returned) from grad_out: x's
// (shaped and typed as x) always, the weight's and the bias's where those
// are defined, summed over the rows into the normalised shape x.shape[axis:]
// in the statistics dtype (f32, f64 for f64 input): a weight that
// broadcast is summed further by the caller. One fused pass over the rows.
struct NormGradients {
  Tensor x, weight, bias;
};
NormGradients layer_norm_backward(const Tensor& grad_out, const Tensor& x,
                                  const NormResult& stats,
                                  const Tensor& weight = {},
                                  const Tensor& bias = {},
                                  std::int64_t axis = -1);
NormGradients rms_norm_backward(const Tensor& grad_out, const Tensor& x,
                                const NormResult& stats,
                                const Tensor& weight = {},
                                std::int64_t axis = -1);

}  // namespace tessel

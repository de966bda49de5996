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

// Normalises over the trailing axes [axis, rank) (PyTorch's
// normalized_shape = x.shape[axis:]; ONNX's `axis`). weight and bias
// broadcast to those trailing axes; undefined means 1 and 0.
Tensor layer_norm(const Tensor& x, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5,
                  std::int64_t axis = -1);
NormResult layer_norm_with_stats(const Tensor& x, const Tensor& weight = {},
                                 const Tensor& bias = {}, double eps = 1e-5,
                                 std::int64_t axis = -1);

// x / sqrt(mean(x^2) + eps) * weight over the trailing axes [axis, rank).
Tensor rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-6,
                std::int64_t axis = -1);
NormResult rms_norm_with_stats(const Tensor& x, const Tensor& weight = {},
                               double eps = 1e-6, std::int64_t axis = -1);

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

// x (N, C, spatial...) in `groups` groups of channels; weight and bias
// have one value per channel (C).
Tensor group_norm(const Tensor& x, std::int64_t groups,
                  const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
NormResult group_norm_with_stats(const Tensor& x, std::int64_t groups,
                                 const Tensor& weight = {},
                                 const Tensor& bias = {}, double eps = 1e-5);
// group_norm with one group per channel.
Tensor instance_norm(const Tensor& x, const Tensor& weight = {},
                     const Tensor& bias = {}, double eps = 1e-5);

// Inference-form batch normalisation of x (N, C, ...): per channel
// (x - running_mean) / sqrt(running_var + eps) * weight + bias.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean,
                  const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);

}  // namespace tessel

// The update rules of the optimisers as ops on plain tensors, so that an
// optimiser step is one pass over each parameter (PyTorch's fused=True)
// instead of a dozen element-wise ops with a temporary each.
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel {

// The hyperparameters of Adam and AdamW (PyTorch's defaults; AdamW's
// optimiser class defaults weight_decay to 0.01).
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

struct AdamUpdate {
  AdamOptions options;
  bool decoupled = false;  // AdamW: decay shrinks the parameter directly
  std::int64_t step = 1;   // the step being taken, from 1 (bias correction)
};

// One Adam (or AdamW) step on `param` in place, updating the moment
// buffers exp_avg and exp_avg_sq in place, with PyTorch's formulas:
//   g += wd * p (Adam) or p *= 1 - lr * wd (AdamW)
//   m = lerp(m, g, 1 - beta1); v = beta2 v + (1 - beta2) g^2
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// All four tensors share one shape and device; param, exp_avg and
// exp_avg_sq one float dtype. Contiguous f32 runs one fused pass.
void adam_update_(const Tensor& param, const Tensor& grad,
                  const Tensor& exp_avg, const Tensor& exp_avg_sq,
                  const AdamUpdate& update);

}  // namespace tessel

// Losses (PyTorch's definitions). Each checks its value with the numerics
// check (E2401) when it is on.
#pragma once

#include <cstdint>

#include "tessel/autograd/variable.hpp"

namespace tessel {

enum class Reduction { Mean, Sum, None };

struct CrossEntropyOptions {
  // Targets equal to this contribute nothing and are not counted.
  std::int64_t ignore_index = -100;
  // The target distribution puts 1 - s on the class and s / C on every
  // class (PyTorch's label_smoothing).
  double label_smoothing = 0.0;
  Reduction reduction = Reduction::Mean;
};

// logits (..., C) against integer class targets (...): softmax cross-entropy,
// computed from log_softmax in one fused node. Mean over the targets that
// are not ignored (NaN if all are). A target outside [0, C) is E2302.
Variable cross_entropy(const Variable& logits, const Tensor& targets,
                       const CrossEntropyOptions& options = {});

// Negative log-likelihood of log-probabilities (..., C).
Variable nll_loss(const Variable& log_probs, const Tensor& targets,
                  std::int64_t ignore_index = -100,
                  Reduction reduction = Reduction::Mean);

// Mean (or sum) of squared differences; shapes broadcast.
Variable mse_loss(const Variable& input, const Variable& target,
                  Reduction reduction = Reduction::Mean);

}  // namespace tessel

// Finite-difference check of gradient rules (DESIGN §6).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessel/autograd/variable.hpp"

namespace tessel {

struct GradcheckOptions {
  double eps = 1e-6;   // central-difference step, in f64
  double atol = 1e-6;  // |analytic - numeric| <= atol + rtol * |numeric|
  double rtol = 1e-4;
  std::uint64_t seed = 7;  // of the random output gradient
};

struct GradcheckResult {
  bool ok = true;
  double max_error = 0.0;  // the largest |analytic - numeric| seen
  std::string detail;      // the first failing element, when !ok
};

// Compares the gradient backward() computes for f at `inputs` (cast to
// f64, each a leaf requiring a gradient) with central differences of
// <f(x), v> for a random v, element by element.
GradcheckResult gradcheck(
    const std::function<Variable(const std::vector<Variable>&)>& f,
    const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace tessel

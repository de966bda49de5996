// Helpers shared by the gradient rules.
#pragma once

#include <functional>
#include <vector>

#include "autograd/graph.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel::autograd {

// The gradient of an input: summed over its broadcast axes, in its dtype.
Tensor grad_for(const Tensor& grad, const Tensor& input);

inline std::vector<Tensor> one_grad(Tensor g) { return {std::move(g)}; }

// y = f(x) with dy/dx from (x, y): the rule is g * derivative(x, y).
using Derivative = std::function<Tensor(const Tensor& x, const Tensor& y)>;
Variable unary(const char* op, const Variable& x, const Tensor& y,
               Derivative derivative);

// A reduction's gradient broadcast back to the input's shape: the reduced
// axes (all when `axes` is empty) are re-inserted when !keepdims.
Tensor expand_back(const Tensor& grad, const Shape& input_shape,
                   const Axes& axes, bool keepdims);

}  // namespace tessel::autograd

// The recorded graph: what a Variable holds and how ops add nodes to it.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "tessel/autograd/variable.hpp"

namespace tessel::autograd {

struct Node;

struct VariableState {
  Tensor value;
  Tensor grad;
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves
};

// Which inputs of a node need a gradient.
using Needs = std::vector<bool>;
// A backward rule: from the gradient of the node's output, the gradient of
// each input (undefined where `needs` is false or the input has none).
using BackwardFn =
    std::function<std::vector<Tensor>(const Tensor& grad, const Needs& needs)>;

struct Node {
  const char* op = "";
  std::vector<std::shared_ptr<VariableState>>
      inputs;           // null: no gradient needed
  BackwardFn backward;  // empty once released
};

// The Variable for `value`, computed by `op` from `inputs`: when grad mode
// is on and an input requires a gradient, a node with `backward` is
// recorded. `backward` must not capture the output Variable (a cycle).
Variable record(const char* op, Tensor value,
                std::initializer_list<Variable> inputs, BackwardFn backward);
Variable record(const char* op, Tensor value,
                const std::vector<Variable>& inputs, BackwardFn backward);

// `grad` summed down to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace tessel::autograd

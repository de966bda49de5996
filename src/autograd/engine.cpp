// Variables, grad mode and the backward pass.
#include <algorithm>
#include <unordered_map>

#include "autograd/graph.hpp"
#include "core/check.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {
thread_local bool g_grad_enabled = true;
}  // namespace

bool grad_enabled() { return g_grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) {
  g_grad_enabled = false;
}
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

Variable::Variable(Tensor value, bool requires_grad) {
  TESSEL_CHECK(value.defined(), BadShape, "Variable", "the value is undefined");
  TESSEL_CHECK(!requires_grad || is_floating_point(value.dtype()), BadDType,
               "Variable", "only float tensors can require gradients, got {}",
               dtype_name(value.dtype()));
  state_ = std::make_shared<autograd::VariableState>();
  state_->value = std::move(value);
  state_->requires_grad = requires_grad;
}

Variable::Variable(std::shared_ptr<autograd::VariableState> state)
    : state_(std::move(state)) {}

const Tensor& Variable::value() const {
  TESSEL_CHECK(defined(), BadShape, "Variable", "the Variable is undefined");
  return state_->value;
}
bool Variable::requires_grad() const {
  return defined() && state_->requires_grad;
}
bool Variable::is_leaf() const {
  return defined() && state_->grad_fn == nullptr;
}
const Tensor& Variable::grad() const { return value(), state_->grad; }
void Variable::set_grad(Tensor grad) const {
  value();
  if (grad.defined()) {
    TESSEL_CHECK(grad.shape() == state_->value.shape(), BadShape, "set_grad",
                 "gradient {} for a value of shape {}",
                 shape_string(grad.shape()),
                 shape_string(state_->value.shape()));
  }
  state_->grad = std::move(grad);
}
void Variable::zero_grad() const {
  value();
  state_->grad = Tensor();
}
Variable Variable::detach() const { return Variable(value(), false); }
const char* Variable::op() const {
  return defined() && state_->grad_fn ? state_->grad_fn->op : "";
}

namespace autograd {

namespace {

Variable record_impl(const char* op, Tensor value, const Variable* first,
                     std::size_t count, BackwardFn backward) {
  auto state = std::make_shared<VariableState>();
  state->value = std::move(value);
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) any = any || first[i].requires_grad();
  if (any && g_grad_enabled) {
    auto node = std::make_shared<Node>();
    node->op = op;
    node->backward = std::move(backward);
    for (std::size_t i = 0; i < count; ++i) {
      node->inputs.push_back(first[i].requires_grad() ? first[i].state()
                                                      : nullptr);
    }
    state->requires_grad = true;
    state->grad_fn = std::move(node);
  }
  return Variable(std::move(state));
}

}  // namespace

Variable record(const char* op, Tensor value,
                std::initializer_list<Variable> inputs, BackwardFn backward) {
  return record_impl(op, std::move(value), inputs.begin(), inputs.size(),
                     std::move(backward));
}

Variable record(const char* op, Tensor value,
                const std::vector<Variable>& inputs, BackwardFn backward) {
  return record_impl(op, std::move(value), inputs.data(), inputs.size(),
                     std::move(backward));
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const std::int64_t extra =
      grad.rank() - static_cast<std::int64_t>(shape.size());
  Axes axes;
  for (std::int64_t d = 0; d < grad.rank(); ++d) {
    const bool leading = d < extra;
    if (leading || (shape[static_cast<std::size_t>(d - extra)] == 1 &&
                    grad.shape()[d] != 1)) {
      axes.push_back(d);
    }
  }
  Tensor s = axes.empty() ? grad : sum(grad, axes, true);
  return s.reshape(shape);
}

}  // namespace autograd

void Variable::backward(const Tensor& grad_output, bool retain_graph) const {
  using autograd::Node;
  using autograd::VariableState;
  const Tensor& v = value();
  TESSEL_CHECK(requires_grad(), BadShape, "backward",
               "this Variable does not require a gradient (no input does)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    TESSEL_CHECK(v.numel() == 1, BadShape, "backward",
                 "a gradient is needed for a non-scalar output of shape {}",
                 shape_string(v.shape()));
    seed = ones(v.shape(), v.dtype(), v.device());
  }
  TESSEL_CHECK(seed.shape() == v.shape(), BadShape, "backward",
               "gradient of shape {} for an output of shape {}",
               shape_string(seed.shape()), shape_string(v.shape()));
  seed = seed.to(v.dtype());
  NoGradGuard no_grad;  // rules compute with plain ops

  auto accumulate_leaf = [](VariableState& s, const Tensor& g) {
    const Tensor gv = g.to(s.value.dtype());
    s.grad = s.grad.defined() ? add(s.grad, gv) : gv.contiguous();
  };
  if (!state_->grad_fn) {
    accumulate_leaf(*state_, seed);
    return;
  }
  // Order the nodes reachable from here so that each comes after every node
  // that consumes its output (depth-first post-order, reversed).
  std::vector<Node*> order;
  std::unordered_map<Node*, int> mark;  // 1 = on the stack, 2 = done
  std::vector<std::pair<Node*, std::size_t>> stack = {
      {state_->grad_fn.get(), 0}};
  mark[state_->grad_fn.get()] = 1;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const auto& in = node->inputs[next++];
      if (in && in->grad_fn && mark[in->grad_fn.get()] == 0) {
        mark[in->grad_fn.get()] = 1;
        stack.emplace_back(in->grad_fn.get(), 0);
      }
      continue;
    }
    mark[node] = 2;
    order.push_back(node);
    stack.pop_back();
  }
  std::reverse(order.begin(), order.end());

  std::unordered_map<Node*, Tensor> pending;
  pending[state_->grad_fn.get()] = seed;
  for (Node* node : order) {
    auto it = pending.find(node);
    if (it == pending.end()) continue;  // nothing flowed here
    const Tensor grad = std::move(it->second);
    pending.erase(it);
    TESSEL_CHECK(
        node->backward != nullptr, BadShape, "backward",
        "the graph through '{}' was freed by an earlier backward(); pass "
        "retain_graph = true to back-propagate twice",
        node->op);
    autograd::Needs needs(node->inputs.size());
    for (std::size_t i = 0; i < needs.size(); ++i)
      needs[i] = node->inputs[i] != nullptr;
    const std::vector<Tensor> grads = node->backward(grad, needs);
    for (std::size_t i = 0; i < node->inputs.size() && i < grads.size(); ++i) {
      const auto& in = node->inputs[i];
      if (!in || !grads[i].defined()) continue;
      if (in->grad_fn) {
        Tensor& slot = pending[in->grad_fn.get()];
        slot = slot.defined() ? add(slot, grads[i]) : grads[i];
      } else {
        accumulate_leaf(*in, grads[i]);
      }
    }
    if (!retain_graph) node->backward = nullptr;
  }
}

}  // namespace tessel

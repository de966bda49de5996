// Reverse-mode automatic differentiation (DESIGN §3 `autograd`). A
// Variable is a Tensor plus the record of how it was computed: ops on
// Variables (the overloads in tessel/autograd/functions.hpp, same names
// as the Tensor ops) build a graph as they run, and backward() walks it
// from an output to the leaves that require gradients. Design notes:
// docs/autograd.md.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "tessel/core/tensor.hpp"

namespace tessel {

namespace autograd {
struct VariableState;
}

class Variable {
 public:
  Variable() = default;
  // A leaf. With requires_grad, backward() accumulates into grad(); without
  // it the Variable is a constant. Explicit, so that an op on Tensors never
  // silently becomes an op on Variables; the binary element-wise ops take
  // mixed Tensor/Variable operands directly.
  explicit Variable(Tensor value, bool requires_grad = false);

  bool defined() const { return state_ != nullptr; }
  const Tensor& value() const;
  bool requires_grad() const;
  // Leaves are Variables not computed by a recorded op.
  bool is_leaf() const;
  // The gradient accumulated by backward() (leaves only); undefined before.
  const Tensor& grad() const;
  void set_grad(Tensor grad) const;
  // Forgets the gradient (PyTorch's zero_grad(set_to_none=True)).
  void zero_grad() const;
  // The same value, cut from the graph: a constant.
  Variable detach() const;
  // The name of the op that computed this Variable ("" for leaves).
  const char* op() const;

  // Back-propagates from this Variable: d(this)/d(leaf) times grad_output
  // accumulates into every leaf's grad(). grad_output may be omitted for a
  // single-element Variable (it is then 1). The graph's saved tensors are
  // freed afterwards unless retain_graph; a second backward through a freed
  // graph is E2102.
  void backward(const Tensor& grad_output = {},
                bool retain_graph = false) const;

  // ---- metadata of the value ------------------------------------------------
  const Shape& shape() const { return value().shape(); }
  DType dtype() const { return value().dtype(); }
  std::int64_t rank() const { return value().rank(); }
  std::int64_t numel() const { return value().numel(); }
  std::int64_t size(std::int64_t dim) const { return value().size(dim); }
  template <class T>
  T item() const {
    return value().item<T>();
  }

  // ---- differentiable views and casts (see the Tensor members)
  // ---------------
  Variable reshape(Shape shape) const;
  Variable permute(std::span<const std::int64_t> dims) const;
  Variable permute(std::initializer_list<std::int64_t> dims) const {
    return permute(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  Variable transpose(std::int64_t dim0, std::int64_t dim1) const;
  Variable transpose() const;
  Variable slice(std::int64_t dim, std::int64_t start, std::int64_t stop,
                 std::int64_t step = 1) const;
  Variable select(std::int64_t dim, std::int64_t index) const;
  Variable expand(Shape shape) const;
  Variable squeeze(std::int64_t dim) const;
  Variable squeeze(std::span<const std::int64_t> dims) const;
  Variable squeeze(std::initializer_list<std::int64_t> dims) const {
    return squeeze(std::span<const std::int64_t>(dims.begin(), dims.size()));
  }
  Variable unsqueeze(std::int64_t dim) const;
  Variable flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Variable contiguous() const;
  Variable to(DType dtype) const;

  const std::shared_ptr<autograd::VariableState>& state() const {
    return state_;
  }
  explicit Variable(std::shared_ptr<autograd::VariableState> state);

 private:
  std::shared_ptr<autograd::VariableState> state_;
};

// Whether ops record the graph on this thread (on by default).
bool grad_enabled();

// Turns recording off for a scope (evaluation, optimiser updates).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tessel

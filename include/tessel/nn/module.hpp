// Modules (DESIGN §3 `nn`): a layer owns named parameters (leaf Variables
// that require gradients) and child modules; full names join the path with
// dots, which makes a decoder's names exactly HuggingFace's canonical ones.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessel/autograd/variable.hpp"

namespace tessel::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Children register by address, so modules stay where they were built.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter with its full name, depth first in registration order.
  // A parameter shared by two modules (tied weights) appears once, under
  // the name it was first reached by.
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  std::int64_t num_parameters() const;

  // The parameters' values as tensors named by their full names (what a
  // checkpoint stores).
  std::vector<Tensor> state_tensors() const;

 protected:
  // A parameter holding `value` (not a copy): trainable when it is a float
  // tensor, frozen when it is block-quantised.
  Variable register_parameter(std::string name, Tensor value);
  // A parameter that is another module's (weight tying).
  void register_shared_parameter(std::string name, const Variable& parameter);
  void register_module(std::string name, Module& child);

 private:
  void collect(const std::string& prefix,
               std::vector<std::pair<std::string, Variable>>& out) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Module*>> children_;
};

}  // namespace tessel::nn

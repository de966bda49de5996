#include "tessel/nn/module.hpp"

#include <set>

#include "core/check.hpp"

namespace tessel::nn {

Variable Module::register_parameter(std::string name, Tensor value) {
  // Block-quantised weights (a GGUF file's) have no gradient: frozen.
  const bool trainable = is_floating_point(value.dtype());
  Variable parameter(std::move(value), trainable);
  parameters_.emplace_back(std::move(name), parameter);
  return parameter;
}

void Module::register_shared_parameter(std::string name,
                                       const Variable& parameter) {
  parameters_.emplace_back(std::move(name), parameter);
}

void Module::register_module(std::string name, Module& child) {
  children_.emplace_back(std::move(name), &child);
}

void Module::collect(const std::string& prefix,
                     std::vector<std::pair<std::string, Variable>>& out) const {
  // Children first: a model's own parameters (lm_head) come last, as in
  // HuggingFace's checkpoints.
  for (const auto& [name, child] : children_) {
    child->collect(prefix + name + ".", out);
  }
  for (const auto& [name, p] : parameters_) out.emplace_back(prefix + name, p);
}

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> all;
  collect("", all);
  std::vector<std::pair<std::string, Variable>> unique;
  std::set<const void*> seen;
  for (auto& entry : all) {
    if (seen.insert(entry.second.state().get()).second) {
      unique.push_back(std::move(entry));
    }
  }
  return unique;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

std::int64_t Module::num_parameters() const {
  std::int64_t n = 0;
  for (const auto& [name, p] : named_parameters()) n += p.numel();
  return n;
}

std::vector<Tensor> Module::state_tensors() const {
  std::vector<Tensor> out;
  for (const auto& [name, p] : named_parameters()) {
    Tensor t = p.value();
    t.set_name(name);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessel::nn

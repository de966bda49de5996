#include "tessel/nn/layers.hpp"

#include "nn/value_kind.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/embedding.hpp"
#include "tessel/ops/linalg.hpp"
#include "tessel/ops/norm.hpp"

namespace tessel::nn {

Linear::Linear(const Weights& w, std::int64_t in_features,
               std::int64_t out_features, bool with_bias) {
  weight = register_parameter("weight",
                              w.take("weight", {out_features, in_features}));
  if (with_bias) {
    bias = register_parameter(
        "bias", w.take("bias", {out_features}, WeightInit::Zeros));
  }
}

Variable Linear::forward(const Variable& x) const {
  return linear(x, weight, bias);
}
Tensor Linear::forward(const Tensor& x) const {
  return linear(x, weight.value(), detail::use<Tensor>(bias));
}

std::vector<Tensor> forward_shared(std::span<const Linear* const> layers,
                                   const Tensor& x) {
  std::vector<Tensor> weights, biases;
  for (const Linear* l : layers) {
    weights.push_back(l->weight.value());
    biases.push_back(detail::use<Tensor>(l->bias));
  }
  return linear_shared(x, weights, biases);
}
std::vector<Variable> forward_shared(std::span<const Linear* const> layers,
                                     const Variable& x) {
  std::vector<Variable> out;
  for (const Linear* l : layers) out.push_back(l->forward(x));
  return out;
}

Embedding::Embedding(const Weights& w, std::int64_t num_embeddings,
                     std::int64_t dim) {
  weight =
      register_parameter("weight", w.take("weight", {num_embeddings, dim}));
}

Variable Embedding::forward(const Tensor& ids) const {
  return embedding(weight, ids);
}
Tensor Embedding::lookup(const Tensor& ids) const {
  return embedding(weight.value(), ids);
}

RMSNorm::RMSNorm(const Weights& w, std::int64_t dim, double eps_) : eps(eps_) {
  weight =
      register_parameter("weight", w.take("weight", {dim}, WeightInit::Ones));
}

Variable RMSNorm::forward(const Variable& x) const {
  return rms_norm(x, weight, eps);
}
Tensor RMSNorm::forward(const Tensor& x) const {
  return rms_norm(x, weight.value(), eps);
}

SwiGLUMLP::SwiGLUMLP(const Weights& w, std::int64_t hidden,
                     std::int64_t intermediate)
    : gate_proj(w["gate_proj"], hidden, intermediate, false),
      up_proj(w["up_proj"], hidden, intermediate, false),
      down_proj(w["down_proj"], intermediate, hidden, false) {
  register_module("gate_proj", gate_proj);
  register_module("up_proj", up_proj);
  register_module("down_proj", down_proj);
}

namespace {

template <class T>
T mlp_forward(const SwiGLUMLP& m, const T& x) {
  const Linear* gate_up[] = {&m.gate_proj, &m.up_proj};
  const std::vector<T> h = forward_shared(gate_up, x);
  return m.down_proj.forward(swiglu(h[0], h[1]));
}

}  // namespace

Variable SwiGLUMLP::forward(const Variable& x) const {
  return mlp_forward(*this, x);
}
Tensor SwiGLUMLP::forward(const Tensor& x) const {
  return mlp_forward(*this, x);
}

}  // namespace tessel::nn

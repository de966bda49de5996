// The layers of a Llama/Qwen-family decoder. Parameter names follow
// PyTorch/HuggingFace ("weight", "bias"). forward() comes twice, from one
// definition: on Variables it records the graph (training), on Tensors it
// runs plain ops (inference: no graph, nothing recorded).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tessel/models/weights.hpp"
#include "tessel/nn/module.hpp"

namespace tessel::nn {

// Every layer takes its parameters from `w` (random for training, the
// file's tensors for a checkpoint), under its own names.

// y = x @ W^T + b, W [out_features, in_features]. W may be any float dtype
// or a GGUF block type (quantised matmul); the result is f32 then.
class Linear : public Module {
 public:
  Linear(const Weights& w, std::int64_t in_features, std::int64_t out_features,
         bool with_bias);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  std::int64_t in_features() const { return weight.size(1); }
  std::int64_t out_features() const { return weight.size(0); }
  Variable weight;
  Variable bias;  // undefined without a bias
};

// Each layer's forward of the same x, as the layers give them one by one.
// For a plain x the products share the work on x (linear_shared: one
// quantisation of x for GGUF block weights); a Variable records each.
std::vector<Tensor> forward_shared(std::span<const Linear* const> layers,
                                   const Tensor& x);
std::vector<Variable> forward_shared(std::span<const Linear* const> layers,
                                     const Variable& x);

// Rows of weight [num_embeddings, dim] picked by integer ids.
class Embedding : public Module {
 public:
  Embedding(const Weights& w, std::int64_t num_embeddings, std::int64_t dim);
  Variable forward(const Tensor& ids) const;
  // The same rows as a plain tensor, for inference.
  Tensor lookup(const Tensor& ids) const;

  Variable weight;
};

// x / sqrt(mean(x^2) + eps) * weight over the last axis; a fresh weight
// starts at 1.
class RMSNorm : public Module {
 public:
  RMSNorm(const Weights& w, std::int64_t dim, double eps = 1e-6);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  Variable weight;
  double eps;
};

// down_proj(silu(gate_proj(x)) * up_proj(x)).
class SwiGLUMLP : public Module {
 public:
  SwiGLUMLP(const Weights& w, std::int64_t hidden, std::int64_t intermediate);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  Linear gate_proj;
  Linear up_proj;
  Linear down_proj;
};

}  // namespace tessel::nn

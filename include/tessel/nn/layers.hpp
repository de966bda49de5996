// The layers of a Llama/Qwen-family decoder. Parameter names follow
// PyTorch/HuggingFace ("weight", "bias"). forward() comes twice, from one
// definition: on Variables it records the graph (training), on Tensors it
// runs plain ops (inference: no graph, nothing recorded).
#pragma once

#include <cstdint>

#include "tessel/core/random.hpp"
#include "tessel/nn/module.hpp"

namespace tessel::nn {

// y = x @ W^T + b, W [out_features, in_features] drawn from N(0, init_std).
class Linear : public Module {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias,
         Generator& generator, double init_std = 0.02);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  std::int64_t in_features() const { return weight.size(1); }
  std::int64_t out_features() const { return weight.size(0); }
  Variable weight;
  Variable bias;  // undefined without a bias
};

// Rows of weight [num_embeddings, dim] picked by integer ids.
class Embedding : public Module {
 public:
  Embedding(std::int64_t num_embeddings, std::int64_t dim, Generator& generator,
            double init_std = 0.02);
  Variable forward(const Tensor& ids) const;
  // The same rows as a plain tensor, for inference.
  Tensor lookup(const Tensor& ids) const;

  Variable weight;
};

// x / sqrt(mean(x^2) + eps) * weight over the last axis; weight starts at 1.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(std::int64_t dim, double eps = 1e-6);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  Variable weight;
  double eps;
};

// down_proj(silu(gate_proj(x)) * up_proj(x)).
class SwiGLUMLP : public Module {
 public:
  SwiGLUMLP(std::int64_t hidden, std::int64_t intermediate,
            Generator& generator, double init_std = 0.02);
  Variable forward(const Variable& x) const;
  Tensor forward(const Tensor& x) const;

  Linear gate_proj;
  Linear up_proj;
  Linear down_proj;
};

}  // namespace tessel::nn

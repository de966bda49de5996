// Token and position embeddings: table lookup and rotary position
// embedding (RoPE).
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel {

// The gradient of embedding(weight, ids) with respect to a weight of
// `num_embeddings` rows, from grad_out (ids..., dim): row r sums the
// gradients of the positions whose id is r (PyTorch's
// embedding_dense_backward). Float grad_out; f32, f64, or f32 accumulation
// rounded once for 16-bit and 8-bit floats. Ids must lie in [0, rows).
Tensor embedding_backward(const Tensor& grad_out, const Tensor& ids,
                          std::int64_t num_embeddings);

// How the rotated pairs are laid out along the head dimension.
enum class RopeStyle {
  NeoX,  // (i, i + rotary_dim/2): GPT-NeoX, HF Llama/Qwen, llama.cpp NEOX
  GPTJ,  // (2i, 2i + 1) interleaved: GPT-J, Meta's original Llama
};

struct RopeOptions {
  double theta = 10000.0;  // the base of the frequencies
  RopeStyle style = RopeStyle::NeoX;
  std::int64_t rotary_dim = 0;  // leading dims rotated; 0 = all of head_dim
};

struct RopeTables {
  Tensor cos;
  Tensor sin;
};

// cos and sin of position * theta^(-2i / rotary_dim) for i < rotary_dim / 2:
// shape positions.shape + (rotary_dim / 2). Angles are computed in f64
// (an f32 product loses about position * 2^-24 radians) and rounded to
// `dtype` once.
RopeTables rope_tables(const Tensor& positions, std::int64_t rotary_dim,
                       double theta = 10000.0, DType dtype = DType::F32);

// embedding rope rope_with_tables, declared once for Tensor and Variable
// operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/embedding.inc"
#undef TESSEL_VALUE

}  // namespace tessel

// The problem descriptions the op layer hands to a backend: which
// reduction, over which (A, R, B) view, with which window geometry. They
// are plain data shared by every backend, so they live above any one of
// them (a CUDA backend reads the same ReduceShape as the CPU one).
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/dtype.hpp"

namespace tessel {

// ---- random fills (ops/factories.cpp) ----

// Philox blocks a draw of `numel` values of `dtype` consumes: a block of
// four 32-bit words gives 4 narrow-float values or 2 wide (f64, integer)
// ones. Part of the stream contract (Note [random
// streams]), so every backend draws from the same counters.
inline std::uint64_t random_blocks(DType dtype, std::int64_t numel) {
  const bool wide = dtype == DType::F64 || !is_floating_point(dtype);
  const std::int64_t per_block = wide ? 2 : 4;
  return static_cast<std::uint64_t>((numel + per_block - 1) / per_block);
}

// ---- reductions, scans, softmax (ops/reduce.cpp) ----

enum class ReduceOp : std::uint8_t {
  Sum,
  Mean,
  Prod,
  Max,
  Min,
  Any,
  All,
  SumSquares,
  L1,
  L2,
  LInf,
  LogSumExp,
  ArgMax,
  ArgMin,
  Var,
  Std,
};

// The canonical view of a reduction: a contiguous input where axis R is
// reduced and A (outer) and B (inner) are kept.
struct ReduceShape {
  std::int64_t outer;   // A
  std::int64_t reduce;  // R (>= 1; empty reductions are handled above)
  std::int64_t inner;   // B
};

enum class SoftmaxKind : std::uint8_t { Softmax, LogSoftmax, Hardmax };

// ---- indexing (ops/indexing.cpp) ----

enum class ScatterMode : std::uint8_t { Assign, Add, Mul, Max, Min };

// ---- normalisation (ops/norm.cpp) ----

enum class NormKind : int {
  Layer,  // (x - mean) / sqrt(var + eps), var biased
  Rms,    // x / sqrt(mean(x^2) + eps)
};

struct NormRows {
  NormKind kind = NormKind::Layer;
  std::int64_t rows = 0;
  std::int64_t n = 0;  // elements per row
  double eps = 0.0;
  // Row r uses weight/bias set (r % weight_period), each of n / segment
  // values (group norm: period = groups, segment = spatial size).
  std::int64_t segment = 1;
  std::int64_t weight_period = 1;
};

// ---- convolution and pooling (ops/conv.cpp) ----

struct ConvGeometry {
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> dilation;  // 1 = dense (tessel's convention)
  std::vector<std::int64_t> pad_begin;
  std::vector<std::int64_t> pad_end;
  std::int64_t groups = 1;
};

struct PoolGeometry {
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> dilation;
  std::vector<std::int64_t> pad_begin;
  // Padding after the input that counts as "pad" for count_include_pad;
  // windows that reach further (ceil mode) never count those positions.
  std::vector<std::int64_t> pad_end;
  bool count_include_pad = false;
};

// ---- rotary embedding (ops/embedding.cpp) ----

struct RopeProblem {
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;  // even, <= head_dim
  bool interleaved = false;     // GPT-J pairs (2i, 2i+1), else (i, i + half)
  // The tables' element strides over the row axes (x.shape[:-1]), 0 where
  // they broadcast; each table row of rotary_dim/2 values is contiguous.
  std::vector<std::int64_t> row_shape;
  std::vector<std::int64_t> table_strides;
};

// ---- optimiser updates (ops/optimizer_update.cpp) ----

// One Adam/AdamW step with its scalars computed in double and rounded
// once, as the op-by-op form rounds its scalar operands: p = p * shrink;
// g += p * l2; m += (g - m) * keep1; v = v * beta2 + g * g * keep2;
// p -= m / (sqrt(v) / c2_root + eps) * step_size.
struct AdamStep {
  float shrink = 1.0f;  // 1 - lr * weight_decay (AdamW), else 1
  float l2 = 0.0f;      // weight_decay (Adam), else 0
  float keep1 = 0.1f;   // 1 - beta1
  float beta2 = 0.999f;
  float keep2 = 0.001f;  // 1 - beta2
  float eps = 1e-8f;
  float step_size = 1e-3f;  // lr / (1 - beta1^t)
  float c2_root = 1.0f;     // sqrt(1 - beta2^t)
};

// ---- attention (ops/attention.cpp) ----

struct AttentionShape {
  std::int64_t batch = 0, q_heads = 0, kv_heads = 0;  // q_heads % kv_heads == 0
  std::int64_t q_len = 0, kv_len = 0, head_dim = 0, value_dim = 0;
  float scale = 1.0f;
  float softcap = 0.0f;  // > 0: cap * tanh(s / cap) before masking
  bool causal = false;
  std::int64_t causal_offset = 0;  // query i sees keys j <= i + offset
};

// ---- matrix decompositions (ops/decompositions.cpp) ----

// `count` row-major matrices of rows x cols, one after another (for
// solve, cols is the number of right-hand sides of the n x n systems).
struct MatrixBatch {
  std::int64_t count = 0;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

}  // namespace tessel

// Reduction, scan and softmax kernels over the canonical (A, R, B) view:
// a contiguous input where axis R is reduced, A (outer) and B (inner) are
// kept. The op layer builds the view and allocates the output.
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

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

struct ReduceShape {
  std::int64_t outer;   // A
  std::int64_t reduce;  // R (>= 1; empty reductions are handled above)
  std::int64_t inner;   // B
};

// out (A*B elements, contiguous, of the op's result dtype) from in.
void reduce(ReduceOp op, double correction, const Tensor& in, const Tensor& out,
            const ReduceShape& shape);

// Cumulative sum or product along R; out has in's shape.
void cumulative(bool product, bool exclusive, bool reverse, const Tensor& in,
                const Tensor& out, const ReduceShape& shape);

enum class SoftmaxKind : std::uint8_t { Softmax, LogSoftmax, Hardmax };
void softmax(SoftmaxKind kind, const Tensor& in, const Tensor& out,
             const ReduceShape& shape);

}  // namespace tessel::cpu

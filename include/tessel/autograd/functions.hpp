// The differentiable ops: the Tensor ops of tessel/ops with Variable
// operands, same names and meanings. Each records its gradient rule when an
// operand requires a gradient (src/autograd/*.cpp). Index, mask, position
// and statistics operands stay Tensors: they carry no gradient.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/autograd/variable.hpp"
#include "tessel/ops/attention.hpp"
#include "tessel/ops/conv.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/embedding.hpp"
#include "tessel/ops/indexing.hpp"
#include "tessel/ops/linalg.hpp"
#include "tessel/ops/norm.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

// ---- element-wise ----------------------------------------------------------
// One overload per Plain row of TESSEL_FOR_EACH_UNARY_OP (op_list.hpp),
// generated from the table: neg abs sign sqrt rsqrt reciprocal exp expm1
// log log1p log2 sin cos tanh sigmoid relu selu silu erf floor ceil round
// trunc isnan isinf isfinite logical_not bitwise_not. Each row's gradient
// rule is its TESSEL_UNARY_GRADIENT in src/autograd/elementwise.cpp (a row
// without one does not compile). Piecewise-constant rows (sign, floor,
// ceil, round, trunc) and rows with bool results or integer inputs give
// constants: no gradient flows through them, as in PyTorch.
#define TESSEL_DECLARE_VARIABLE_UNARY(e, name, result, inputs, kind, kernel) \
  TESSEL_DECLARE_VARIABLE_UNARY_##kind(name)
#define TESSEL_DECLARE_VARIABLE_UNARY_Plain(name) \
  Variable name(const Variable& x);
#define TESSEL_DECLARE_VARIABLE_UNARY_Param(name)
TESSEL_FOR_EACH_UNARY_OP(TESSEL_DECLARE_VARIABLE_UNARY)
#undef TESSEL_DECLARE_VARIABLE_UNARY_Param
#undef TESSEL_DECLARE_VARIABLE_UNARY_Plain
#undef TESSEL_DECLARE_VARIABLE_UNARY
// Every row of TESSEL_FOR_EACH_BINARY_OP (op_list.hpp), generated from
// the table with all operand mixes: two Variables, a Variable and a Tensor
// or a Python-style number (constants: no gradient flows to them). Each
// row's gradient is its TESSEL_BINARY_GRADIENT in src/autograd/
// elementwise.cpp (a row without one does not compile). maximum/minimum
// split the gradient evenly at ties (PyTorch); remainder's gradient is
// PyTorch's (1 for a, -floor(a / b) for b); comparisons, logical and
// bitwise ops and floor_divide give constants.
#define TESSEL_DECLARE_VARIABLE_BINARY(e, name, result, inputs, kind, kernel) \
  Variable name(const Variable& a, const Variable& b);                        \
  Variable name(const Variable& a, const Tensor& b);                          \
  Variable name(const Tensor& a, const Variable& b);                          \
  Variable name(const Variable& a, Scalar b);                                 \
  Variable name(Scalar a, const Variable& b);
TESSEL_FOR_EACH_BINARY_OP(TESSEL_DECLARE_VARIABLE_BINARY)
#undef TESSEL_DECLARE_VARIABLE_BINARY
// where (differentiable/elementwise.inc) with one branch a constant.
Variable where(const Tensor& condition, const Variable& a, const Tensor& b);
Variable where(const Tensor& condition, const Tensor& a, const Variable& b);

// Operators with a Tensor operand: the Tensor is a constant.
#define TESSEL_MIXED_BINARY(name)                    \
  Variable name(const Variable& a, const Tensor& b); \
  Variable name(const Tensor& a, const Variable& b);
TESSEL_MIXED_BINARY(operator+)
TESSEL_MIXED_BINARY(operator-)
TESSEL_MIXED_BINARY(operator*)
TESSEL_MIXED_BINARY(operator/)
#undef TESSEL_MIXED_BINARY

Variable operator-(const Variable& x);
Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator+(const Variable& a, Scalar b);
Variable operator-(const Variable& a, Scalar b);
Variable operator*(const Variable& a, Scalar b);
Variable operator/(const Variable& a, Scalar b);
Variable operator+(Scalar a, const Variable& b);
Variable operator-(Scalar a, const Variable& b);
Variable operator*(Scalar a, const Variable& b);
Variable operator/(Scalar a, const Variable& b);

// ---- every other differentiable op -----------------------------------------
// Declared once, with their doc comments, in tessel/ops/differentiable/*.inc
// for both value types; included here with Variable operands. Index, mask,
// position and statistics operands stay Tensors.
using VariableTopK = TopKResult<Variable>;
#define TESSEL_VALUE Variable
#include "tessel/ops/differentiable/attention.inc"
#include "tessel/ops/differentiable/conv.inc"
#include "tessel/ops/differentiable/elementwise.inc"
#include "tessel/ops/differentiable/embedding.inc"
#include "tessel/ops/differentiable/indexing.inc"
#include "tessel/ops/differentiable/linalg.inc"
#include "tessel/ops/differentiable/norm.inc"
#include "tessel/ops/differentiable/reduce.inc"
#undef TESSEL_VALUE

}  // namespace tessel

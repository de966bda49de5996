// Element-wise ops (DESIGN §7 names). Inputs broadcast with NumPy rules and
// are never materialised; dtypes promote per DESIGN §1 (a Scalar operand is
// "weak": it never widens the tensor's dtype, except that a float scalar
// makes an integer or bool tensor compute in f32); f16/bf16/f8 compute in
// f32 and round once. Every op has an allocating form and an `_out` form
// that writes into a given tensor (any view of the result's shape); binary
// ops also have an in-place `_` form. A result dtype may be stored into a
// different output dtype unless that would turn floats into integers or
// numbers into bool (PyTorch's rule).
// Op semantics at the edges (NaN, integer division by zero, ...) are in
// docs/ops.md.
#pragma once

#include <optional>
#include <string_view>

#include "tessel/core/scalar.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/op_list.hpp"

namespace tessel {

// ---- unary -----------------------------------------------------------------
// neg abs sign sqrt rsqrt reciprocal exp expm1 log log1p log2 sin cos tanh
// sigmoid relu selu silu erf floor ceil round (half to even) trunc isnan
// isinf isfinite logical_not bitwise_not. Float-valued ops give f32 for
// integer and bool inputs.
#define TESSEL_DECLARE_UNARY(e, name, result, inputs, kind, kernel) \
  TESSEL_DECLARE_UNARY_##kind(name)
#define TESSEL_DECLARE_UNARY_Plain(name) \
  Tensor name(const Tensor& x);          \
  Tensor name##_out(const Tensor& out, const Tensor& x);
#define TESSEL_DECLARE_UNARY_Param(name)
TESSEL_FOR_EACH_UNARY_OP(TESSEL_DECLARE_UNARY)
#undef TESSEL_DECLARE_UNARY_Param
#undef TESSEL_DECLARE_UNARY_Plain
#undef TESSEL_DECLARE_UNARY

enum class GeluApproximation { None, Tanh };

// leaky_relu elu gelu gelu_tanh softplus (the Param rows) clip where,
// declared once for Tensor and Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/elementwise.inc"
#undef TESSEL_VALUE
// clip with tensor bounds, which broadcast against x.
Tensor clip(const Tensor& x, const Tensor& min, const Tensor& max);

// In place (through any view, so `exp_(t.slice(0, 0, 4))` works); the
// result is the same tensor handle.
Tensor neg_(const Tensor& x);
Tensor abs_(const Tensor& x);
Tensor relu_(const Tensor& x);
Tensor exp_(const Tensor& x);
Tensor sqrt_(const Tensor& x);
Tensor tanh_(const Tensor& x);
Tensor sigmoid_(const Tensor& x);

// Any row of the table by its enum: what test registries and bindings use
// to run every op without naming each (`params` as default_params(op) gives
// the named overloads' defaults).
Tensor unary(UnaryOp op, const Tensor& x, const UnaryParams& params);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// The row named `name` ("exp", "leaky_relu", ...), if there is one.
std::optional<UnaryOp> unary_op_from_name(std::string_view name);
std::optional<BinaryOp> binary_op_from_name(std::string_view name);

// ---- binary ----------------------------------------------------------------
// add sub mul div (true division: integers give f32) floor_divide remainder
// (Python semantics) pow maximum minimum (NaN-propagating) eq ne lt le gt
// ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor
// swiglu (silu(a) * b: the gated MLP of Llama/Qwen with a = gate, b = up).
#define TESSEL_DECLARE_BINARY(e, name, result, inputs, kind, kernel)      \
  Tensor name(const Tensor& a, const Tensor& b);                          \
  Tensor name(const Tensor& a, Scalar b);                                 \
  Tensor name(Scalar a, const Tensor& b);                                 \
  Tensor name##_out(const Tensor& out, const Tensor& a, const Tensor& b); \
  Tensor name##_(const Tensor& self, const Tensor& other);                \
  Tensor name##_(const Tensor& self, Scalar other);
TESSEL_FOR_EACH_BINARY_OP(TESSEL_DECLARE_BINARY)
#undef TESSEL_DECLARE_BINARY

// ---- ternary ---------------------------------------------------------------
// where (above) with number branches.
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);
// a * b + c with a single rounding for floats.
Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c);

// The dtype `op(t, s)` computes in for a tensor of dtype t and a scalar s.
DType scalar_result_type(DType t, const Scalar& s);

// ---- operators -------------------------------------------------------------
Tensor operator-(const Tensor& x);
Tensor operator!(const Tensor& x);  // logical_not
Tensor operator~(const Tensor& x);  // bitwise_not
#define TESSEL_DECLARE_OPERATOR(symbol, name)               \
  Tensor operator symbol(const Tensor& a, const Tensor& b); \
  Tensor operator symbol(const Tensor& a, Scalar b);        \
  Tensor operator symbol(Scalar a, const Tensor& b);
TESSEL_DECLARE_OPERATOR(+, add)
TESSEL_DECLARE_OPERATOR(-, sub)
TESSEL_DECLARE_OPERATOR(*, mul)
TESSEL_DECLARE_OPERATOR(/, div)
TESSEL_DECLARE_OPERATOR(%, remainder)
TESSEL_DECLARE_OPERATOR(==, eq)
TESSEL_DECLARE_OPERATOR(!=, ne)
TESSEL_DECLARE_OPERATOR(<, lt)
TESSEL_DECLARE_OPERATOR(<=, le)
TESSEL_DECLARE_OPERATOR(>, gt)
TESSEL_DECLARE_OPERATOR(>=, ge)
TESSEL_DECLARE_OPERATOR(&, bitwise_and)
TESSEL_DECLARE_OPERATOR(|, bitwise_or)
TESSEL_DECLARE_OPERATOR(^, bitwise_xor)
#undef TESSEL_DECLARE_OPERATOR
Tensor& operator+=(Tensor& self, const Tensor& other);
Tensor& operator-=(Tensor& self, const Tensor& other);
Tensor& operator*=(Tensor& self, const Tensor& other);
Tensor& operator/=(Tensor& self, const Tensor& other);
Tensor& operator+=(Tensor& self, Scalar other);
Tensor& operator-=(Tensor& self, Scalar other);
Tensor& operator*=(Tensor& self, Scalar other);
Tensor& operator/=(Tensor& self, Scalar other);

}  // namespace tessel

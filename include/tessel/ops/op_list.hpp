// The element-wise ops as data: one row each, read by the public API (the
// declarations), the op layer (result dtype, accepted inputs) and the CPU
// kernels (which functor to run).
#pragma once

#include <cstdint>

namespace tessel {

// How an op's output dtype follows from its (promoted) input dtype.
enum class ResultKind : std::uint8_t {
  Same,   // the input dtype
  Float,  // float_result_type(input): integers and bool compute in f32
  Bool,   // always bool
};

// Which input dtypes an op accepts (others are E2201).
enum class InputKind : std::uint8_t {
  Any,
  NonBool,   // numbers, not bool
  Integral,  // integers and bool (bitwise ops)
};

// X(enum, function name, result, inputs, Plain | Param). Param ops take
// extra arguments and are declared by hand in elementwise.hpp.
#define TESSEL_FOR_EACH_UNARY_OP(X)            \
  X(Neg, neg, Same, NonBool, Plain)            \
  X(Abs, abs, Same, Any, Plain)                \
  X(Sign, sign, Same, Any, Plain)              \
  X(Sqrt, sqrt, Float, Any, Plain)             \
  X(Rsqrt, rsqrt, Float, Any, Plain)           \
  X(Reciprocal, reciprocal, Float, Any, Plain) \
  X(Exp, exp, Float, Any, Plain)               \
  X(Expm1, expm1, Float, Any, Plain)           \
  X(Log, log, Float, Any, Plain)               \
  X(Log1p, log1p, Float, Any, Plain)           \
  X(Log2, log2, Float, Any, Plain)             \
  X(Sin, sin, Float, Any, Plain)               \
  X(Cos, cos, Float, Any, Plain)               \
  X(Tanh, tanh, Float, Any, Plain)             \
  X(Sigmoid, sigmoid, Float, Any, Plain)       \
  X(Relu, relu, Same, NonBool, Plain)          \
  X(LeakyRelu, leaky_relu, Float, Any, Param)  \
  X(Elu, elu, Float, Any, Param)               \
  X(Selu, selu, Float, Any, Plain)             \
  X(Gelu, gelu, Float, Any, Param)             \
  X(GeluTanh, gelu_tanh, Float, Any, Param)    \
  X(Silu, silu, Float, Any, Plain)             \
  X(Softplus, softplus, Float, Any, Param)     \
  X(Erf, erf, Float, Any, Plain)               \
  X(Floor, floor, Same, Any, Plain)            \
  X(Ceil, ceil, Same, Any, Plain)              \
  X(Round, round, Same, Any, Plain)            \
  X(Trunc, trunc, Same, Any, Plain)            \
  X(IsNan, isnan, Bool, Any, Plain)            \
  X(IsInf, isinf, Bool, Any, Plain)            \
  X(IsFinite, isfinite, Bool, Any, Plain)      \
  X(LogicalNot, logical_not, Bool, Any, Plain) \
  X(BitwiseNot, bitwise_not, Same, Integral, Plain)

// X(enum, function name, result, inputs, Plain)
#define TESSEL_FOR_EACH_BINARY_OP(X)                 \
  X(Add, add, Same, Any, Plain)                      \
  X(Sub, sub, Same, NonBool, Plain)                  \
  X(Mul, mul, Same, Any, Plain)                      \
  X(Div, div, Float, Any, Plain)                     \
  X(FloorDivide, floor_divide, Same, NonBool, Plain) \
  X(Remainder, remainder, Same, NonBool, Plain)      \
  X(Pow, pow, Same, NonBool, Plain)                  \
  X(Maximum, maximum, Same, Any, Plain)              \
  X(Minimum, minimum, Same, Any, Plain)              \
  X(Eq, eq, Bool, Any, Plain)                        \
  X(Ne, ne, Bool, Any, Plain)                        \
  X(Lt, lt, Bool, Any, Plain)                        \
  X(Le, le, Bool, Any, Plain)                        \
  X(Gt, gt, Bool, Any, Plain)                        \
  X(Ge, ge, Bool, Any, Plain)                        \
  X(LogicalAnd, logical_and, Bool, Any, Plain)       \
  X(LogicalOr, logical_or, Bool, Any, Plain)         \
  X(LogicalXor, logical_xor, Bool, Any, Plain)       \
  X(BitwiseAnd, bitwise_and, Same, Integral, Plain)  \
  X(BitwiseOr, bitwise_or, Same, Integral, Plain)    \
  X(BitwiseXor, bitwise_xor, Same, Integral, Plain)  \
  X(Swiglu, swiglu, Float, Any, Plain)

enum class UnaryOp : std::uint8_t {
#define TESSEL_OP_ENUM(e, name, result, inputs, kind) e,
  TESSEL_FOR_EACH_UNARY_OP(TESSEL_OP_ENUM)
};
enum class BinaryOp : std::uint8_t {
  TESSEL_FOR_EACH_BINARY_OP(TESSEL_OP_ENUM)
#undef TESSEL_OP_ENUM
};

struct OpInfo {
  const char* name;
  ResultKind result;
  InputKind inputs;
};

inline constexpr OpInfo kUnaryOps[] = {
#define TESSEL_OP_INFO(e, name, result, inputs, kind) \
  {#name, ResultKind::result, InputKind::inputs},
    TESSEL_FOR_EACH_UNARY_OP(TESSEL_OP_INFO)};
inline constexpr OpInfo kBinaryOps[] = {
    TESSEL_FOR_EACH_BINARY_OP(TESSEL_OP_INFO)
#undef TESSEL_OP_INFO
};

constexpr const OpInfo& op_info(UnaryOp op) {
  return kUnaryOps[static_cast<int>(op)];
}
constexpr const OpInfo& op_info(BinaryOp op) {
  return kBinaryOps[static_cast<int>(op)];
}

// The parameters of parameterised unary ops (leaky_relu's alpha, elu's
// alpha, softplus's beta and threshold).
struct UnaryParams {
  double a = 0.0;
  double b = 0.0;
};

}  // namespace tessel

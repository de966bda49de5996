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

// Whether contiguous f32/bf16/f16 data runs a Highway body (Simd) or the
// scalar body (Scalar: ops whose result is bool or integer).
enum class KernelKind : std::uint8_t { Simd, Scalar };

// Which input dtypes an op accepts (others are E2201).
enum class InputKind : std::uint8_t {
  Any,
  NonBool,   // numbers, not bool
  Integral,  // integers and bool (bitwise ops)
  Integer,   // integers only (shifts)
};

// X(enum, function name, result, inputs, Plain | Param, Simd | Scalar).
// Param ops take extra arguments (their defaults: default_params below) and
// their named-argument overloads are declared in elementwise.hpp. `Simd`
// promises a Highway body for contiguous f32/bf16/f16 data
// (backends/cpu/simd/elementwise_simd.cpp): a row marked Simd without one
// does not compile. `Scalar` runs the scalar body on every layout.
#define TESSEL_FOR_EACH_UNARY_OP(X)                    \
  X(Neg, neg, Same, NonBool, Plain, Simd)              \
  X(Abs, abs, Same, Any, Plain, Simd)                  \
  X(Sign, sign, Same, Any, Plain, Simd)                \
  X(Sqrt, sqrt, Float, Any, Plain, Simd)               \
  X(Rsqrt, rsqrt, Float, Any, Plain, Simd)             \
  X(Reciprocal, reciprocal, Float, Any, Plain, Simd)   \
  X(Exp, exp, Float, Any, Plain, Simd)                 \
  X(Expm1, expm1, Float, Any, Plain, Simd)             \
  X(Log, log, Float, Any, Plain, Simd)                 \
  X(Log1p, log1p, Float, Any, Plain, Simd)             \
  X(Log2, log2, Float, Any, Plain, Simd)               \
  X(Log10, log10, Float, Any, Plain, Scalar)           \
  X(Sin, sin, Float, Any, Plain, Simd)                 \
  X(Cos, cos, Float, Any, Plain, Simd)                 \
  X(Tanh, tanh, Float, Any, Plain, Simd)               \
  X(Tan, tan, Float, Any, Plain, Scalar)               \
  X(Asin, asin, Float, Any, Plain, Scalar)             \
  X(Acos, acos, Float, Any, Plain, Scalar)             \
  X(Atan, atan, Float, Any, Plain, Scalar)             \
  X(Sinh, sinh, Float, Any, Plain, Scalar)             \
  X(Cosh, cosh, Float, Any, Plain, Scalar)             \
  X(Asinh, asinh, Float, Any, Plain, Scalar)           \
  X(Acosh, acosh, Float, Any, Plain, Scalar)           \
  X(Atanh, atanh, Float, Any, Plain, Scalar)           \
  X(Square, square, Same, NonBool, Plain, Simd)        \
  X(Sigmoid, sigmoid, Float, Any, Plain, Simd)         \
  X(Relu, relu, Same, NonBool, Plain, Simd)            \
  X(LeakyRelu, leaky_relu, Float, Any, Param, Simd)    \
  X(Elu, elu, Float, Any, Param, Simd)                 \
  X(Selu, selu, Float, Any, Plain, Simd)               \
  X(Gelu, gelu, Float, Any, Param, Simd)               \
  X(GeluTanh, gelu_tanh, Float, Any, Param, Simd)      \
  X(Silu, silu, Float, Any, Plain, Simd)               \
  X(Softplus, softplus, Float, Any, Param, Simd)       \
  X(Erf, erf, Float, Any, Plain, Simd)                 \
  X(Floor, floor, Same, Any, Plain, Simd)              \
  X(Ceil, ceil, Same, Any, Plain, Simd)                \
  X(Round, round, Same, Any, Plain, Simd)              \
  X(Trunc, trunc, Same, Any, Plain, Simd)              \
  X(IsNan, isnan, Bool, Any, Plain, Scalar)            \
  X(IsInf, isinf, Bool, Any, Plain, Scalar)            \
  X(IsFinite, isfinite, Bool, Any, Plain, Scalar)      \
  X(Signbit, signbit, Bool, Any, Plain, Scalar)        \
  X(LogicalNot, logical_not, Bool, Any, Plain, Scalar) \
  X(BitwiseNot, bitwise_not, Same, Integral, Plain, Scalar)

// X(enum, function name, result, inputs, Plain, Simd | Scalar)
#define TESSEL_FOR_EACH_BINARY_OP(X)                                      \
  X(Add, add, Same, Any, Plain, Simd)                                     \
  X(Sub, sub, Same, NonBool, Plain, Simd)                                 \
  X(Mul, mul, Same, Any, Plain, Simd)                                     \
  X(Div, div, Float, Any, Plain, Simd)                                    \
  X(FloorDivide, floor_divide, Same, NonBool, Plain, Scalar)              \
  X(Remainder, remainder, Same, NonBool, Plain, Scalar)                   \
  X(Pow, pow, Same, NonBool, Plain, Scalar)                               \
  X(Maximum, maximum, Same, Any, Plain, Simd)                             \
  X(Minimum, minimum, Same, Any, Plain, Simd)                             \
  X(Eq, eq, Bool, Any, Plain, Scalar)                                     \
  X(Ne, ne, Bool, Any, Plain, Scalar)                                     \
  X(Lt, lt, Bool, Any, Plain, Scalar)                                     \
  X(Le, le, Bool, Any, Plain, Scalar)                                     \
  X(Gt, gt, Bool, Any, Plain, Scalar)                                     \
  X(Ge, ge, Bool, Any, Plain, Scalar)                                     \
  X(LogicalAnd, logical_and, Bool, Any, Plain, Scalar)                    \
  X(LogicalOr, logical_or, Bool, Any, Plain, Scalar)                      \
  X(LogicalXor, logical_xor, Bool, Any, Plain, Scalar)                    \
  X(BitwiseAnd, bitwise_and, Same, Integral, Plain, Scalar)               \
  X(BitwiseOr, bitwise_or, Same, Integral, Plain, Scalar)                 \
  X(BitwiseXor, bitwise_xor, Same, Integral, Plain, Scalar)               \
  X(BitwiseLeftShift, bitwise_left_shift, Same, Integer, Plain, Scalar)   \
  X(BitwiseRightShift, bitwise_right_shift, Same, Integer, Plain, Scalar) \
  X(Atan2, atan2, Float, Any, Plain, Scalar)                              \
  X(Hypot, hypot, Float, Any, Plain, Scalar)                              \
  X(Copysign, copysign, Float, Any, Plain, Scalar)                        \
  X(Nextafter, nextafter, Float, Any, Plain, Scalar)                      \
  X(Logaddexp, logaddexp, Float, Any, Plain, Scalar)                      \
  X(Swiglu, swiglu, Float, Any, Plain, Simd)                              \
  X(SiluBackward, silu_backward, Float, Any, Plain, Simd)

enum class UnaryOp : std::uint8_t {
#define TESSEL_OP_ENUM(e, name, result, inputs, kind, kernel) e,
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
  KernelKind kernel;
};

inline constexpr OpInfo kUnaryOps[] = {
#define TESSEL_OP_INFO(e, name, result, inputs, kind, kernel) \
  {#name, ResultKind::result, InputKind::inputs, KernelKind::kernel},
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

inline constexpr int kUnaryOpCount = sizeof(kUnaryOps) / sizeof(OpInfo);
inline constexpr int kBinaryOpCount = sizeof(kBinaryOps) / sizeof(OpInfo);

// The ops defined on complex tensors (the array API's list); the others
// are E2201 for c64 and c128. abs gives the real magnitude, the Bool ops
// test both parts, round rounds each part.
constexpr bool accepts_complex(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Sign:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal:
    case UnaryOp::Exp:
    case UnaryOp::Expm1:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Log2:
    case UnaryOp::Log10:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tanh:
    case UnaryOp::Tan:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Square:
    case UnaryOp::Round:
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
    case UnaryOp::IsFinite:
    case UnaryOp::LogicalNot: return true;
    default: return false;
  }
}
constexpr bool accepts_complex(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
    case BinaryOp::LogicalXor: return true;
    default: return false;
  }
}

// The parameters of parameterised unary ops (leaky_relu's negative slope,
// elu's alpha, softplus's beta and threshold).
struct UnaryParams {
  double a = 0.0;
  double b = 0.0;
};

// The defaults of those parameters (PyTorch's), used by the named overloads
// in elementwise.hpp and by everything that runs an op from the table.
constexpr UnaryParams default_params(UnaryOp op) {
  switch (op) {
    case UnaryOp::LeakyRelu: return {0.01, 0.0};
    case UnaryOp::Elu: return {1.0, 0.0};
    case UnaryOp::Softplus: return {1.0, 20.0};
    default: return {};
  }
}

}  // namespace tessel

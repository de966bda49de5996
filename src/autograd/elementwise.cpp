// Gradients of the element-wise ops.
#include <cmath>
#include <numbers>

#include "autograd/elementwise_gradients.hpp"
#include "autograd/rules.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace autograd {

Tensor grad_for(const Tensor& grad, const Tensor& input) {
  return sum_to(grad, input.shape()).to(input.dtype());
}

Variable unary(const char* op, const Variable& x, const Tensor& y,
               Derivative derivative) {
  const Tensor xv = x.value();
  return record(op, y, {x}, [xv, y, derivative](const Tensor& g, const Needs&) {
    return one_grad(mul(g, derivative(xv, y)).to(xv.dtype()));
  });
}

}  // namespace autograd

using autograd::grad_for;
using autograd::Needs;
using autograd::record;
using autograd::unary;

namespace {

Tensor positive(const Tensor& x) { return gt(x, 0).to(x.dtype()); }

Variable constant(const Tensor& value) {
  return Variable(value, false);
}  // zero gradient

}  // namespace

// ---- the Plain unary rows, from the op table ----
//
// Each row of TESSEL_FOR_EACH_UNARY_OP without parameters has exactly one
// of: a derivative dy/dx from the input x and the result y
// (TESSEL_UNARY_GRADIENT), or a mark that its result is a constant
// (TESSEL_UNARY_CONSTANT: piecewise-constant ops, bool results, integer
// inputs). The Variable overload of every row is generated below; a row
// with neither does not compile (UnaryGradient has no primary definition).

namespace {

template <UnaryOp op>
struct UnaryGradient;

#define TESSEL_UNARY_GRADIENT(e)                                \
  template <>                                                   \
  struct UnaryGradient<UnaryOp::e> {                            \
    static Tensor derivative(const Tensor& x, const Tensor& y); \
  };                                                            \
  Tensor UnaryGradient<UnaryOp::e>::derivative(                 \
      [[maybe_unused]] const Tensor& x, [[maybe_unused]] const Tensor& y)
#define TESSEL_UNARY_CONSTANT(e)            \
  template <>                               \
  struct UnaryGradient<UnaryOp::e> {        \
    static constexpr bool kConstant = true; \
  }

TESSEL_UNARY_GRADIENT(Neg) { return full({}, -1, y.dtype(), y.device()); }
TESSEL_UNARY_GRADIENT(Abs) { return sign(x); }
TESSEL_UNARY_GRADIENT(Sqrt) { return div(0.5, y); }
TESSEL_UNARY_GRADIENT(Rsqrt) { return mul(pow(y, 3), -0.5); }
TESSEL_UNARY_GRADIENT(Reciprocal) { return neg(mul(y, y)); }
TESSEL_UNARY_GRADIENT(Exp) { return y; }
TESSEL_UNARY_GRADIENT(Expm1) { return add(y, 1); }
TESSEL_UNARY_GRADIENT(Log) { return reciprocal(x); }
TESSEL_UNARY_GRADIENT(Log1p) { return reciprocal(add(x, 1)); }
TESSEL_UNARY_GRADIENT(Log2) { return reciprocal(mul(x, std::numbers::ln2)); }
TESSEL_UNARY_GRADIENT(Sin) { return cos(x); }
TESSEL_UNARY_GRADIENT(Cos) { return neg(sin(x)); }
TESSEL_UNARY_GRADIENT(Log10) { return reciprocal(mul(x, std::numbers::ln10)); }
TESSEL_UNARY_GRADIENT(Tanh) { return sub(1, mul(y, y)); }
TESSEL_UNARY_GRADIENT(Tan) { return add(mul(y, y), 1); }
TESSEL_UNARY_GRADIENT(Asin) { return rsqrt(sub(1, mul(x, x))); }
TESSEL_UNARY_GRADIENT(Acos) { return neg(rsqrt(sub(1, mul(x, x)))); }
TESSEL_UNARY_GRADIENT(Atan) { return reciprocal(add(mul(x, x), 1)); }
TESSEL_UNARY_GRADIENT(Sinh) { return cosh(x); }
TESSEL_UNARY_GRADIENT(Cosh) { return sinh(x); }
TESSEL_UNARY_GRADIENT(Asinh) { return rsqrt(add(mul(x, x), 1)); }
TESSEL_UNARY_GRADIENT(Acosh) { return rsqrt(sub(mul(x, x), 1)); }
TESSEL_UNARY_GRADIENT(Atanh) { return reciprocal(sub(1, mul(x, x))); }
TESSEL_UNARY_GRADIENT(Square) { return mul(x, 2); }
TESSEL_UNARY_GRADIENT(Sigmoid) { return mul(y, sub(1, y)); }
TESSEL_UNARY_GRADIENT(Relu) { return positive(x); }
TESSEL_UNARY_GRADIENT(Selu) {
  // y = scale * (x > 0 ? x : alpha (e^x - 1)): the slope is scale, or
  // y + scale * alpha below zero.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return where(gt(x, 0), full({}, kScale, y.dtype(), y.device()),
               add(y, kScale * kAlpha));
}
TESSEL_UNARY_GRADIENT(Silu) {
  const Tensor s = sigmoid(x);
  return mul(s, add(mul(x, sub(1, s)), 1));
}
TESSEL_UNARY_GRADIENT(Erf) {
  return mul(exp(neg(mul(x, x))), 2.0 / std::sqrt(std::numbers::pi));
}
// Piecewise constant: zero gradient everywhere.
TESSEL_UNARY_CONSTANT(Sign);
TESSEL_UNARY_CONSTANT(Floor);
TESSEL_UNARY_CONSTANT(Ceil);
TESSEL_UNARY_CONSTANT(Round);
TESSEL_UNARY_CONSTANT(Trunc);
// Bool results, integer inputs: nothing to differentiate.
TESSEL_UNARY_CONSTANT(IsNan);
TESSEL_UNARY_CONSTANT(IsInf);
TESSEL_UNARY_CONSTANT(IsFinite);
TESSEL_UNARY_CONSTANT(Signbit);
TESSEL_UNARY_CONSTANT(LogicalNot);
TESSEL_UNARY_CONSTANT(BitwiseNot);

#undef TESSEL_UNARY_CONSTANT
#undef TESSEL_UNARY_GRADIENT

template <UnaryOp op>
Variable unary_row(const Variable& x) {
  const Tensor y = unary(op, x.value(), default_params(op));
  if constexpr (requires { UnaryGradient<op>::kConstant; }) {
    return constant(y);
  } else {
    return autograd::unary(op_info(op).name, x, y,
                           &UnaryGradient<op>::derivative);
  }
}

}  // namespace

#define TESSEL_DEFINE_VARIABLE_UNARY(e, name, result, inputs, kind, kernel) \
  TESSEL_DEFINE_VARIABLE_UNARY_##kind(e, name)
#define TESSEL_DEFINE_VARIABLE_UNARY_Plain(e, name) \
  Variable name(const Variable& x) { return unary_row<UnaryOp::e>(x); }
#define TESSEL_DEFINE_VARIABLE_UNARY_Param(e, name)
TESSEL_FOR_EACH_UNARY_OP(TESSEL_DEFINE_VARIABLE_UNARY)
#undef TESSEL_DEFINE_VARIABLE_UNARY_Param
#undef TESSEL_DEFINE_VARIABLE_UNARY_Plain
#undef TESSEL_DEFINE_VARIABLE_UNARY

Variable leaky_relu(const Variable& x, double slope) {
  return unary("leaky_relu", x, leaky_relu(x.value(), slope),
               [slope](const Tensor& xv, const Tensor&) {
                 return where(gt(xv, 0), full({}, 1.0, xv.dtype(), xv.device()),
                              full({}, slope, xv.dtype(), xv.device()));
               });
}
Variable elu(const Variable& x, double alpha) {
  return unary("elu", x, elu(x.value(), alpha),
               [alpha](const Tensor& xv, const Tensor& y) {
                 return where(gt(xv, 0), full({}, 1.0, y.dtype(), y.device()),
                              add(y, alpha));
               });
}
Variable gelu(const Variable& x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) return gelu_tanh(x);
  // d/dx x Phi(x) = Phi(x) + x phi(x).
  return unary("gelu", x, gelu(x.value()), [](const Tensor& xv, const Tensor&) {
    const Tensor cdf = mul(add(erf(mul(xv, std::numbers::sqrt2 / 2)), 1), 0.5);
    const Tensor pdf =
        mul(exp(mul(mul(xv, xv), -0.5)), 1.0 / std::sqrt(2 * std::numbers::pi));
    return add(cdf, mul(xv, pdf));
  });
}
Variable gelu_tanh(const Variable& x) {
  // y = x/2 (1 + tanh(u)), u = c (x + 0.044715 x^3), c = sqrt(2/pi).
  return unary("gelu_tanh", x, gelu_tanh(x.value()),
               [](const Tensor& xv, const Tensor&) {
                 const double c = std::sqrt(2.0 / std::numbers::pi);
                 const Tensor x2 = mul(xv, xv);
                 const Tensor t =
                     tanh(mul(mul(xv, add(mul(x2, 0.044715), 1)), c));
                 const Tensor du = mul(add(mul(x2, 3 * 0.044715), 1), c);
                 return add(mul(add(t, 1), 0.5),
                            mul(mul(mul(xv, sub(1, mul(t, t))), du), 0.5));
               });
}
Variable softplus(const Variable& x, double beta, double threshold) {
  return unary("softplus", x, softplus(x.value(), beta, threshold),
               [beta, threshold](const Tensor& xv, const Tensor&) {
                 const Tensor bx = mul(xv, beta);
                 return where(gt(bx, threshold),
                              full({}, 1.0, xv.dtype(), xv.device()),
                              sigmoid(bx));
               });
}
Variable clip(const Variable& x, std::optional<Scalar> lo,
              std::optional<Scalar> hi) {
  return unary("clip", x, clip(x.value(), lo, hi),
               [lo, hi](const Tensor& xv, const Tensor&) {
                 Tensor inside =
                     full(xv.shape(), true, DType::Bool, xv.device());
                 if (lo) inside = logical_and(inside, ge(xv, *lo));
                 if (hi) inside = logical_and(inside, le(xv, *hi));
                 return inside.to(xv.dtype());
               });
}

// ---- the binary rows, from the op table ----
//
// Each row has either TESSEL_BINARY_GRADIENT: the contributions
// {dL/da, dL/db} from the upstream gradient g, the operands a and b and
// the result y, before they are summed back over broadcast axes (only
// those n asks for need computing), or TESSEL_BINARY_CONSTANT.

namespace {

using Partials = std::pair<Tensor, Tensor>;

template <BinaryOp op>
struct BinaryGradient;

// Rows whose rule reads the result y: only these keep it alive in the
// graph (the others would hold every output until backward for nothing;
// a rule that reads y without the mark sees an undefined tensor and its
// gradcheck case fails).
template <BinaryOp op>
constexpr bool kReadsResult = false;
template <>
constexpr bool kReadsResult<BinaryOp::Div> = true;
template <>
constexpr bool kReadsResult<BinaryOp::Pow> = true;
template <>
constexpr bool kReadsResult<BinaryOp::Hypot> = true;
template <>
constexpr bool kReadsResult<BinaryOp::Copysign> = true;
template <>
constexpr bool kReadsResult<BinaryOp::Logaddexp> = true;

#define TESSEL_BINARY_GRADIENT(e)                                         \
  template <>                                                             \
  struct BinaryGradient<BinaryOp::e> {                                    \
    static Partials partials(const Tensor& g, const Tensor& a,            \
                             const Tensor& b, const Tensor& y,            \
                             const Needs& n);                             \
  };                                                                      \
  Partials BinaryGradient<BinaryOp::e>::partials(                         \
      [[maybe_unused]] const Tensor& g, [[maybe_unused]] const Tensor& a, \
      [[maybe_unused]] const Tensor& b, [[maybe_unused]] const Tensor& y, \
      [[maybe_unused]] const Needs& n)
#define TESSEL_BINARY_CONSTANT(e)           \
  template <>                               \
  struct BinaryGradient<BinaryOp::e> {      \
    static constexpr bool kConstant = true; \
  }

// maximum/minimum: the gradient goes to the chosen operand, halved at ties.
Partials extremum(const Tensor& g, const Tensor& a, const Tensor& b,
                  const Needs& n, bool is_max) {
  const Tensor a_wins = is_max ? gt(a, b) : lt(a, b);
  const Tensor tie = eq(a, b);
  const Tensor half = mul(g, 0.5);
  const Tensor zero = zeros({}, g.dtype(), g.device());
  Tensor ga, gb;
  if (n[0]) ga = where(a_wins, g, where(tie, half, zero));
  if (n[1]) gb = where(logical_or(a_wins, tie), where(tie, half, zero), g);
  return {ga, gb};
}

TESSEL_BINARY_GRADIENT(Add) { return {g, g}; }
TESSEL_BINARY_GRADIENT(Sub) { return {g, n[1] ? neg(g) : Tensor()}; }
TESSEL_BINARY_GRADIENT(Mul) {
  return {n[0] ? mul(g, b) : Tensor(), n[1] ? mul(g, a) : Tensor()};
}
TESSEL_BINARY_GRADIENT(Div) {
  return {n[0] ? div(g, b) : Tensor(),
          n[1] ? neg(div(mul(g, y), b)) : Tensor()};
}
TESSEL_BINARY_GRADIENT(Pow) {
  return {n[0] ? mul(g, mul(b, pow(a, sub(b, 1)))) : Tensor(),
          n[1] ? mul(g, mul(y, log(a))) : Tensor()};
}
// a - floor(a / b) * b, as PyTorch differentiates it.
TESSEL_BINARY_GRADIENT(Remainder) {
  return {g, n[1] ? mul(g, neg(floor(div(a, b)))) : Tensor()};
}
TESSEL_BINARY_GRADIENT(Maximum) { return extremum(g, a, b, n, true); }
TESSEL_BINARY_GRADIENT(Minimum) { return extremum(g, a, b, n, false); }
// silu(gate) * up: d/dgate = g * up * silu'(gate), d/dup = g * silu(gate),
// three passes (the fused rows compute silu and its slope in place).
TESSEL_BINARY_GRADIENT(Swiglu) {
  return {n[0] ? silu_backward(mul(g, b), a) : Tensor(),
          n[1] ? swiglu(a, g) : Tensor()};
}
// g * silu'(x) with a = g, b = x: d/da = silu'(x), d/dx = a * silu''(x),
// silu''(x) = s (1 - s) (2 + x (1 - 2 s)) with s = sigmoid(x).
TESSEL_BINARY_GRADIENT(SiluBackward) {
  Tensor ga, gb;
  if (n[0]) ga = silu_backward(g, b);
  if (n[1]) {
    const Tensor s = sigmoid(b);
    const Tensor second =
        mul(mul(s, sub(1, s)), add(mul(b, sub(1, mul(s, 2))), 2));
    gb = mul(mul(g, a), second);
  }
  return {ga, gb};
}
// atan2(a, b) = the angle of (b, a): d/da = b / r^2, d/db = -a / r^2.
TESSEL_BINARY_GRADIENT(Atan2) {
  const Tensor r2 = add(mul(a, a), mul(b, b));
  return {n[0] ? div(mul(g, b), r2) : Tensor(),
          n[1] ? neg(div(mul(g, a), r2)) : Tensor()};
}
TESSEL_BINARY_GRADIENT(Hypot) {
  return {n[0] ? mul(g, div(a, y)) : Tensor(),
          n[1] ? mul(g, div(b, y)) : Tensor()};
}
// y = |a| sign(b): dy/da = y / a (0 at a = 0, as PyTorch), b only picks
// the sign.
TESSEL_BINARY_GRADIENT(Copysign) {
  Tensor ga;
  if (n[0]) {
    ga = where(eq(a, 0), zeros({}, g.dtype(), g.device()), mul(g, div(y, a)));
  }
  return {ga, n[1] ? zeros(g.shape(), g.dtype(), g.device()) : Tensor()};
}
TESSEL_BINARY_GRADIENT(Logaddexp) {
  return {n[0] ? mul(g, exp(sub(a, y))) : Tensor(),
          n[1] ? mul(g, exp(sub(b, y))) : Tensor()};
}
// Integer-valued: zero gradient almost everywhere (PyTorch has none).
TESSEL_BINARY_CONSTANT(FloorDivide);
// Steps to a neighbouring float (PyTorch does not differentiate it).
TESSEL_BINARY_CONSTANT(Nextafter);
TESSEL_BINARY_CONSTANT(BitwiseLeftShift);
TESSEL_BINARY_CONSTANT(BitwiseRightShift);
// Bool results and integer operands.
TESSEL_BINARY_CONSTANT(Eq);
TESSEL_BINARY_CONSTANT(Ne);
TESSEL_BINARY_CONSTANT(Lt);
TESSEL_BINARY_CONSTANT(Le);
TESSEL_BINARY_CONSTANT(Gt);
TESSEL_BINARY_CONSTANT(Ge);
TESSEL_BINARY_CONSTANT(LogicalAnd);
TESSEL_BINARY_CONSTANT(LogicalOr);
TESSEL_BINARY_CONSTANT(LogicalXor);
TESSEL_BINARY_CONSTANT(BitwiseAnd);
TESSEL_BINARY_CONSTANT(BitwiseOr);
TESSEL_BINARY_CONSTANT(BitwiseXor);

#undef TESSEL_BINARY_CONSTANT
#undef TESSEL_BINARY_GRADIENT

// Records y = op(a, b). A constant operand (a Tensor or a number, wrapped
// as a Variable without requires_grad) gets no gradient computed.
template <BinaryOp op>
Variable binary_row(const Variable& a, const Variable& b, const Tensor& y) {
  if constexpr (requires { BinaryGradient<op>::kConstant; }) {
    return constant(y);
  } else {
    const Tensor av = a.value(), bv = b.value();
    const Tensor saved = kReadsResult<op> ? y : Tensor();
    return record(op_info(op).name, y, {a, b},
                  [av, bv, saved](const Tensor& g, const Needs& n) {
                    const auto [ga, gb] =
                        BinaryGradient<op>::partials(g, av, bv, saved, n);
                    return std::vector<Tensor>{
                        n[0] ? grad_for(ga, av) : Tensor(),
                        n[1] ? grad_for(gb, bv) : Tensor()};
                  });
  }
}

// y = op(v, s) (or op(s, v) when number_first). The number becomes the
// 0-d tensor the Tensor op computes with (the dtype scalar_result_type
// gives, so the gradient rounds as the forward) only for rows that record.
template <BinaryOp op>
Variable number_row(const Variable& v, const Scalar& s, bool number_first,
                    const Tensor& y) {
  if constexpr (requires { BinaryGradient<op>::kConstant; }) {
    return constant(y);
  } else {
    const Tensor& t = v.value();
    const Variable c =
        constant(full({}, s, scalar_result_type(t.dtype(), s), t.device()));
    return number_first ? binary_row<op>(c, v, y) : binary_row<op>(v, c, y);
  }
}

}  // namespace

#define TESSEL_DEFINE_VARIABLE_BINARY(e, name, result, inputs, kind, kernel) \
  Variable name(const Variable& a, const Variable& b) {                      \
    return binary_row<BinaryOp::e>(a, b, name(a.value(), b.value()));        \
  }                                                                          \
  Variable name(const Variable& a, const Tensor& b) {                        \
    return name(a, constant(b));                                             \
  }                                                                          \
  Variable name(const Tensor& a, const Variable& b) {                        \
    return name(constant(a), b);                                             \
  }                                                                          \
  Variable name(const Variable& a, Scalar b) {                               \
    return number_row<BinaryOp::e>(a, b, false, name(a.value(), b));         \
  }                                                                          \
  Variable name(Scalar a, const Variable& b) {                               \
    return number_row<BinaryOp::e>(b, a, true, name(a, b.value()));          \
  }
TESSEL_FOR_EACH_BINARY_OP(TESSEL_DEFINE_VARIABLE_BINARY)
#undef TESSEL_DEFINE_VARIABLE_BINARY

Variable where(const Tensor& condition, const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return record("where", where(condition, av, bv), {a, b},
                [condition, av, bv](const Tensor& g, const Needs& n) {
                  const Tensor zero = zeros({}, g.dtype(), g.device());
                  Tensor ga, gb;
                  if (n[0]) ga = grad_for(where(condition, g, zero), av);
                  if (n[1]) gb = grad_for(where(condition, zero, g), bv);
                  return std::vector<Tensor>{ga, gb};
                });
}

Variable operator+(const Variable& a, const Tensor& b) { return add(a, b); }
Variable operator+(const Tensor& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Tensor& b) { return sub(a, b); }
Variable operator-(const Tensor& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Tensor& b) { return mul(a, b); }
Variable operator*(const Tensor& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Tensor& b) { return div(a, b); }
Variable operator/(const Tensor& a, const Variable& b) { return div(a, b); }
Variable where(const Tensor& condition, const Variable& a, const Tensor& b) {
  return where(condition, a, Variable(b));
}
Variable where(const Tensor& condition, const Tensor& a, const Variable& b) {
  return where(condition, Variable(a), b);
}

namespace autograd {

namespace {

// Parameterised unary rows have no UnaryGradient specialisation (their
// Variable overloads record by hand); none of them is constant.
template <UnaryOp op>
constexpr bool unary_has_gradient() {
  return !requires { UnaryGradient<op>::kConstant; };
}
template <BinaryOp op>
constexpr bool binary_has_gradient() {
  return !requires { BinaryGradient<op>::kConstant; };
}

}  // namespace

bool has_gradient(UnaryOp op) {
  switch (op) {
#define TESSEL_UNARY_CASE(e, name, result, inputs, kind, kernel) \
  case UnaryOp::e: return unary_has_gradient<UnaryOp::e>();
    TESSEL_FOR_EACH_UNARY_OP(TESSEL_UNARY_CASE)
#undef TESSEL_UNARY_CASE
  }
  return false;
}

bool has_gradient(BinaryOp op) {
  switch (op) {
#define TESSEL_BINARY_CASE(e, name, result, inputs, kind, kernel) \
  case BinaryOp::e: return binary_has_gradient<BinaryOp::e>();
    TESSEL_FOR_EACH_BINARY_OP(TESSEL_BINARY_CASE)
#undef TESSEL_BINARY_CASE
  }
  return false;
}

}  // namespace autograd

Variable operator-(const Variable& x) { return neg(x); }
Variable operator+(const Variable& a, const Variable& b) { return add(a, b); }
Variable operator-(const Variable& a, const Variable& b) { return sub(a, b); }
Variable operator*(const Variable& a, const Variable& b) { return mul(a, b); }
Variable operator/(const Variable& a, const Variable& b) { return div(a, b); }
Variable operator+(const Variable& a, Scalar b) { return add(a, b); }
Variable operator-(const Variable& a, Scalar b) { return sub(a, b); }
Variable operator*(const Variable& a, Scalar b) { return mul(a, b); }
Variable operator/(const Variable& a, Scalar b) { return div(a, b); }
Variable operator+(Scalar a, const Variable& b) { return add(b, a); }
Variable operator-(Scalar a, const Variable& b) { return sub(a, b); }
Variable operator*(Scalar a, const Variable& b) { return mul(b, a); }
Variable operator/(Scalar a, const Variable& b) { return div(a, b); }

}  // namespace tessel

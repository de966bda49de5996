// Gradients of the element-wise ops.
#include <cmath>
#include <numbers>

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
TESSEL_UNARY_GRADIENT(Tanh) { return sub(1, mul(y, y)); }
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

// ---- binary
// -------------------------------------------------------------------

Variable add(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return record("add", add(av, bv), {a, b},
                [av, bv](const Tensor& g, const Needs& n) {
                  return std::vector<Tensor>{n[0] ? grad_for(g, av) : Tensor(),
                                             n[1] ? grad_for(g, bv) : Tensor()};
                });
}
Variable sub(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return record(
      "sub", sub(av, bv), {a, b}, [av, bv](const Tensor& g, const Needs& n) {
        return std::vector<Tensor>{n[0] ? grad_for(g, av) : Tensor(),
                                   n[1] ? grad_for(neg(g), bv) : Tensor()};
      });
}
Variable mul(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  return record(
      "mul", mul(av, bv), {a, b}, [av, bv](const Tensor& g, const Needs& n) {
        return std::vector<Tensor>{n[0] ? grad_for(mul(g, bv), av) : Tensor(),
                                   n[1] ? grad_for(mul(g, av), bv) : Tensor()};
      });
}
Variable div(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  const Tensor y = div(av, bv);
  return record("div", y, {a, b}, [av, bv, y](const Tensor& g, const Needs& n) {
    return std::vector<Tensor>{
        n[0] ? grad_for(div(g, bv), av) : Tensor(),
        n[1] ? grad_for(neg(div(mul(g, y), bv)), bv) : Tensor()};
  });
}
Variable pow(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  const Tensor y = pow(av, bv);
  return record("pow", y, {a, b}, [av, bv, y](const Tensor& g, const Needs& n) {
    Tensor ga, gb;
    if (n[0]) ga = grad_for(mul(g, mul(bv, pow(av, sub(bv, 1)))), av);
    if (n[1]) gb = grad_for(mul(g, mul(y, log(av))), bv);
    return std::vector<Tensor>{ga, gb};
  });
}

namespace {

// maximum/minimum: the gradient goes to the chosen operand, halved at ties.
Variable extremum(const char* op, const Variable& a, const Variable& b,
                  bool is_max) {
  const Tensor av = a.value(), bv = b.value();
  const Tensor y = is_max ? maximum(av, bv) : minimum(av, bv);
  return record(
      op, y, {a, b}, [av, bv, is_max](const Tensor& g, const Needs& n) {
        const Tensor a_wins = is_max ? gt(av, bv) : lt(av, bv);
        const Tensor tie = eq(av, bv);
        const Tensor half = mul(g, 0.5);
        const Tensor zero = zeros({}, g.dtype(), g.device());
        Tensor ga, gb;
        if (n[0]) ga = grad_for(where(a_wins, g, where(tie, half, zero)), av);
        if (n[1])
          gb = grad_for(
              where(logical_or(a_wins, tie), where(tie, half, zero), g), bv);
        return std::vector<Tensor>{ga, gb};
      });
}

}  // namespace

Variable maximum(const Variable& a, const Variable& b) {
  return extremum("maximum", a, b, true);
}
Variable minimum(const Variable& a, const Variable& b) {
  return extremum("minimum", a, b, false);
}

Variable swiglu(const Variable& gate, const Variable& up) {
  const Tensor gv = gate.value(), uv = up.value();
  return record("swiglu", swiglu(gv, uv), {gate, up},
                [gv, uv](const Tensor& g, const Needs& n) {
                  const Tensor s = sigmoid(gv);
                  Tensor gg, gu;
                  if (n[0]) {
                    const Tensor dsilu = mul(s, add(mul(gv, sub(1, s)), 1));
                    gg = grad_for(mul(mul(g, uv), dsilu), gv);
                  }
                  if (n[1]) gu = grad_for(mul(g, mul(gv, s)), uv);
                  return std::vector<Tensor>{gg, gu};
                });
}

Variable add(const Variable& a, Scalar b) {
  return record(
      "add", add(a.value(), b), {a},
      [](const Tensor& g, const Needs&) { return autograd::one_grad(g); });
}
Variable sub(const Variable& a, Scalar b) {
  return record(
      "sub", sub(a.value(), b), {a},
      [](const Tensor& g, const Needs&) { return autograd::one_grad(g); });
}
Variable sub(Scalar a, const Variable& b) {
  return record(
      "sub", sub(a, b.value()), {b},
      [](const Tensor& g, const Needs&) { return autograd::one_grad(neg(g)); });
}
Variable mul(const Variable& a, Scalar b) {
  const DType d = a.dtype();
  return record("mul", mul(a.value(), b), {a},
                [b, d](const Tensor& g, const Needs&) {
                  return autograd::one_grad(mul(g, b).to(d));
                });
}
Variable div(const Variable& a, Scalar b) {
  const DType d = a.dtype();
  return record("div", div(a.value(), b), {a},
                [b, d](const Tensor& g, const Needs&) {
                  return autograd::one_grad(div(g, b).to(d));
                });
}
Variable div(Scalar a, const Variable& b) {
  const Tensor bv = b.value();
  const Tensor y = div(a, bv);
  return record("div", y, {b}, [bv, y](const Tensor& g, const Needs&) {
    return autograd::one_grad(neg(div(mul(g, y), bv)).to(bv.dtype()));
  });
}
Variable pow(const Variable& a, Scalar exponent) {
  const Tensor av = a.value();
  return record("pow", pow(av, exponent), {a},
                [av, exponent](const Tensor& g, const Needs&) {
                  const double e = exponent.to<double>();
                  return autograd::one_grad(
                      mul(g, mul(pow(av, e - 1), e)).to(av.dtype()));
                });
}
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

#define TESSEL_MIXED_BINARY(name)                     \
  Variable name(const Variable& a, const Tensor& b) { \
    return name(a, Variable(b));                      \
  }                                                   \
  Variable name(const Tensor& a, const Variable& b) { \
    return name(Variable(a), b);                      \
  }
TESSEL_MIXED_BINARY(add)
TESSEL_MIXED_BINARY(sub)
TESSEL_MIXED_BINARY(mul)
TESSEL_MIXED_BINARY(div)
TESSEL_MIXED_BINARY(pow)
TESSEL_MIXED_BINARY(maximum)
TESSEL_MIXED_BINARY(minimum)
#undef TESSEL_MIXED_BINARY
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

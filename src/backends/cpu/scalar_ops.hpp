// Scalar definitions of every element-wise op: the reference semantics, used
// directly for integer and f64 data and checked against by the SIMD kernels.
// C is the compute type (float for all floats of 32 bits or fewer).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "tessel/ops/op_list.hpp"

namespace tessel::cpu {

inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

template <class C>
inline constexpr bool is_float_v = std::is_floating_point_v<C>;

// NumPy's divmod for floats (npy_divmod): the quotient is floored and the
// remainder takes the divisor's sign.
template <class C>
C float_floor_divide(C a, C b, C* remainder) {
  C mod = std::fmod(a, b);
  if (b == C(0)) {
    if (remainder) *remainder = mod;
    return a / b;
  }
  C div = (a - mod) / b;
  if (mod != C(0)) {
    if ((b < C(0)) != (mod < C(0))) {
      mod += b;
      div -= C(1);
    }
  } else {
    mod = std::copysign(C(0), b);
  }
  C floordiv;
  if (div != C(0)) {
    floordiv = std::floor(div);
    if (div - floordiv > C(0.5)) floordiv += C(1);
  } else {
    floordiv = std::copysign(C(0), a / b);
  }
  if (remainder) *remainder = mod;
  return floordiv;
}

// Integer division that floors (Python's //); x // 0 is 0 (NumPy) and
// MIN // -1 wraps instead of trapping.
template <class C>
C int_floor_divide(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1))
      return static_cast<C>(static_cast<std::make_unsigned_t<C>>(0) -
                            static_cast<std::make_unsigned_t<C>>(a));
    const C q = static_cast<C>(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<C>(q - 1) : q;
  } else {
    return static_cast<C>(a / b);
  }
}

// Python's %: the result has the divisor's sign; x % 0 is 0 (NumPy).
template <class C>
C int_remainder(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return C(0);
    C r = static_cast<C>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
    return r;
  } else {
    return static_cast<C>(a % b);
  }
}

// Integer power by squaring, wrapping on overflow. A negative exponent
// gives the truncated quotient 1 / a^-e: 1 for a = 1, +-1 for a = -1, else 0.
template <class C>
C int_pow(C a, C e) {
  using U = std::make_unsigned_t<C>;
  if constexpr (std::is_signed_v<C>) {
    if (e < 0) {
      if (a == 1) return 1;
      if (a == -1) return (e % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  U result = 1;
  U base = static_cast<U>(a);
  auto exp = static_cast<std::uint64_t>(e);
  while (exp != 0) {
    if (exp & 1u) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
    exp >>= 1;
  }
  return static_cast<C>(result);
}

// Shifts by a count outside [0, bits) give what shifting one bit at a time
// would (NumPy's rule): 0 to the left, the sign fill to the right; in C++
// those counts are undefined behaviour.
template <class C>
bool shift_in_range(C count) {
  constexpr int bits = 8 * sizeof(C);
  if constexpr (std::is_signed_v<C>) {
    if (count < 0) return false;
  }
  return count < C(bits);
}

template <class C>
C shift_left(C a, C count) {
  if (!shift_in_range(count)) return C(0);
  return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) << count);
}

template <class C>
C shift_right(C a, C count) {
  if (!shift_in_range(count)) {
    if constexpr (std::is_signed_v<C>) return a < 0 ? C(-1) : C(0);
    return C(0);
  }
  return static_cast<C>(a >> count);  // arithmetic for signed (C++20)
}

// log(e^a + e^b) without overflow: the larger exponent factored out. Equal
// operands (infinities included) give a + log 2, so -inf with -inf is -inf
// and inf with inf is inf; NaN propagates.
template <class C>
C log_add_exp(C a, C b) {
  if (a == b) return a + C(std::numbers::ln2);
  const C d = a - b;
  if (d > C(0)) return a + std::log1p(std::exp(-d));
  if (d <= C(0)) return b + std::log1p(std::exp(d));
  return d;  // NaN
}

template <class C>
C scalar_unary(UnaryOp op, C x, const UnaryParams& p) {
  if constexpr (std::is_same_v<C, bool>) {
    switch (op) {
      case UnaryOp::LogicalNot:
      case UnaryOp::BitwiseNot: return !x;
      case UnaryOp::IsNan:
      case UnaryOp::IsInf:
      case UnaryOp::Signbit: return false;
      case UnaryOp::IsFinite: return true;
      default: return x;  // abs, sign, floor, ceil, round, trunc
    }
  } else if constexpr (is_float_v<C>) {
    switch (op) {
      case UnaryOp::Neg: return -x;
      case UnaryOp::Abs: return std::fabs(x);
      case UnaryOp::Sign: return std::isnan(x) ? x : C((x > C(0)) - (x < C(0)));
      case UnaryOp::Sqrt: return std::sqrt(x);
      case UnaryOp::Rsqrt: return C(1) / std::sqrt(x);
      case UnaryOp::Reciprocal: return C(1) / x;
      case UnaryOp::Exp: return std::exp(x);
      case UnaryOp::Expm1: return std::expm1(x);
      case UnaryOp::Log: return std::log(x);
      case UnaryOp::Log1p: return std::log1p(x);
      case UnaryOp::Log2: return std::log2(x);
      case UnaryOp::Log10: return std::log10(x);
      case UnaryOp::Sin: return std::sin(x);
      case UnaryOp::Cos: return std::cos(x);
      case UnaryOp::Tanh: return std::tanh(x);
      case UnaryOp::Tan: return std::tan(x);
      case UnaryOp::Asin: return std::asin(x);
      case UnaryOp::Acos: return std::acos(x);
      case UnaryOp::Atan: return std::atan(x);
      case UnaryOp::Sinh: return std::sinh(x);
      case UnaryOp::Cosh: return std::cosh(x);
      case UnaryOp::Asinh: return std::asinh(x);
      case UnaryOp::Acosh: return std::acosh(x);
      case UnaryOp::Atanh: return std::atanh(x);
      case UnaryOp::Square: return x * x;
      case UnaryOp::Sigmoid: return C(1) / (C(1) + std::exp(-x));
      case UnaryOp::Relu: return x > C(0) || std::isnan(x) ? x : C(0);
      case UnaryOp::LeakyRelu: return x >= C(0) ? x : C(p.a) * x;
      case UnaryOp::Elu: return x > C(0) ? x : C(p.a) * std::expm1(x);
      case UnaryOp::Selu:
        return C(kSeluScale) * (x > C(0) ? x : C(kSeluAlpha) * std::expm1(x));
      case UnaryOp::Gelu:
        return C(0.5) * x * (C(1) + std::erf(x * C(std::numbers::sqrt2 / 2)));
      case UnaryOp::GeluTanh: {
        const C k = C(0.7978845608028654);  // sqrt(2 / pi)
        return C(0.5) * x *
               (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
      }
      case UnaryOp::Silu: return x / (C(1) + std::exp(-x));
      case UnaryOp::Softplus: {
        const C beta = C(p.a);
        return beta * x > C(p.b) ? x : std::log1p(std::exp(beta * x)) / beta;
      }
      case UnaryOp::Erf: return std::erf(x);
      case UnaryOp::Floor: return std::floor(x);
      case UnaryOp::Ceil: return std::ceil(x);
      case UnaryOp::Round: return std::nearbyint(x);  // half to even
      case UnaryOp::Trunc: return std::trunc(x);
      case UnaryOp::IsNan: return C(std::isnan(x));
      case UnaryOp::IsInf: return C(std::isinf(x));
      case UnaryOp::IsFinite: return C(std::isfinite(x));
      case UnaryOp::Signbit: return C(std::signbit(x));
      case UnaryOp::LogicalNot: return C(x == C(0));
      case UnaryOp::BitwiseNot: break;
    }
    return x;
  } else {
    switch (op) {
      case UnaryOp::Neg:
        return static_cast<C>(std::make_unsigned_t<C>(0) -
                              static_cast<std::make_unsigned_t<C>>(x));
      case UnaryOp::Abs:
        if constexpr (std::is_signed_v<C>) {
          return x < 0 ? static_cast<C>(std::make_unsigned_t<C>(0) -
                                        static_cast<std::make_unsigned_t<C>>(x))
                       : x;
        } else {
          return x;
        }
      case UnaryOp::Sign:
        if constexpr (std::is_signed_v<C>)
          return static_cast<C>((x > 0) - (x < 0));
        else
          return static_cast<C>(x > 0);
      case UnaryOp::Relu:
        if constexpr (std::is_signed_v<C>)
          return x > 0 ? x : C(0);
        else
          return x;
      case UnaryOp::IsNan:
      case UnaryOp::IsInf: return C(0);
      case UnaryOp::IsFinite: return C(1);
      case UnaryOp::Signbit:
        if constexpr (std::is_signed_v<C>)
          return C(x < 0);
        else
          return C(0);
      case UnaryOp::Square:
        return static_cast<C>(static_cast<std::make_unsigned_t<C>>(x) *
                              static_cast<std::make_unsigned_t<C>>(x));
      case UnaryOp::LogicalNot: return C(x == C(0));
      case UnaryOp::BitwiseNot: return static_cast<C>(~x);
      default: return x;  // floor, ceil, round, trunc: integers are exact
    }
  }
}

template <class C>
C scalar_binary(BinaryOp op, C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::LogicalOr:
      case BinaryOp::BitwiseOr:
      case BinaryOp::Maximum: return a || b;
      case BinaryOp::Mul:
      case BinaryOp::LogicalAnd:
      case BinaryOp::BitwiseAnd:
      case BinaryOp::Minimum: return a && b;
      case BinaryOp::LogicalXor:
      case BinaryOp::BitwiseXor:
      case BinaryOp::Ne: return a != b;
      case BinaryOp::Eq: return a == b;
      case BinaryOp::Lt: return !a && b;
      case BinaryOp::Le: return !a || b;
      case BinaryOp::Gt: return a && !b;
      case BinaryOp::Ge: return a || !b;
      default: return a;  // not reached: the op layer refuses the rest
    }
  } else {
    switch (op) {
      case BinaryOp::Add:
        if constexpr (is_float_v<C>)
          return a + b;
        else
          return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) +
                                static_cast<std::make_unsigned_t<C>>(b));
      case BinaryOp::Sub:
        if constexpr (is_float_v<C>)
          return a - b;
        else
          return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) -
                                static_cast<std::make_unsigned_t<C>>(b));
      case BinaryOp::Mul:
        if constexpr (is_float_v<C>)
          return a * b;
        else
          return static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) *
                                static_cast<std::make_unsigned_t<C>>(b));
      case BinaryOp::Div:
        if constexpr (is_float_v<C>)
          return a / b;
        else
          return b == 0 ? C(0) : static_cast<C>(a / b);  // not reached
      case BinaryOp::FloorDivide:
        if constexpr (is_float_v<C>)
          return float_floor_divide<C>(a, b, nullptr);
        else
          return int_floor_divide(a, b);
      case BinaryOp::Remainder:
        if constexpr (is_float_v<C>) {
          C r;
          float_floor_divide<C>(a, b, &r);
          return r;
        } else {
          return int_remainder(a, b);
        }
      case BinaryOp::Pow:
        if constexpr (is_float_v<C>)
          return std::pow(a, b);
        else
          return int_pow(a, b);
      case BinaryOp::Maximum:
        if constexpr (is_float_v<C>) {
          if (std::isnan(a) || std::isnan(b)) return a + b;
        }
        return a > b ? a : b;
      case BinaryOp::Minimum:
        if constexpr (is_float_v<C>) {
          if (std::isnan(a) || std::isnan(b)) return a + b;
        }
        return a < b ? a : b;
      case BinaryOp::Eq: return C(a == b);
      case BinaryOp::Ne: return C(a != b);
      case BinaryOp::Lt: return C(a < b);
      case BinaryOp::Le: return C(a <= b);
      case BinaryOp::Gt: return C(a > b);
      case BinaryOp::Ge: return C(a >= b);
      case BinaryOp::LogicalAnd: return C(a != C(0) && b != C(0));
      case BinaryOp::LogicalOr: return C(a != C(0) || b != C(0));
      case BinaryOp::LogicalXor: return C((a != C(0)) != (b != C(0)));
      case BinaryOp::BitwiseAnd:
        if constexpr (!is_float_v<C>)
          return static_cast<C>(a & b);
        else
          return a;
      case BinaryOp::BitwiseOr:
        if constexpr (!is_float_v<C>)
          return static_cast<C>(a | b);
        else
          return a;
      case BinaryOp::BitwiseXor:
        if constexpr (!is_float_v<C>)
          return static_cast<C>(a ^ b);
        else
          return a;
      case BinaryOp::BitwiseLeftShift:
        if constexpr (!is_float_v<C>)
          return shift_left(a, b);
        else
          return a;  // not reached: the op layer refuses floats
      case BinaryOp::BitwiseRightShift:
        if constexpr (!is_float_v<C>)
          return shift_right(a, b);
        else
          return a;  // not reached: the op layer refuses floats
      case BinaryOp::Atan2:
        if constexpr (is_float_v<C>)
          return std::atan2(a, b);
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::Hypot:
        if constexpr (is_float_v<C>)
          return std::hypot(a, b);
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::Copysign:
        if constexpr (is_float_v<C>)
          return std::copysign(a, b);
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::Nextafter:
        if constexpr (is_float_v<C>)
          return std::nextafter(a, b);
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::Logaddexp:
        if constexpr (is_float_v<C>)
          return log_add_exp(a, b);
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::Swiglu:
        if constexpr (is_float_v<C>)
          return a / (C(1) + std::exp(-a)) * b;
        else
          return a;  // not reached: integers compute in f32
      case BinaryOp::SiluBackward:
        // a * silu'(b): a is the incoming gradient, b the input of silu.
        if constexpr (is_float_v<C>) {
          const C sig = C(1) / (C(1) + std::exp(-b));
          return a * sig * (C(1) + b * (C(1) - sig));
        } else {
          return a;  // not reached: integers compute in f32
        }
    }
    return a;
  }
}

}  // namespace tessel::cpu

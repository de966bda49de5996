// The element-wise ops on c64/c128 (the subset accepts_complex lists): one
// scalar body per op over std::complex, run by the same strided loop as the
// real kernels. The few functions std::complex lacks or computes with
// cancellation (expm1, log1p, sign) are written out here, after NumPy's
// npymath.
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>

#include "backends/cpu/complex_kernels.hpp"
#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/strided_loop.hpp"
#include "core/dispatch.hpp"

namespace tessel::cpu {

namespace {

template <class R>
using Complex = std::complex<R>;

// exp(z) - 1 without the cancellation of exp(z) - 1 near 0: the real part
// is expm1(x) cos(y) - 2 sin^2(y/2), the imaginary part exp(x) sin(y).
template <class R>
Complex<R> complex_expm1(Complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  const R half_sin = std::sin(y / R(2));
  return {std::expm1(x) * std::cos(y) - R(2) * half_sin * half_sin,
          std::exp(x) * std::sin(y)};
}

// log(1 + z) keeping the digits of a small z: |1+z|^2 = 1 + (2x + x^2 +
// y^2), so the real part is log1p of that sum over two.
template <class R>
Complex<R> complex_log1p(Complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  if (!std::isfinite(x) || !std::isfinite(y) || std::abs(x) > R(0.5) ||
      std::abs(y) > R(0.5)) {
    return std::log(Complex<R>(R(1) + x, y));
  }
  return {std::log1p(x * (R(2) + x) + y * y) / R(2), std::atan2(y, R(1) + x)};
}

template <class R>
Complex<R> multiply(Complex<R> a, Complex<R> b);

// NumPy's reciprocal: Smith's scaling with the numerator 1 folded in.
template <class R>
Complex<R> reciprocal(Complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  if (std::abs(y) <= std::abs(x)) {
    const R r = y / x;
    const R d = x + y * r;
    return {R(1) / d, -r / d};
  }
  const R r = x / y;
  const R d = x * r + y;
  return {r / d, R(-1) / d};
}

template <class R>
Complex<R> complex_unary(UnaryOp op, Complex<R> z) {
  using std::numbers::ln10_v;
  using std::numbers::ln2_v;
  switch (op) {
    case UnaryOp::Neg: return -z;
    case UnaryOp::Sign: {
      // z / |z|, and 0 at 0 (the array API's definition).
      const R m = std::abs(z);
      if (m == R(0)) return {R(0), R(0)};
      return {z.real() / m, z.imag() / m};
    }
    case UnaryOp::Sqrt: return std::sqrt(z);
    case UnaryOp::Rsqrt: return reciprocal(std::sqrt(z));
    case UnaryOp::Reciprocal: return reciprocal(z);
    case UnaryOp::Exp: return std::exp(z);
    case UnaryOp::Expm1: return complex_expm1(z);
    case UnaryOp::Log: return std::log(z);
    case UnaryOp::Log1p: return complex_log1p(z);
    case UnaryOp::Log2: return std::log(z) / ln2_v<R>;
    case UnaryOp::Log10: return std::log(z) / ln10_v<R>;
    case UnaryOp::Sin: return std::sin(z);
    case UnaryOp::Cos: return std::cos(z);
    case UnaryOp::Tanh: return std::tanh(z);
    case UnaryOp::Tan: return std::tan(z);
    case UnaryOp::Asin: return std::asin(z);
    case UnaryOp::Acos: return std::acos(z);
    case UnaryOp::Atan: return std::atan(z);
    case UnaryOp::Sinh: return std::sinh(z);
    case UnaryOp::Cosh: return std::cosh(z);
    case UnaryOp::Asinh: return std::asinh(z);
    case UnaryOp::Acosh: return std::acosh(z);
    case UnaryOp::Atanh: return std::atanh(z);
    case UnaryOp::Square: return multiply(z, z);
    case UnaryOp::Round:
      return {std::nearbyint(z.real()), std::nearbyint(z.imag())};
    default: return z;  // not reached: the op layer admits accepts_complex ops
  }
}

template <class R>
bool complex_predicate(UnaryOp op, Complex<R> z) {
  const R x = z.real();
  const R y = z.imag();
  switch (op) {
    case UnaryOp::IsNan: return std::isnan(x) || std::isnan(y);
    case UnaryOp::IsInf: return std::isinf(x) || std::isinf(y);
    case UnaryOp::IsFinite: return std::isfinite(x) && std::isfinite(y);
    default: return x == R(0) && y == R(0);  // logical_not
  }
}

// Complex multiplication as the textbook product (C's Annex G recovery of
// infinities from NaN results, which std::complex's operator* does, is not
// done: NumPy does not do it).
template <class R>
Complex<R> multiply(Complex<R> a, Complex<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(),
          a.real() * b.imag() + a.imag() * b.real()};
}

// Smith's algorithm, as NumPy: scales by the larger part of the divisor so
// that neither the squares overflow nor small divisors lose digits. NumPy
// branches on which part is larger, which a random divisor mispredicts
// half the time; here the branch is a choice of operands. Forced inline:
// as a call per element (GCC's choice) it was 15x slower than inlined and
// vectorised.
template <class R>
[[gnu::always_inline]] inline Complex<R> divide(Complex<R> a, Complex<R> b) {
  const R ar = a.real();
  const R ai = a.imag();
  const R br = b.real();
  const R bi = b.imag();
  if (br == R(0) && bi == R(0)) [[unlikely]] {
    return {ar / std::abs(br), ai / std::abs(bi)};  // a complex inf or NaN
  }
  // NumPy's branches as selects: with the larger part of b as `den`,
  // re = (p + q rat) scl and im = +-(q - p rat) scl, p and q the parts of
  // a in the branch's order (the same operations, so the same bits).
  // The choices index two-element arrays: written as ?: GCC turns them
  // back into the branch (measured 6x slower on random divisors).
  const int real_larger = std::abs(br) >= std::abs(bi) ? 1 : 0;
  const R b_parts[2] = {br, bi};
  const R a_parts[2] = {ar, ai};
  const R num = b_parts[real_larger];
  const R den = b_parts[1 - real_larger];
  const R p = a_parts[1 - real_larger];
  const R q = a_parts[real_larger];
  const R rat = num / den;
  const R scl = R(1) / (den + num * rat);
  const R t = p * rat;
  const R im[2] = {t - q, q - t};
  return {(p + q * rat) * scl, im[real_larger] * scl};
}

// z ** w as NumPy's npy_cpow: 1 for w = 0; 0 ** w is 0 for a positive
// real w and NaN otherwise; integer powers below 100 by repeated squaring
// (exact for small ones, and infinities survive); libm's cpow otherwise.
template <class R>
Complex<R> power(Complex<R> z, Complex<R> w) {
  const R nan = std::numeric_limits<R>::quiet_NaN();
  if (w.real() == R(0) && w.imag() == R(0)) return {R(1), R(0)};
  if (z.real() == R(0) && z.imag() == R(0)) {
    if (w.real() > R(0) && w.imag() == R(0)) return {R(0), R(0)};
    return {nan, nan};
  }
  if (w.imag() == R(0) && std::abs(w.real()) < R(100) &&
      w.real() == std::trunc(w.real())) {
    auto n = static_cast<int>(std::abs(w.real()));
    Complex<R> result;
    bool first = true;  // no multiplication by 1: it would turn inf into NaN
    Complex<R> square = z;
    while (true) {
      if (n & 1) {
        result = first ? square : multiply(result, square);
        first = false;
      }
      n >>= 1;
      if (n == 0) break;
      square = multiply(square, square);
    }
    return w.real() < R(0) ? divide(Complex<R>(R(1), R(0)), result) : result;
  }
  return std::pow(z, w);
}

template <class R>
bool complex_compare(BinaryOp op, Complex<R> a, Complex<R> b) {
  const bool a_true = a.real() != R(0) || a.imag() != R(0);
  const bool b_true = b.real() != R(0) || b.imag() != R(0);
  switch (op) {
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::LogicalAnd: return a_true && b_true;
    case BinaryOp::LogicalOr: return a_true || b_true;
    default: return a_true != b_true;  // logical_xor
  }
}

template <class In, class Out, class F>
void run_unary(const KernelOutput& out, const KernelInput& in, F f) {
  const Strides os = out.byte_strides();
  const Strides is = in.byte_strides();
  const std::array<std::span<const std::int64_t>, 2> strides{
      std::span<const std::int64_t>(os), std::span<const std::int64_t>(is)};
  for_each_strided<2>(out.shape(), {base_pointer(out), base_pointer(in)},
                      strides, [&f](auto& p, const auto& s, std::int64_t n) {
                        for (std::int64_t k = 0; k < n; ++k) {
                          *reinterpret_cast<Out*>(p[0] + k * s[0]) =
                              f(*reinterpret_cast<const In*>(p[1] + k * s[1]));
                        }
                      });
}

template <class In, class Out, class F>
void run_binary(const KernelOutput& out, const KernelInput& a,
                const KernelInput& b, F f) {
  const Strides os = out.byte_strides();
  const Strides as = a.byte_strides();
  const Strides bs = b.byte_strides();
  const std::array<std::span<const std::int64_t>, 3> strides{
      std::span<const std::int64_t>(os), std::span<const std::int64_t>(as),
      std::span<const std::int64_t>(bs)};
  for_each_strided<3>(
      out.shape(), {base_pointer(out), base_pointer(a), base_pointer(b)},
      strides, [&f](auto& p, const auto& s, std::int64_t n) {
        if (s[0] == sizeof(Out) && s[1] == sizeof(In) && s[2] == sizeof(In)) {
          // Dense runs by pointer, so the loop vectorises.
          auto* o = reinterpret_cast<Out*>(p[0]);
          const auto* x = reinterpret_cast<const In*>(p[1]);
          const auto* y = reinterpret_cast<const In*>(p[2]);
          for (std::int64_t k = 0; k < n; ++k) o[k] = f(x[k], y[k]);
          return;
        }
        for (std::int64_t k = 0; k < n; ++k) {
          *reinterpret_cast<Out*>(p[0] + k * s[0]) =
              f(*reinterpret_cast<const In*>(p[1] + k * s[1]),
                *reinterpret_cast<const In*>(p[2] + k * s[2]));
        }
      });
}

}  // namespace

void complex_unary(UnaryOp op, const KernelOutput& out, const KernelInput& in) {
  detail::dispatch_complex_type(in.dtype(), op_info(op).name, [&]<class C>() {
    using R = typename C::value_type;
    if (op_info(op).result == ResultKind::Bool) {
      run_unary<C, bool>(out, in,
                         [op](C z) { return complex_predicate(op, z); });
    } else if (op == UnaryOp::Abs) {
      run_unary<C, R>(out, in,
                      [](C z) { return std::hypot(z.real(), z.imag()); });
    } else {
      run_unary<C, C>(out, in, [op](C z) { return complex_unary(op, z); });
    }
  });
}

void complex_binary(BinaryOp op, const KernelOutput& out, const KernelInput& a,
                    const KernelInput& b) {
  detail::dispatch_complex_type(a.dtype(), op_info(op).name, [&]<class C>() {
    // One loop per op (the op chosen outside it), so that the arithmetic
    // ones vectorise.
    switch (op) {
      case BinaryOp::Add:
        return run_binary<C, C>(out, a, b, [](C x, C y) { return x + y; });
      case BinaryOp::Sub:
        return run_binary<C, C>(out, a, b, [](C x, C y) { return x - y; });
      case BinaryOp::Mul:
        return run_binary<C, C>(out, a, b,
                                [](C x, C y) { return multiply(x, y); });
      case BinaryOp::Div:
        return run_binary<C, C>(out, a, b,
                                [](C x, C y) { return divide(x, y); });
      case BinaryOp::Pow:
        return run_binary<C, C>(out, a, b,
                                [](C x, C y) { return power(x, y); });
      default:
        return run_binary<C, bool>(
            out, a, b, [op](C x, C y) { return complex_compare(op, x, y); });
    }
  });
}

}  // namespace tessel::cpu

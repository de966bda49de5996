// Compiled once per Highway target (foreach_target re-includes this file).
// Every op is a functor over f32 vectors; loads widen bf16/f16 to f32 and
// stores round back with round-to-nearest-even, so narrow floats are
// computed in f32 and rounded once (DESIGN §1).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/elementwise_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cmath>
#include <cstring>

#include "backends/cpu/scalar_ops.hpp"
#include "backends/cpu/simd/elementwise_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs body(d, vectors...) over n elements; the tail goes through a padded
// stack buffer so that every load and store is a full vector.
template <class T, class Body>
HWY_INLINE void map_unary(const T* in, T* out, std::int64_t n, Body body) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) store(d, body(d, load(d, in + i)), out + i);
  if (i < n) {
    HWY_ALIGN T in_tail[hn::MaxLanes(d)] = {};
    HWY_ALIGN T out_tail[hn::MaxLanes(d)];
    std::memcpy(in_tail, in + i, static_cast<std::size_t>(n - i) * sizeof(T));
    store(d, body(d, load(d, in_tail)), out_tail);
    std::memcpy(out + i, out_tail, static_cast<std::size_t>(n - i) * sizeof(T));
  }
}

// ---- unary ops -------------------------------------------------------------

// exp with Highway's valid range [-FLT_MAX, 104] enforced: inputs are
// clamped (the clamped results are exactly 0 and Inf), NaN passes through.
HWY_INLINE V safe_exp(D d, V x) {
  const V y =
      hn::Exp(d, hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 104.0f)));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

HWY_INLINE V safe_expm1(D d, V x) {
  const V y = hn::Expm1(
      d, hn::Min(hn::Max(x, hn::Set(d, -104.0f)), hn::Set(d, 104.0f)));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// log/log2 on (0, FLT_MAX], with IEEE results elsewhere: log(0) = -Inf,
// log(x < 0) = NaN, log(Inf) = Inf, NaN passes through.
template <bool Base2>
HWY_INLINE V safe_log(D d, V x) {
  const V zero = hn::Zero(d);
  const V inf = hn::Set(d, HUGE_VALF);
  const auto ok = hn::And(hn::Gt(x, zero), hn::Lt(x, inf));
  const V arg = hn::IfThenElse(ok, x, hn::Set(d, 1.0f));
  V y = Base2 ? hn::Log2(d, arg) : hn::Log(d, arg);
  y = hn::IfThenElse(hn::Eq(x, zero), hn::Neg(inf), y);
  y = hn::IfThenElse(hn::Eq(x, inf), inf, y);
  const auto bad = hn::Or(hn::Lt(x, zero), hn::IsNaN(x));
  return hn::IfThenElse(bad,
                        hn::Set(d, std::numeric_limits<float>::quiet_NaN()), y);
}

// log1p(x) = log(u) * x / (u - 1) with u = 1 + x: the ratio cancels the
// rounding of u (Goldberg). u == 1 means log1p(x) = x to f32 precision.
HWY_INLINE V safe_log1p(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V u = hn::Add(one, x);
  const V um1 = hn::Sub(u, one);
  const V lu = safe_log<false>(d, u);
  const V corrected = hn::Mul(
      lu, hn::Div(x, hn::IfThenElse(hn::Eq(um1, hn::Zero(d)), one, um1)));
  V y = hn::IfThenElse(hn::Eq(u, one), x, corrected);
  // u = Inf (x = Inf) and u <= 0 (x <= -1) take log(u)'s value directly.
  const auto direct =
      hn::Or(hn::Eq(u, hn::Set(d, HUGE_VALF)), hn::Le(u, hn::Zero(d)));
  return hn::IfThenElse(direct, lu, y);
}

// Sin/Cos are accurate on [-39000, 39000]; vectors with larger or
// non-finite lanes are computed lane by lane with libm.
template <bool IsSin>
HWY_INLINE V safe_trig(D d, V x) {
  if (HWY_LIKELY(hn::AllTrue(d, hn::Le(hn::Abs(x), hn::Set(d, 39000.0f))))) {
    return IsSin ? hn::Sin(d, x) : hn::Cos(d, x);
  }
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  for (std::size_t i = 0; i < hn::Lanes(d); ++i) {
    lanes[i] = IsSin ? std::sin(lanes[i]) : std::cos(lanes[i]);
  }
  return hn::Load(d, lanes);
}

template <std::size_t K>
HWY_INLINE V horner(D d, V x, const float (&c)[K]) {
  V r = hn::Set(d, c[K - 1]);
  for (std::size_t i = K - 1; i-- > 0;) r = hn::MulAdd(r, x, hn::Set(d, c[i]));
  return r;
}

// erf to about 2 ULP (coefficients fitted for tessel by least squares on
// the relative error, see docs/kernels.md): x * P(x^2) for |x| < 1,
// 1 - exp(-x^2) * Q((|x| - 2.46) / 1.46) up to 3.92, and +-1 beyond.
HWY_INLINE V simd_erf(D d, V x) {
  static constexpr float kSmall[] = {
      1.128379107e+00f, -3.761262894e-01f, 1.128362194e-01f, -2.685550973e-02f,
      5.191833246e-03f, -8.043373819e-04f, 7.971048763e-05f};
  static constexpr float kLarge[] = {
      2.138206810e-01f, -1.115169078e-01f, 5.525631458e-02f, -2.616759576e-02f,
      1.189670619e-02f, -5.216671154e-03f, 2.224780153e-03f, -9.088646038e-04f,
      3.339255345e-04f, -1.354635460e-04f, 7.876432937e-05f, -2.687702909e-05f};
  const V a = hn::Abs(x);
  const V small = hn::Mul(x, horner(d, hn::Mul(x, x), kSmall));
  const V ac = hn::Min(a, hn::Set(d, 3.92f));
  const V u = hn::Mul(hn::Sub(ac, hn::Set(d, 2.46f)), hn::Set(d, 0.684931507f));
  const V tail =
      hn::Mul(safe_exp(d, hn::Neg(hn::Mul(ac, ac))), horner(d, u, kLarge));
  const V large = hn::CopySign(hn::Sub(hn::Set(d, 1.0f), tail), x);
  V y = hn::IfThenElse(hn::Lt(a, hn::Set(d, 1.0f)), small, large);
  y = hn::IfThenElse(hn::Ge(a, hn::Set(d, 3.92f)),
                     hn::CopySign(hn::Set(d, 1.0f), x), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

HWY_INLINE V simd_sigmoid(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, hn::Add(one, safe_exp(d, hn::Neg(x))));
}

// One Highway body per table row marked Simd (op_list.hpp). The primary
// template is declared, never defined: a row marked Simd without a body here
// fails to compile instead of silently returning its input.
template <UnaryOp OP>
struct SimdUnary;

#define TESSEL_SIMD_UNARY(OP)                                           \
  template <>                                                           \
  struct SimdUnary<UnaryOp::OP> {                                       \
    static HWY_INLINE V apply(D d, V x, float a, float b);              \
  };                                                                    \
  HWY_INLINE V SimdUnary<UnaryOp::OP>::apply([[maybe_unused]] D d, V x, \
                                             [[maybe_unused]] float a,  \
                                             [[maybe_unused]] float b)

TESSEL_SIMD_UNARY(Neg) { return hn::Neg(x); }

TESSEL_SIMD_UNARY(Abs) { return hn::Abs(x); }

TESSEL_SIMD_UNARY(Sign) {
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, 1.0f);
  const V s = hn::Sub(hn::IfThenElseZero(hn::Gt(x, zero), one),
                      hn::IfThenElseZero(hn::Lt(x, zero), one));
  return hn::IfThenElse(hn::IsNaN(x), x, s);
}

TESSEL_SIMD_UNARY(Sqrt) { return hn::Sqrt(x); }

TESSEL_SIMD_UNARY(Square) { return hn::Mul(x, x); }

TESSEL_SIMD_UNARY(Rsqrt) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, hn::Sqrt(x));
}

TESSEL_SIMD_UNARY(Reciprocal) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(one, x);
}

TESSEL_SIMD_UNARY(Exp) { return safe_exp(d, x); }

TESSEL_SIMD_UNARY(Expm1) { return safe_expm1(d, x); }

TESSEL_SIMD_UNARY(Log) { return safe_log<false>(d, x); }

TESSEL_SIMD_UNARY(Log1p) { return safe_log1p(d, x); }

TESSEL_SIMD_UNARY(Log2) { return safe_log<true>(d, x); }

TESSEL_SIMD_UNARY(Sin) { return safe_trig<true>(d, x); }

TESSEL_SIMD_UNARY(Cos) { return safe_trig<false>(d, x); }

TESSEL_SIMD_UNARY(Tanh) {
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Tanh(d, x));
}

TESSEL_SIMD_UNARY(Sigmoid) { return simd_sigmoid(d, x); }

TESSEL_SIMD_UNARY(Relu) {
  const V zero = hn::Zero(d);
  return hn::IfThenElse(hn::Or(hn::Gt(x, zero), hn::IsNaN(x)), x, zero);
}

TESSEL_SIMD_UNARY(LeakyRelu) {
  const V zero = hn::Zero(d);
  return hn::IfThenElse(hn::Ge(x, zero), x, hn::Mul(hn::Set(d, a), x));
}

TESSEL_SIMD_UNARY(Elu) {
  const V zero = hn::Zero(d);
  return hn::IfThenElse(hn::Gt(x, zero), x,
                        hn::Mul(hn::Set(d, a), safe_expm1(d, x)));
}

TESSEL_SIMD_UNARY(Selu) {
  const V zero = hn::Zero(d);
  const V neg =
      hn::Mul(hn::Set(d, static_cast<float>(kSeluAlpha)), safe_expm1(d, x));
  return hn::Mul(hn::Set(d, static_cast<float>(kSeluScale)),
                 hn::IfThenElse(hn::Gt(x, zero), x, neg));
}

TESSEL_SIMD_UNARY(Gelu) {
  const V one = hn::Set(d, 1.0f);
  const V e = simd_erf(d, hn::Mul(x, hn::Set(d, 0.707106781f)));
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(one, e));
}

TESSEL_SIMD_UNARY(GeluTanh) {
  const V one = hn::Set(d, 1.0f);
  const V inner =
      hn::Mul(hn::Set(d, 0.797884561f),
              hn::MulAdd(hn::Mul(hn::Set(d, 0.044715f), x), hn::Mul(x, x), x));
  const V t = hn::IfThenElse(hn::IsNaN(inner), inner, hn::Tanh(d, inner));
  return hn::Mul(hn::Mul(hn::Set(d, 0.5f), x), hn::Add(one, t));
}

TESSEL_SIMD_UNARY(Silu) {
  const V one = hn::Set(d, 1.0f);
  return hn::Div(x, hn::Add(one, safe_exp(d, hn::Neg(x))));
}

TESSEL_SIMD_UNARY(Softplus) {
  const V bx = hn::Mul(hn::Set(d, a), x);
  const V soft = hn::Div(safe_log1p(d, safe_exp(d, bx)), hn::Set(d, a));
  return hn::IfThenElse(hn::Gt(bx, hn::Set(d, b)), x, soft);
}

TESSEL_SIMD_UNARY(Erf) { return simd_erf(d, x); }

TESSEL_SIMD_UNARY(Floor) { return hn::Floor(x); }

TESSEL_SIMD_UNARY(Ceil) { return hn::Ceil(x); }

TESSEL_SIMD_UNARY(Round) { return hn::Round(x); }

TESSEL_SIMD_UNARY(Trunc) { return hn::Trunc(x); }

#undef TESSEL_SIMD_UNARY

template <UnaryOp OP, class T>
void unary_run(float a, float b, const void* in, void* out, std::int64_t n) {
  map_unary(static_cast<const T*>(in), static_cast<T*>(out), n,
            [a, b](D d, V x)
                HWY_ATTR { return SimdUnary<OP>::apply(d, x, a, b); });
}

template <class T>
void unary_typed(UnaryOp op, float a, float b, const void* in, void* out,
                 std::int64_t n) {
  switch (op) {
#define TESSEL_UNARY_CASE(e, name, result, inputs, kind, kernel) \
  case UnaryOp::e:                                               \
    if constexpr (has_unary(UnaryOp::e)) {                       \
      unary_run<UnaryOp::e, T>(a, b, in, out, n);                \
    }                                                            \
    return;
    TESSEL_FOR_EACH_UNARY_OP(TESSEL_UNARY_CASE)
#undef TESSEL_UNARY_CASE
  }
}

static void UnaryImpl(int op, double a, double b, int storage, const void* in,
                      void* out, std::int64_t n) {
  const auto u = static_cast<UnaryOp>(op);
  const auto fa = static_cast<float>(a);
  const auto fb = static_cast<float>(b);
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32: return unary_typed<float>(u, fa, fb, in, out, n);
    case FloatStorage::BF16:
      return unary_typed<hwy::bfloat16_t>(u, fa, fb, in, out, n);
    case FloatStorage::F16:
      return unary_typed<hwy::float16_t>(u, fa, fb, in, out, n);
  }
}

// ---- binary ops ------------------------------------------------------------

// One Highway body per binary row marked Simd, enforced as for SimdUnary.
template <BinaryOp OP>
struct SimdBinary;

#define TESSEL_SIMD_BINARY(OP)                \
  template <>                                 \
  struct SimdBinary<BinaryOp::OP> {           \
    static HWY_INLINE V apply(D d, V a, V b); \
  };                                          \
  HWY_INLINE V SimdBinary<BinaryOp::OP>::apply([[maybe_unused]] D d, V a, V b)

TESSEL_SIMD_BINARY(Add) { return hn::Add(a, b); }

TESSEL_SIMD_BINARY(Sub) { return hn::Sub(a, b); }

TESSEL_SIMD_BINARY(Mul) { return hn::Mul(a, b); }

TESSEL_SIMD_BINARY(Div) { return hn::Div(a, b); }

TESSEL_SIMD_BINARY(Maximum) {
  return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b),
                        hn::Max(a, b));
}

TESSEL_SIMD_BINARY(Minimum) {
  return hn::IfThenElse(hn::Or(hn::IsNaN(a), hn::IsNaN(b)), hn::Add(a, b),
                        hn::Min(a, b));
}

TESSEL_SIMD_BINARY(Swiglu) {
  const V one = hn::Set(d, 1.0f);
  return hn::Mul(hn::Div(a, hn::Add(one, safe_exp(d, hn::Neg(a)))), b);
}

TESSEL_SIMD_BINARY(SiluBackward) {
  const V one = hn::Set(d, 1.0f);
  const V sig = hn::Div(one, hn::Add(one, safe_exp(d, hn::Neg(b))));
  return hn::Mul(hn::Mul(a, sig), hn::MulAdd(b, hn::Sub(one, sig), one));
}

#undef TESSEL_SIMD_BINARY

template <BinaryOp OP, class T>
void binary_run(const T* a, bool a_scalar, const T* b, bool b_scalar, T* out,
                std::int64_t n) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const V a0 = a_scalar ? hn::Set(d, first(a)) : hn::Zero(d);
  const V b0 = b_scalar ? hn::Set(d, first(b)) : hn::Zero(d);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    const V va = a_scalar ? a0 : load(d, a + i);
    const V vb = b_scalar ? b0 : load(d, b + i);
    store(d, SimdBinary<OP>::apply(d, va, vb), out + i);
  }
  if (i < n) {
    const auto rest = static_cast<std::size_t>(n - i);
    HWY_ALIGN T ta[hn::MaxLanes(d)] = {};
    HWY_ALIGN T tb[hn::MaxLanes(d)] = {};
    HWY_ALIGN T to[hn::MaxLanes(d)];
    if (!a_scalar) std::memcpy(ta, a + i, rest * sizeof(T));
    if (!b_scalar) std::memcpy(tb, b + i, rest * sizeof(T));
    const V va = a_scalar ? a0 : load(d, ta);
    const V vb = b_scalar ? b0 : load(d, tb);
    store(d, SimdBinary<OP>::apply(d, va, vb), to);
    std::memcpy(out + i, to, rest * sizeof(T));
  }
}

template <class T>
void binary_typed(BinaryOp op, const void* a, bool a_scalar, const void* b,
                  bool b_scalar, void* out, std::int64_t n) {
  const auto* ta = static_cast<const T*>(a);
  const auto* tb = static_cast<const T*>(b);
  auto* to = static_cast<T*>(out);
  switch (op) {
#define TESSEL_BINARY_CASE(e, name, result, inputs, kind, kernel) \
  case BinaryOp::e:                                               \
    if constexpr (has_binary(BinaryOp::e)) {                      \
      binary_run<BinaryOp::e>(ta, a_scalar, tb, b_scalar, to, n); \
    }                                                             \
    return;
    TESSEL_FOR_EACH_BINARY_OP(TESSEL_BINARY_CASE)
#undef TESSEL_BINARY_CASE
  }
}

static void BinaryImpl(int op, int storage, const void* a, bool a_scalar,
                       const void* b, bool b_scalar, void* out,
                       std::int64_t n) {
  const auto o = static_cast<BinaryOp>(op);
  switch (static_cast<FloatStorage>(storage)) {
    case FloatStorage::F32:
      return binary_typed<float>(o, a, a_scalar, b, b_scalar, out, n);
    case FloatStorage::BF16:
      return binary_typed<hwy::bfloat16_t>(o, a, a_scalar, b, b_scalar, out, n);
    case FloatStorage::F16:
      return binary_typed<hwy::float16_t>(o, a, a_scalar, b, b_scalar, out, n);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(UnaryImpl);
HWY_EXPORT(BinaryImpl);

void unary(UnaryOp op, const UnaryParams& params, FloatStorage storage,
           const void* in, void* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(UnaryImpl)
  (static_cast<int>(op), params.a, params.b, static_cast<int>(storage), in, out,
   n);
}

void binary(BinaryOp op, FloatStorage storage, const void* a, bool a_scalar,
            const void* b, bool b_scalar, void* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(BinaryImpl)
  (static_cast<int>(op), static_cast<int>(storage), a, a_scalar, b, b_scalar,
   out, n);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

// Compiled once per Highway target. See cast_simd.hpp for the contracts.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/cast_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <cstring>

#include "backends/cpu/simd/cast_simd.hpp"
#include "tessel/core/float_formats.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whole vectors through `store`, the tail through the scalar conversion.
template <class Store, class Scalar>
HWY_INLINE void cast_run(const float* in, std::uint16_t* out, std::int64_t n,
                         Store store_vector, Scalar scalar) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) store_vector(d, hn::LoadU(d, in + i), out + i);
  for (; i < n; ++i) out[i] = scalar(in[i]);
}

static void CastF32ToBF16Impl(const float* in, std::uint16_t* out,
                              std::int64_t n) {
  cast_run(
      in, out, n,
      [](D d, V v, std::uint16_t* p) {
        store(d, v, reinterpret_cast<hwy::bfloat16_t*>(p));
      },
      [](float x) { return fp::bf16_from_f32(x); });
}

// F16C (every Highway x86 target from AVX2 up) converts finite values and
// infinities exactly as fp::f16_from_f32 does (round to nearest even,
// subnormals included); NaNs differ (the instruction sets the quiet bit,
// NumPy and ml_dtypes keep the payload's top bits as they are), so NaN
// lanes are rebuilt the scalar way.
static bool CastF32ToF16Impl(const float* in, std::uint16_t* out,
                             std::int64_t n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  cast_run(
      in, out, n,
      [](D d, V v, std::uint16_t* p) {
        const hn::Rebind<hwy::float16_t, D> dh;
        const hn::Rebind<std::uint16_t, D> d16;
        const hn::RebindToUnsigned<D> du;
        const hn::RebindToSigned<D> di;
        // Selected at 32 bits (masks rebind only between equal lane sizes).
        const auto converted =
            hn::PromoteTo(du, hn::BitCast(d16, hn::DemoteTo(dh, v)));
        const auto bits = hn::BitCast(du, v);
        auto payload =
            hn::ShiftRight<13>(hn::And(bits, hn::Set(du, 0x7fffffu)));
        payload = hn::IfThenElse(hn::Eq(payload, hn::Zero(du)), hn::Set(du, 1u),
                                 payload);
        const auto nan = hn::Or(
            hn::Or(hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 0x8000u)),
                   hn::Set(du, 0x7c00u)),
            payload);
        const auto chosen =
            hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, converted);
        hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, chosen)), d16, p);
      },
      [](float x) { return fp::f16_from_f32(x); });
  return true;
#else
  (void)in;
  (void)out;
  (void)n;
  return false;
#endif
}

// fp::f16_to_f32 lane by lane: the magnitude shifted into f32 position and
// rescaled by 2^112 (exact, subnormals included), Inf/NaN rebuilt with
// their payload, the sign put back.
static void CastF16ToF32Impl(const std::uint16_t* in, float* out,
                             std::int64_t n) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<std::uint16_t, D> d16;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto h = hn::PromoteTo(du, hn::LoadU(d16, in + i));
    const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
    const auto mag = hn::ShiftLeft<13>(hn::And(h, hn::Set(du, 0x7fffu)));
    const auto inf_nan =
        hn::Eq(hn::And(h, hn::Set(du, 0x7c00u)), hn::Set(du, 0x7c00u));
    const auto scaled =
        hn::BitCast(du, hn::Mul(hn::BitCast(d, mag), hn::Set(d, 0x1p112f)));
    const auto bits =
        hn::IfThenElse(inf_nan, hn::Or(mag, hn::Set(du, 0x7f800000u)), scaled);
    hn::StoreU(hn::BitCast(d, hn::Or(bits, sign)), d, out + i);
  }
  for (; i < n; ++i) out[i] = fp::f16_to_f32(in[i]);
}

template <class T>
HWY_INLINE void widen_operand(const std::uint16_t* in, float* out,
                              std::int64_t n) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const auto* src = reinterpret_cast<const T*>(in);
  std::int64_t i = 0;
  for (; i + N <= n; i += N) store(d, load(d, src + i), out + i);
  for (; i < n; ++i) out[i] = first(src + i);
}

static void WidenF16OperandImpl(const std::uint16_t* in, float* out,
                                std::int64_t n) {
  widen_operand<hwy::float16_t>(in, out, n);
}

static void WidenBF16OperandImpl(const std::uint16_t* in, float* out,
                                 std::int64_t n) {
  widen_operand<hwy::bfloat16_t>(in, out, n);
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(CastF32ToBF16Impl);
HWY_EXPORT(CastF32ToF16Impl);
HWY_EXPORT(CastF16ToF32Impl);
HWY_EXPORT(WidenF16OperandImpl);
HWY_EXPORT(WidenBF16OperandImpl);

void cast_f32_to_bf16(const float* in, std::uint16_t* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(CastF32ToBF16Impl)(in, out, n);
}

bool cast_f32_to_f16(const float* in, std::uint16_t* out, std::int64_t n) {
  return HWY_DYNAMIC_DISPATCH(CastF32ToF16Impl)(in, out, n);
}

void cast_f16_to_f32(const std::uint16_t* in, float* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(CastF16ToF32Impl)(in, out, n);
}

void widen_f16_operand(const std::uint16_t* in, float* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenF16OperandImpl)(in, out, n);
}

void widen_bf16_operand(const std::uint16_t* in, float* out, std::int64_t n) {
  HWY_DYNAMIC_DISPATCH(WidenBF16OperandImpl)(in, out, n);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

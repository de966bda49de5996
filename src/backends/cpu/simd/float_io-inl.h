// Per-target helpers shared by the SIMD kernel files: f32 lanes loaded from
// and stored to f32, bf16 and f16 memory (stores round to nearest even).
// Included once per target by files that use foreach_target.h, hence the
// Highway include-guard idiom below instead of #pragma once.
#if defined(TESSEL_FLOAT_IO_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSEL_FLOAT_IO_INL_H_
#undef TESSEL_FLOAT_IO_INL_H_
#else
#define TESSEL_FLOAT_IO_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "tessel/core/float_formats.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

HWY_INLINE V load(D d, const float* p) { return hn::LoadU(d, p); }
HWY_INLINE V load(D d, const hwy::bfloat16_t* p) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, D>(), p));
}
HWY_INLINE V load(D d, const hwy::float16_t* p) {
#if HWY_TARGET <= HWY_AVX3
  // Two 256-bit conversions joined, not one 512-bit vcvtph2ps: on Zen 4
  // (measured 2026-12-04) a stream of f16 widened by the 512-bit form read
  // DRAM at 11-12 GB/s a core against 20-21 with the halves, bf16's 20 and
  // f32's 23, though in cache both forms convert at ~57 GB/s.
  const hn::Half<D> dh;
  const hn::Rebind<hwy::float16_t, decltype(dh)> dh16;
  return hn::Combine(d, hn::PromoteTo(dh, hn::LoadU(dh16, p + hn::Lanes(dh))),
                     hn::PromoteTo(dh, hn::LoadU(dh16, p)));
#else
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), p));
#endif
}

HWY_INLINE void store(D d, V v, float* p) { hn::StoreU(v, d, p); }
// Round to nearest even on the upper 16 bits; NaN becomes the canonical
// quiet NaN with its sign (ml_dtypes). Both are chosen at 32 bits so that
// one shift and one narrowing finish the job.
HWY_INLINE void store(D, V v, hwy::bfloat16_t* p) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(bits, hn::Add(lsb, hn::Set(du, 0x7fffu)));
  const auto nan =
      hn::Or(hn::And(bits, hn::Set(du, 0x80000000u)), hn::Set(du, 0x7fc00000u));
  const auto chosen =
      hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), nan, rounded);
  const hn::Rebind<std::uint16_t, D> d16;
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, hn::ShiftRight<16>(chosen))),
             d16, reinterpret_cast<std::uint16_t*>(p));
}
HWY_INLINE void store(D, V v, hwy::float16_t* p) {
  const hn::Rebind<hwy::float16_t, D> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, p);
}

// One element as f32.
HWY_INLINE float first(const float* p) { return *p; }
HWY_INLINE float first(const hwy::bfloat16_t* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return fp::bf16_to_f32(bits);
}
HWY_INLINE float first(const hwy::float16_t* p) {
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return fp::f16_to_f32(bits);
}

// The first `count` (< a vector) elements as f32 lanes, the rest `fill`.
template <class T>
HWY_INLINE V load_partial(D d, const T* p, std::size_t count, float fill) {
  HWY_ALIGN T tmp[hn::MaxLanes(d)];
  std::memcpy(tmp, p, count * sizeof(T));
  const V v = load(d, tmp);
  return hn::IfThenElse(hn::FirstN(d, count), v, hn::Set(d, fill));
}

template <class T>
HWY_INLINE void store_partial(D d, V v, T* p, std::size_t count) {
  HWY_ALIGN T tmp[hn::MaxLanes(d)];
  store(d, v, tmp);
  std::memcpy(p, tmp, count * sizeof(T));
}

// f32 partial vectors without the bounce buffer where the target's masked
// loads and stores never touch masked-off lanes: AVX-512 and later
// (HWY_MEM_OPS_MIGHT_FAULT 0), and AVX2, whose f32 forms are vmaskmovps
// (Highway 1.0 marks AVX2 as "might fault" for its 8/16-bit blends only).
// Short rows (the tiles of attention at short sequences, 12 columns) spend
// most of their time in partial vectors.
#if !HWY_MEM_OPS_MIGHT_FAULT || HWY_TARGET == HWY_AVX2
HWY_INLINE V load_partial(D d, const float* p, std::size_t count, float fill) {
  const auto m = hn::FirstN(d, count);
  return hn::IfThenElse(m, hn::MaskedLoad(m, d, p), hn::Set(d, fill));
}

HWY_INLINE void store_partial(D d, V v, float* p, std::size_t count) {
  hn::BlendedStore(v, hn::FirstN(d, count), d, p);
}
#endif

// f32 lanes from p: a whole vector when count is 0, else the first count
// (the rest 0). The one form of the loops that end in a partial vector.
HWY_INLINE V load_lanes(D d, const float* p, std::size_t count) {
  return count == 0 ? hn::LoadU(d, p) : load_partial(d, p, count, 0.0f);
}

HWY_INLINE void store_lanes(D d, V v, float* p, std::size_t count) {
  if (count == 0) {
    hn::StoreU(v, d, p);
  } else {
    store_partial(d, v, p, count);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // TESSEL_FLOAT_IO_INL_H_

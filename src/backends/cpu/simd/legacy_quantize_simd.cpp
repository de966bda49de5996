// Compiled once per Highway target. See legacy_quantize_simd.hpp for the
// contract: every f32 operation is the scalar encoder's, in its order
// (this file is compiled without FMA contraction), and the integer steps
// keep the bytes x86's truncating conversion gives the scalar code.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/legacy_quantize_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <bit>
#include <cstdint>

#include "backends/cpu/simd/legacy_quantize_simd.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// A block's 32 values in element order and their magnitudes.
struct Block32 {
  __m256 v[4];
  __m256 a[4];
};

inline Block32 load_block(const float* x) {
  Block32 b;
  for (int i = 0; i < 4; ++i) {
    b.v[i] = _mm256_loadu_ps(x + 8 * i);
    b.a[i] = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), b.v[i]);
  }
  return b;
}

// The largest magnitude, NaN lanes skipped: vmaxps returns its second
// operand when either is NaN, and the running maximum is the second.
inline float largest_magnitude(const Block32& b) {
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) m = _mm256_max_ps(b.a[i], m);
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

// Bit i set where element i's lane of `lanes` compares true with `with`.
template <int kPredicate>
inline std::uint32_t lanes_where(const __m256 (&lanes)[4], __m256 with) {
  std::uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) {
    bits |= static_cast<std::uint32_t>(
                _mm256_movemask_ps(_mm256_cmp_ps(lanes[i], with, kPredicate)))
            << (8 * i);
  }
  return bits;
}

// The low byte of each of 32 i32 lanes, in order (the scalar encoders
// store `(int8_t)` of the truncated int, not a saturated one).
inline __m256i low_bytes(const __m256i (&q)[4]) {
  const __m256i byte = _mm256_set1_epi32(0xFF);
  const __m256i q01 = _mm256_packus_epi32(_mm256_and_si256(q[0], byte),
                                          _mm256_and_si256(q[1], byte));
  const __m256i q23 = _mm256_packus_epi32(_mm256_and_si256(q[2], byte),
                                          _mm256_and_si256(q[3], byte));
  // The packs interleave 128-bit lanes: dwords q0[0-3] q1[0-3] q2[0-3]
  // q3[0-3] | q0[4-7] q1[4-7] q2[4-7] q3[4-7].
  return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(q01, q23),
                                     _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// Q4_0: d = max / -8 with max the first value of largest magnitude (a NaN
// never wins); codes (int8_t)(x * (1 / d) + 8.5) capped at 15, two a byte.
HWY_INLINE void q4_0_block(const float* x, std::uint8_t* out) {
  const Block32 b = load_block(x);
  const float amax = largest_magnitude(b);
  // No value above zero (all zeros or NaN): ggml's max stays +0, whatever
  // the zeros' signs.
  float max = 0.0f;
  if (amax > 0.0f) {
    max =
        x[std::countr_zero(lanes_where<_CMP_EQ_OQ>(b.a, _mm256_set1_ps(amax)))];
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  quant::store_f16(out, d);
  __m256i t[4];
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_cvttps_epi32(_mm256_add_ps(
        _mm256_mul_ps(b.v[i], _mm256_set1_ps(id)), _mm256_set1_ps(8.5f)));
  }
  const __m256i q = _mm256_min_epi8(low_bytes(t), _mm256_set1_epi8(15));
  // Byte j is code j | code (j + 16) << 4, as the scalar OR of two bytes
  // (a negative low code's high bits stay, as they do there).
  const __m128i high = _mm_and_si128(
      _mm_slli_epi16(_mm256_extracti128_si256(q, 1), 4), _mm_set1_epi8(-16));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2),
                   _mm_or_si128(_mm256_castsi256_si128(q), high));
}

// legacy_blocks.cpp's q8_code on each lane: below 2^23 the truncation t and
// the fraction v - t are exact, and the fraction picks t - 1, t or t + 1
// (halves away from zero, as roundf); otherwise t itself, which
// cvttps2dq gives as the scalar cvttss2si does (0x80000000 for NaN and
// from 2^31).
inline __m256i round_half_away(__m256 v) {
  const __m256i t = _mm256_cvttps_epi32(v);
  const __m256 fraction = _mm256_sub_ps(v, _mm256_cvtepi32_ps(t));
  const __m256 small = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v),
                                     _mm256_set1_ps(0x1p23f), _CMP_LT_OQ);
  const __m256 up = _mm256_and_ps(
      small, _mm256_cmp_ps(fraction, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
  const __m256 down = _mm256_and_ps(
      small, _mm256_cmp_ps(fraction, _mm256_set1_ps(-0.5f), _CMP_LE_OQ));
  // The masks are -1 where true.
  return _mm256_add_epi32(_mm256_sub_epi32(t, _mm256_castps_si256(up)),
                          _mm256_castps_si256(down));
}

// Q8_0: d = amax / 127, codes roundf(x * (1 / d)).
HWY_INLINE void q8_0_block(const float* x, std::uint8_t* out) {
  const Block32 b = load_block(x);
  // ggml's running maximum takes a NaN and drops it at the next element,
  // which no vector maximum does: a block with a NaN is scanned in order.
  const float amax = lanes_where<_CMP_UNORD_Q>(b.v, _mm256_setzero_ps()) != 0
                         ? quant::absmax(x, 32)
                         : largest_magnitude(b);
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  quant::store_f16(out, d);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    q[i] = round_half_away(_mm256_mul_ps(b.v[i], _mm256_set1_ps(id)));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2), low_bytes(q));
}

static bool QuantizeImpl(int type, const float* in, std::uint8_t* blocks,
                         std::int64_t nblocks) {
  switch (static_cast<DType>(type)) {
    case DType::Q4_0:
      for (std::int64_t i = 0; i < nblocks; ++i) {
        q4_0_block(in + 32 * i, blocks + 18 * i);
      }
      return true;
    case DType::Q8_0:
      for (std::int64_t i = 0; i < nblocks; ++i) {
        q8_0_block(in + 32 * i, blocks + 34 * i);
      }
      return true;
    default: return false;
  }
}
#else
static bool QuantizeImpl(int, const float*, std::uint8_t*, std::int64_t) {
  return false;  // the scalar encoders serve these targets
}
#endif

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(QuantizeImpl);

bool quantize_blocks_simd(DType type, const float* in, std::uint8_t* blocks,
                          std::int64_t nblocks) {
  return HWY_DYNAMIC_DISPATCH(QuantizeImpl)(static_cast<int>(type), in, blocks,
                                            nblocks);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

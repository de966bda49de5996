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
#include <limits>

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

HWY_INLINE Block32 load_block(const float* x) {
  Block32 b;
  for (int i = 0; i < 4; ++i) {
    b.v[i] = _mm256_loadu_ps(x + 8 * i);
    b.a[i] = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), b.v[i]);
  }
  return b;
}

// The largest magnitude, NaN lanes skipped: vmaxps returns its second
// operand when either is NaN, and the running maximum is the second.
HWY_INLINE float largest_magnitude(const Block32& b) {
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) m = _mm256_max_ps(b.a[i], m);
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

// Bit i set where element i's lane of `lanes` compares true with `with`.
template <int kPredicate>
HWY_INLINE std::uint32_t lanes_where(const __m256 (&lanes)[4], __m256 with) {
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
HWY_INLINE __m256i low_bytes(const __m256i (&q)[4]) {
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

// Q4_0's codes of a block given 1 / d: (int8_t)(x * id + 8.5) capped at
// 15, two a byte after the f16 scale.
HWY_INLINE void q4_0_codes(const float* x, __m256 id, std::uint8_t* out) {
  __m256i t[4];
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_cvttps_epi32(_mm256_add_ps(
        _mm256_mul_ps(_mm256_loadu_ps(x + 8 * i), id), _mm256_set1_ps(8.5f)));
  }
  const __m256i q = _mm256_min_epi8(low_bytes(t), _mm256_set1_epi8(15));
  // Byte j is code j | code (j + 16) << 4, as the scalar OR of two bytes
  // (a negative low code's high bits stay, as they do there).
  const __m128i high = _mm_and_si128(
      _mm_slli_epi16(_mm256_extracti128_si256(q, 1), 4), _mm_set1_epi8(-16));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2),
                   _mm_or_si128(_mm256_castsi256_si128(q), high));
}

// Q4_0: d = max / -8 with max the first value of largest magnitude (a NaN
// never wins); id = 1 / d, or 0 for a zero d.
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
  q4_0_codes(x, _mm256_set1_ps(id), out);
}

// legacy_blocks.cpp's q8_code on each lane: below 2^23 the truncation t and
// the fraction v - t are exact, and the fraction picks t - 1, t or t + 1
// (halves away from zero, as roundf); otherwise t itself, which
// cvttps2dq gives as the scalar cvttss2si does (0x80000000 for NaN and
// from 2^31). Without kRangeCheck the caller knows every lane is NaN or
// below 2^23 in magnitude (a NaN's fraction compares false, leaving t).
template <bool kRangeCheck>
HWY_INLINE __m256i round_half_away(__m256 v) {
  const __m256i t = _mm256_cvttps_epi32(v);
  const __m256 fraction = _mm256_sub_ps(v, _mm256_cvtepi32_ps(t));
  __m256 up = _mm256_cmp_ps(fraction, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  __m256 down = _mm256_cmp_ps(fraction, _mm256_set1_ps(-0.5f), _CMP_LE_OQ);
  if constexpr (kRangeCheck) {
    const __m256 small =
        _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v),
                      _mm256_set1_ps(0x1p23f), _CMP_LT_OQ);
    up = _mm256_and_ps(small, up);
    down = _mm256_and_ps(small, down);
  }
  // The masks are -1 where true.
  return _mm256_add_epi32(_mm256_sub_epi32(t, _mm256_castps_si256(up)),
                          _mm256_castps_si256(down));
}

// Q8_0's codes of a block given 1 / d, after the f16 scale. kFiniteInverse:
// 1 / d is finite, so d >= 2^-128 and every product is NaN (Inf x 0) or
// at most 127 (1 + 2^-21) in magnitude, far below 2^23; otherwise an
// overflowing 1 / d makes infinite products, which need the range check.
template <bool kFiniteInverse>
HWY_INLINE void q8_0_codes(const float* x, __m256 id, std::uint8_t* out) {
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    q[i] = round_half_away<!kFiniteInverse>(
        _mm256_mul_ps(_mm256_loadu_ps(x + 8 * i), id));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2), low_bytes(q));
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
  q8_0_codes<false>(x, _mm256_set1_ps(id), out);
}

// ---- Eight blocks at a time ----
//
// One block alone is a chain: its largest value, a divide or two, the f16
// conversion, then its codes, about as long as the block's instructions
// take to issue, and the out-of-order window held little of the next
// block (44 cycles a Q4_0 block, 71 a Q8_0 one, in L2). Eight blocks'
// extremes are reduced into one vector, whose lanes take the divides and
// the f16 conversion together, and the codes then need only their lane.

// The transposing reduction of eight vectors v0..v7 into one whose lane i
// is `op` over v_i's eight lanes, in two steps so that each pair of blocks
// can be folded as soon as it is read: pair(v_2p, v_2p+1), then
// finish(pairs 0..3).
template <class Op>
HWY_INLINE __m256 reduce_pair(__m256 a, __m256 b, Op op) {
  return op(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
}
template <class Op>
HWY_INLINE __m256 reduce_finish(const __m256 (&pairs)[4], Op op) {
  // Each 128-bit half: lanes 0-3 of four vectors, each over its four.
  const __m256 lo = op(_mm256_shuffle_ps(pairs[0], pairs[1], 0x44),
                       _mm256_shuffle_ps(pairs[0], pairs[1], 0xEE));
  const __m256 hi = op(_mm256_shuffle_ps(pairs[2], pairs[3], 0x44),
                       _mm256_shuffle_ps(pairs[2], pairs[3], 0xEE));
  return op(_mm256_permute2f128_ps(lo, hi, 0x20),
            _mm256_permute2f128_ps(lo, hi, 0x31));
}
// The folds, as types so that each reduction inlines its op.
struct MaxOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_max_ps(a, b); }
};
struct MinOp {
  __m256 operator()(__m256 a, __m256 b) const { return _mm256_min_ps(a, b); }
};

// Lane i of v in every lane.
HWY_INLINE __m256 lane(__m256 v, int i) {
  return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(i));
}

// d != 0 ? 1 / d : 0 in each lane.
HWY_INLINE __m256 inverse_or_zero(__m256 d) {
  return _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d),
                       _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_OQ));
}

// Eight f16 scales (F16C rounds to nearest even, overflow to Inf, as
// quant::f16_from_f32 does for all but NaN, which no caller passes) to
// the first bytes of eight blocks.
template <int kBytes>
HWY_INLINE void store_scales8(__m256 d, std::uint8_t* out) {
  alignas(16) std::uint16_t words[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(words),
                  _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
  for (int i = 0; i < 8; ++i) quant::store_u16(out + kBytes * i, words[i]);
}

// Each block's largest and smallest values (from 0, NaN skipped: vmaxps and
// vminps return their second operand when either is NaN), in one pass;
// with kFindNaN, whether any value is NaN.
template <bool kFindNaN>
HWY_INLINE bool extremes8(const float* x, __m256& high, __m256& low) {
  __m256 high_pairs[4], low_pairs[4];
  __m256 nan = _mm256_setzero_ps();
  for (int p = 0; p < 4; ++p) {
    __m256 h[2], l[2];
    for (int j = 0; j < 2; ++j) {
      h[j] = l[j] = _mm256_setzero_ps();
      for (int k = 0; k < 4; ++k) {
        const __m256 v = _mm256_loadu_ps(x + 32 * (2 * p + j) + 8 * k);
        h[j] = _mm256_max_ps(v, h[j]);
        l[j] = _mm256_min_ps(v, l[j]);
        if constexpr (kFindNaN) {
          nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        }
      }
    }
    high_pairs[p] = reduce_pair(h[0], h[1], MaxOp{});
    low_pairs[p] = reduce_pair(l[0], l[1], MinOp{});
  }
  high = reduce_finish(high_pairs, MaxOp{});
  low = reduce_finish(low_pairs, MinOp{});
  return _mm256_movemask_ps(nan) != 0;
}

// Eight Q4_0 blocks. A block's max is +amax or -amax by which extreme
// reaches it; a block where both do takes the first, by a scan.
HWY_INLINE void q4_0_blocks8(const float* x, std::uint8_t* out) {
  __m256 high, low;
  extremes8<false>(x, high, low);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 negated_low = _mm256_xor_ps(low, sign);
  const __m256 amax = _mm256_max_ps(high, negated_low);
  const __m256 some = _mm256_cmp_ps(amax, _mm256_setzero_ps(), _CMP_GT_OQ);
  const __m256 up = _mm256_and_ps(some, _mm256_cmp_ps(high, amax, _CMP_EQ_OQ));
  const __m256 down =
      _mm256_and_ps(some, _mm256_cmp_ps(negated_low, amax, _CMP_EQ_OQ));
  // up: +amax; down alone: -amax; neither (all zero or NaN): +0.
  __m256 max = _mm256_or_ps(
      _mm256_and_ps(up, amax),
      _mm256_andnot_ps(up, _mm256_and_ps(down, _mm256_xor_ps(amax, sign))));
  if (const int both = _mm256_movemask_ps(_mm256_and_ps(up, down))) {
    alignas(32) float maxes[8];
    _mm256_store_ps(maxes, max);
    for (int b = 0; b < 8; ++b) {
      if (both >> b & 1) maxes[b] = quant::signed_absmax(x + 32 * b, 32).max;
    }
    max = _mm256_load_ps(maxes);
  }
  const __m256 d = _mm256_div_ps(max, _mm256_set1_ps(-8.0f));
  const __m256 id = inverse_or_zero(d);
  store_scales8<18>(d, out);
  for (int b = 0; b < 8; ++b) q4_0_codes(x + 32 * b, lane(id, b), out + 18 * b);
}

// Eight Q8_0 blocks; false (nothing written) where one holds a NaN (the
// scan's rule) or its 1 / d overflows: those go a block at a time.
HWY_INLINE bool q8_0_blocks8(const float* x, std::uint8_t* out) {
  __m256 high, low;
  if (extremes8<true>(x, high, low)) return false;
  // The largest magnitude, its sign cleared (max(+0, -0) may keep -0).
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 amax =
      _mm256_andnot_ps(sign, _mm256_max_ps(high, _mm256_xor_ps(low, sign)));
  const __m256 d = _mm256_div_ps(amax, _mm256_set1_ps(127.0f));
  const __m256 id = inverse_or_zero(d);
  if (_mm256_movemask_ps(_mm256_cmp_ps(
          id, _mm256_set1_ps(std::numeric_limits<float>::infinity()),
          _CMP_EQ_OQ)) != 0) {
    return false;
  }
  store_scales8<34>(d, out);
  for (int b = 0; b < 8; ++b) {
    q8_0_codes<true>(x + 32 * b, lane(id, b), out + 34 * b);
  }
  return true;
}

static bool QuantizeImpl(int type, const float* in, std::uint8_t* blocks,
                         std::int64_t nblocks) {
  std::int64_t i = 0;
  switch (static_cast<DType>(type)) {
    case DType::Q4_0:
      for (; i + 8 <= nblocks; i += 8) {
        q4_0_blocks8(in + 32 * i, blocks + 18 * i);
      }
      for (; i < nblocks; ++i) q4_0_block(in + 32 * i, blocks + 18 * i);
      return true;
    case DType::Q8_0:
      for (; i + 8 <= nblocks; i += 8) {
        if (q8_0_blocks8(in + 32 * i, blocks + 34 * i)) continue;
        for (std::int64_t j = i; j < i + 8; ++j) {
          q8_0_block(in + 32 * j, blocks + 34 * j);
        }
      }
      for (; i < nblocks; ++i) q8_0_block(in + 32 * i, blocks + 34 * i);
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

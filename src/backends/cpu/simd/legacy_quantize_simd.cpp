// Compiled once per Highway target. See legacy_quantize_simd.hpp for the
// contract: every f32 operation is the scalar encoder's, in its order
// (this file is compiled without FMA contraction), and the integer steps
// keep the bytes x86's truncating conversion gives the scalar code.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/legacy_quantize_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "backends/cpu/simd/legacy_quantize_simd.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
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

// ---- Eight blocks at a time ----
//
// One block alone is a chain: its largest value, a divide or two, the f16
// conversion, then its codes, about as long as the block's instructions
// take to issue, and the out-of-order window held little of the next
// block (44 cycles a Q4_0 block, 71 a Q8_0 one, in L2, in a form that took
// one block at a time). Eight blocks' extremes are reduced into one
// vector, whose lanes take the divides and the f16 conversion together,
// and the codes then need only their lane. Fewer than eight are padded
// with zero blocks.

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

// d != 0 ? 1 / d : 0 in each lane (a NaN d is not 0 there either).
HWY_INLINE __m256 inverse_or_zero(__m256 d) {
  return _mm256_and_ps(_mm256_div_ps(_mm256_set1_ps(1.0f), d),
                       _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ));
}

// Eight f16 scales to the first bytes of eight blocks. F16C rounds to
// nearest even with overflow to Inf as quant::f16_from_f32 does; a NaN
// (Q8_0's scan can give one) takes that conversion's 0x7E00 with the sign
// rather than F16C's kept payload.
template <int kBytes>
HWY_INLINE void store_scales8(__m256 d, std::uint8_t* out) {
  alignas(16) std::uint16_t words[8];
  _mm_store_si128(reinterpret_cast<__m128i*>(words),
                  _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT));
  if (const int nan = _mm256_movemask_ps(_mm256_cmp_ps(d, d, _CMP_UNORD_Q))) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, d);
    for (int i = 0; i < 8; ++i) {
      if (nan >> i & 1) words[i] = quant::f16_from_f32(lanes[i]);
    }
  }
  for (int i = 0; i < 8; ++i) quant::store_u16(out + kBytes * i, words[i]);
}

// `v` with lane i replaced by replacement(i) where bit i of `lanes` is set
// (the rare blocks a vector rule does not cover).
template <class Replacement>
HWY_INLINE __m256 replace_lanes(__m256 v, int lanes, Replacement replacement) {
  alignas(32) float values[8];
  _mm256_store_ps(values, v);
  for (int i = 0; i < 8; ++i) {
    if (lanes >> i & 1) values[i] = replacement(i);
  }
  return _mm256_load_ps(values);
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
    max = replace_lanes(max, both, [&](int b) {
      return quant::signed_absmax(x + 32 * b, 32).max;
    });
  }
  const __m256 d = _mm256_div_ps(max, _mm256_set1_ps(-8.0f));
  const __m256 id = inverse_or_zero(d);
  store_scales8<18>(d, out);
  for (int b = 0; b < 8; ++b) q4_0_codes(x + 32 * b, lane(id, b), out + 18 * b);
}

// Eight Q8_0 blocks. ggml's running maximum takes a NaN and drops it at
// the next element, which no vector maximum does: eight blocks holding a
// NaN take each block's maximum by that scan. A block whose 1 / d
// overflows (a tiny d) has infinite products, which need the rounding's
// range check.
HWY_INLINE void q8_0_blocks8(const float* x, std::uint8_t* out) {
  __m256 high, low;
  const bool nan = extremes8<true>(x, high, low);
  // The largest magnitude, its sign cleared (max(+0, -0) may keep -0).
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax =
      _mm256_andnot_ps(sign, _mm256_max_ps(high, _mm256_xor_ps(low, sign)));
  if (nan) {
    amax = replace_lanes(amax, 0xFF,
                         [&](int b) { return quant::absmax(x + 32 * b, 32); });
  }
  const __m256 d = _mm256_div_ps(amax, _mm256_set1_ps(127.0f));
  const __m256 id = inverse_or_zero(d);
  const int overflowed = _mm256_movemask_ps(_mm256_cmp_ps(
      id, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_EQ_OQ));
  store_scales8<34>(d, out);
  for (int b = 0; b < 8; ++b) {
    if (overflowed >> b & 1) {
      q8_0_codes<false>(x + 32 * b, lane(id, b), out + 34 * b);
    } else {
      q8_0_codes<true>(x + 32 * b, lane(id, b), out + 34 * b);
    }
  }
}

// The last n < 8 blocks: padded to eight with zero blocks, encoded, and
// the first n copied out.
template <int kBytes, class Blocks8>
void last_blocks(const float* in, std::uint8_t* blocks, std::int64_t n,
                 Blocks8 blocks8) {
  alignas(32) float padded[8 * 32] = {};
  std::memcpy(padded, in, sizeof(float) * 32 * static_cast<std::size_t>(n));
  std::uint8_t encoded[8 * kBytes];
  blocks8(padded, encoded);
  std::memcpy(blocks, encoded, kBytes * static_cast<std::size_t>(n));
}

template <int kBytes, class Blocks8>
void encode_blocks(const float* in, std::uint8_t* blocks, std::int64_t nblocks,
                   Blocks8 blocks8) {
  std::int64_t i = 0;
  for (; i + 8 <= nblocks; i += 8) blocks8(in + 32 * i, blocks + kBytes * i);
  if (i < nblocks) {
    last_blocks<kBytes>(in + 32 * i, blocks + kBytes * i, nblocks - i, blocks8);
  }
}

static bool QuantizeImpl(int type, const float* in, std::uint8_t* blocks,
                         std::int64_t nblocks) {
  switch (static_cast<DType>(type)) {
    case DType::Q4_0:
      encode_blocks<18>(
          in, blocks, nblocks,
          [](const float* x, std::uint8_t* out) { q4_0_blocks8(x, out); });
      return true;
    case DType::Q8_0:
      encode_blocks<34>(
          in, blocks, nblocks,
          [](const float* x, std::uint8_t* out) { q8_0_blocks8(x, out); });
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

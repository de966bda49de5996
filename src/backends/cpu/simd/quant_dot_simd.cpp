// Compiled once per Highway target. See quant_dot_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_dot_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <array>
#include <cstring>

#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/quant_dot_layout.hpp"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

using namespace layout;  // NOLINT: the offsets above, in every kernel
using quant::load_f32;
using quant::load_u32;

using quant::K4Scales;
using quant::unpack_k4_scales;

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// ---- 256-bit integer kernels (AVX2 and up) ----
//
// Each kernel is one weight row against one activation row. Per block the
// integer products and scale applications are ggml's; the row accumulates
// its blocks in f32 vectors, reduced at the end in ggml's order.

// Pairs of signed bytes times signed bytes, as i16 lanes. The x86 pair
// product takes one unsigned operand: |x| times y with x's sign. No
// saturation for |y| <= 127 (activation codes), whatever x is (a hostile
// -128 weight code reads as the unsigned 128 it stands for).
inline __m256i dot_i8_pairs(__m256i x, __m256i y) {
  return _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
}
// The same summed over each four adjacent bytes, as i32 lanes.
inline __m256i dot_i8_quads(__m256i x, __m256i y) {
  return _mm256_madd_epi16(dot_i8_pairs(x, y), _mm256_set1_epi16(1));
}

inline float hsum8(__m256 v) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}
inline float hsum4(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// The weight rows stream from memory at a few instructions per byte: the
// hardware prefetchers alone leave the core waiting on them. Each block
// asks for the cache lines kPrefetchBytes ahead of it (measured on
// Sapphire Rapids, M = 1, 4096 x 4096: Q4_0 6.3 GB/s without, 15 at 768
// bytes ahead, 21 at 3072, no better at 6144).
constexpr int kPrefetchBytes = 3072;
template <int kBlockBytes, int kDistance = kPrefetchBytes>
inline void prefetch_ahead(const std::uint8_t* block) {
  for (int o = 0; o < kBlockBytes; o += 64) {
    _mm_prefetch(reinterpret_cast<const char*>(block + kDistance + o),
                 _MM_HINT_T0);
  }
}

// ggml subtracts 8 from each code and multiplies signed bytes; the same
// integers come cheaper as unsigned codes times y, less the activation
// row's precomputed 8 x sums of y. Two accumulators keep the FMA latency
// off the critical path.
inline __m256 block_q4_0(const std::uint8_t* wb, const std::uint8_t* qy,
                         const std::uint8_t* offsets, float dy, __m256 acc) {
  const __m256i sums = _mm256_sub_epi32(
      _mm256_madd_epi16(_mm256_maddubs_epi16(nibbles32(wb + 2), load256(qy)),
                        _mm256_set1_epi16(1)),
      load256(offsets));
  return _mm256_fmadd_ps(_mm256_set1_ps(f16_at(wb) * dy),
                         _mm256_cvtepi32_ps(sums), acc);
}
inline float dot_q4_0(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  const std::uint8_t* dy = act + nb * kQ80Bytes;  // f32 scales
  const std::uint8_t* offsets = act + nb * (kQ80Bytes + kQ80ScaleBytes);
  // Two accumulators in registers: indexing an array by b & 1 sends them
  // through the stack, a store-to-load chain per block.
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    prefetch_ahead<2 * kQ40Bytes>(w + b * kQ40Bytes);
    acc0 = block_q4_0(w + b * kQ40Bytes, act + b * kQ80Bytes + 2,
                      offsets + 32 * b, load_f32(dy + 4 * b), acc0);
    acc1 = block_q4_0(w + (b + 1) * kQ40Bytes, act + (b + 1) * kQ80Bytes + 2,
                      offsets + 32 * (b + 1), load_f32(dy + 4 * (b + 1)), acc1);
  }
  if (b < nb) {
    acc0 = block_q4_0(w + b * kQ40Bytes, act + b * kQ80Bytes + 2,
                      offsets + 32 * b, load_f32(dy + 4 * b), acc0);
  }
  return hsum8(_mm256_add_ps(acc0, acc1));
}

#if HWY_TARGET == HWY_AVX3
// ---- Q4_0 two blocks to a 512-bit register, with AVX512-VNNI ----
//
// The 256-bit kernel spends about 14 instructions on each 18-byte block,
// which makes Q4_0 compute-bound at M = 1 (28 GB/s on two cores with the
// weights in cache, against a 35 GB/s DRAM read here). One vpdpbusd takes
// the u8 codes times the i8 activations four at a time into i32 lanes (the
// maddubs + madd pair of the 256-bit kernel), and a 512-bit register holds
// two blocks, so the scale step (convert, scale, fma) runs once per pair.
// Lanes 0-7 hold block b as the 256-bit kernel's lanes do (low nibbles,
// then high), lanes 8-15 block b + 1: the activation row's precomputed
// offsets for the two blocks are then one contiguous load. Highway's AVX3
// target does not assume VNNI, so the caller checks for it at run time.
// The attribute names every feature these functions use, not only VNNI:
// clang lets a function's own target attribute replace the one Highway's
// target pragma would have applied (GCC adds them up), so "avx512vnni"
// alone would compile them without AVX-512 BW/DQ under clang.
#ifndef TESSEL_AVX512_VNNI_TARGET
#define TESSEL_AVX512_VNNI_TARGET                           \
  __attribute__((                                           \
      target("avx,avx2,bmi,bmi2,fma,f16c,avx512f,avx512cd," \
             "avx512vl,avx512dq,avx512bw,avx512vnni")))
#endif
// GCC 12's 512-bit conversions, shuffles and extracts pass an "undefined"
// register as their unused merge source, and then warn about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// The i32 sums of blocks b and b + 1 (lanes 0-7 and 8-15), less the
// activation offsets.
TESSEL_AVX512_VNNI_TARGET inline __m512i pair_sums_q4_0(
    const std::uint8_t* w0, const std::uint8_t* act,
    const std::uint8_t* offsets) {
  // [b's 16 bytes | b+1's 16 bytes], then [b lo, b hi, b+1 lo, b+1 hi].
  const __m256i raw =
      _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>(w0 + kQ40Bytes + 2),
                          reinterpret_cast<const __m128i*>(w0 + 2));
  const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(raw),
                                          _mm256_srli_epi16(raw, 4), 1);
  const __m512i codes = _mm512_and_si512(
      _mm512_shuffle_i64x2(both, both, _MM_SHUFFLE(3, 1, 2, 0)),
      _mm512_set1_epi8(0x0F));
  const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(load256(act + 2)),
                                       load256(act + kQ80Bytes + 2), 1);
  return _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, y),
                          _mm512_loadu_si512(offsets));
}

// The scales d_w x d_y of `n` (2 or 4) consecutive blocks, exactly the
// 256-bit kernel's f32 products: one conversion and one multiply for all.
template <int n>
inline __m128 scales_q4_0(const std::uint8_t* w0, const std::uint8_t* dy) {
  std::uint16_t h[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; ++i) std::memcpy(&h[i], w0 + i * kQ40Bytes, 2);
  const __m128 dw =
      _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(h)));
  const __m128 d_y = n == 4 ? _mm_loadu_ps(reinterpret_cast<const float*>(dy))
                            : _mm_castsi128_ps(_mm_loadl_epi64(
                                  reinterpret_cast<const __m128i*>(dy)));
  return _mm_mul_ps(dw, d_y);
}

// Scale i of `d` over lanes 0-7, scale i + 1 over lanes 8-15.
template <int i>
inline __m512 spread_pair(__m128 d) {
  return _mm512_permutexvar_ps(
      _mm512_set_epi32(i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1, i + 1,
                       i, i, i, i, i, i, i, i),
      _mm512_castps128_ps512(d));
}

TESSEL_AVX512_VNNI_TARGET inline float dot_q4_0_vnni(const std::uint8_t* w,
                                                     const std::uint8_t* act,
                                                     std::int64_t nb) {
  const std::uint8_t* dy = act + nb * kQ80Bytes;
  const std::uint8_t* offsets = act + nb * (kQ80Bytes + kQ80ScaleBytes);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  std::int64_t b = 0;
  for (; b + 3 < nb; b += 4) {
    const std::uint8_t* w0 = w + b * kQ40Bytes;
    prefetch_ahead<4 * kQ40Bytes>(w0);
    const __m128 d = scales_q4_0<4>(w0, dy + 4 * b);
    acc0 = _mm512_fmadd_ps(spread_pair<0>(d),
                           _mm512_cvtepi32_ps(pair_sums_q4_0(
                               w0, act + b * kQ80Bytes, offsets + 32 * b)),
                           acc0);
    acc1 = _mm512_fmadd_ps(spread_pair<2>(d),
                           _mm512_cvtepi32_ps(pair_sums_q4_0(
                               w0 + 2 * kQ40Bytes, act + (b + 2) * kQ80Bytes,
                               offsets + 32 * (b + 2))),
                           acc1);
  }
  if (b + 1 < nb) {
    const std::uint8_t* w0 = w + b * kQ40Bytes;
    acc0 = _mm512_fmadd_ps(spread_pair<0>(scales_q4_0<2>(w0, dy + 4 * b)),
                           _mm512_cvtepi32_ps(pair_sums_q4_0(
                               w0, act + b * kQ80Bytes, offsets + 32 * b)),
                           acc0);
    b += 2;
  }
  const __m512 acc = _mm512_add_ps(acc0, acc1);
  __m256 half = _mm256_add_ps(_mm512_castps512_ps256(acc),
                              _mm512_extractf32x8_ps(acc, 1));
  if (b < nb) {
    half = block_q4_0(w + b * kQ40Bytes, act + b * kQ80Bytes + 2,
                      offsets + 32 * b, load_f32(dy + 4 * b), half);
  }
  return hsum8(half);
}

// ---- Q4_0 four blocks to a register, with AVX512-VNNI and VBMI ----
//
// The kernel above spends about eleven instructions on two blocks, five of
// them cross-lane moves on the one shuffle port: assembling two 18-byte
// blocks' codes into a register and the activations into their order.
// That left Q4_0 compute-bound at M = 1 (34 GB/s on two cores in cache,
// about DRAM's rate, so misses and work did not overlap: 75 % of the read
// ceiling cold). Here one byte permute (vpermt2b) gathers the 16 code
// bytes of each of four blocks (72 bytes: one 64-byte load and 8 more)
// into the four 128-bit lanes, a word permute gathers their four f16
// scales, each spread over its block's lanes, and the activation row
// carries its codes, offsets and scales for each group of four blocks in
// the order those lanes want (kQ80Quad*), written once per row when it is
// quantised. Two vpdpbusd then take all 128 products.
#ifndef TESSEL_AVX512_VBMI_TARGET
#define TESSEL_AVX512_VBMI_TARGET                           \
  __attribute__((                                           \
      target("avx,avx2,bmi,bmi2,fma,f16c,avx512f,avx512cd," \
             "avx512vl,avx512dq,avx512bw,avx512vnni,avx512vbmi")))
#endif

// Byte 16i + j: code byte j of block i, at 18i + 2 + j of the group (from
// the second source past byte 63, which vpermt2b's index 64 + n selects).
inline __m512i quad_code_index() {
  alignas(64) static constexpr auto kIndex = [] {
    std::array<std::uint8_t, 64> index{};
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 16; ++j) {
        index[static_cast<std::size_t>(16 * i + j)] =
            static_cast<std::uint8_t>(18 * i + 2 + j);
      }
    }
    return index;
  }();
  return _mm512_load_si512(kIndex.data());
}

// Word 4i + l: block i's f16 scale (word 9i of the group).
inline __m512i quad_scale_index() {
  alignas(64) static constexpr auto kIndex = [] {
    std::array<std::int16_t, 32> index{};
    for (int lane = 0; lane < 16; ++lane) {
      index[static_cast<std::size_t>(lane)] =
          static_cast<std::int16_t>(9 * (lane / 4));
    }
    return index;
  }();
  return _mm512_load_si512(kIndex.data());
}

// Blocks 4g..4g+3 of the group at w0 against their activation quad.
TESSEL_AVX512_VBMI_TARGET inline __m512 quad_q4_0(const std::uint8_t* w0,
                                                  const std::uint8_t* quad,
                                                  __m512i code_index,
                                                  __m512i scale_index,
                                                  __m512 acc) {
  const __m512i head = _mm512_loadu_si512(w0);
  const __m512i tail = _mm512_zextsi128_si512(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w0 + 64)));
  const __m512i codes = _mm512_permutex2var_epi8(head, code_index, tail);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  __m512i sums = _mm512_dpbusd_epi32(_mm512_loadu_si512(quad + kQ80QuadOffsets),
                                     _mm512_and_si512(codes, m4),
                                     _mm512_loadu_si512(quad + kQ80QuadLow));
  sums = _mm512_dpbusd_epi32(sums,
                             _mm512_and_si512(_mm512_srli_epi16(codes, 4), m4),
                             _mm512_loadu_si512(quad + kQ80QuadHigh));
  const __m512 d_w = _mm512_cvtph_ps(
      _mm512_castsi512_si256(_mm512_permutexvar_epi16(scale_index, head)));
  return _mm512_fmadd_ps(
      _mm512_mul_ps(d_w, _mm512_loadu_ps(quad + kQ80QuadScales)),
      _mm512_cvtepi32_ps(sums), acc);
}

TESSEL_AVX512_VBMI_TARGET inline float dot_q4_0_quads(const std::uint8_t* w,
                                                      const std::uint8_t* act,
                                                      std::int64_t nb) {
  const std::uint8_t* dy = act + nb * kQ80Bytes;
  const std::uint8_t* offsets = act + nb * (kQ80Bytes + kQ80ScaleBytes);
  const std::uint8_t* quads = act + nb * (kQ80Bytes + kQ80ExtraBytes);
  const __m512i code_index = quad_code_index();
  const __m512i scale_index = quad_scale_index();
  constexpr int kQuadBytes = 4 * kQ40Bytes;
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  const std::int64_t groups = nb / 4;
  std::int64_t g = 0;
  for (; g + 1 < groups; g += 2) {
    const std::uint8_t* w0 = w + g * kQuadBytes;
    prefetch_ahead<2 * kQuadBytes>(w0);
    acc0 =
        quad_q4_0(w0, quads + g * kQ80QuadBytes, code_index, scale_index, acc0);
    acc1 = quad_q4_0(w0 + kQuadBytes, quads + (g + 1) * kQ80QuadBytes,
                     code_index, scale_index, acc1);
  }
  if (g < groups) {
    acc0 = quad_q4_0(w + g * kQuadBytes, quads + g * kQ80QuadBytes, code_index,
                     scale_index, acc0);
  }
  const __m512 acc = _mm512_add_ps(acc0, acc1);
  __m256 half = _mm256_add_ps(_mm512_castps512_ps256(acc),
                              _mm512_extractf32x8_ps(acc, 1));
  for (std::int64_t b = 4 * groups; b < nb; ++b) {
    half = block_q4_0(w + b * kQ40Bytes, act + b * kQ80Bytes + 2,
                      offsets + 32 * b, load_f32(dy + 4 * b), half);
  }
  return hsum8(half);
}
#pragma GCC diagnostic pop
#endif  // HWY_AVX3

inline __m256 block_q8_0(const std::uint8_t* wb, const std::uint8_t* qy,
                         float dy, __m256 acc) {
  return _mm256_fmadd_ps(
      _mm256_set1_ps(f16_at(wb) * dy),
      _mm256_cvtepi32_ps(dot_i8_quads(load256(wb + 2), load256(qy))), acc);
}
inline float dot_q8_0(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  const std::uint8_t* dy = act + nb * kQ80Bytes;  // f32 scales
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    prefetch_ahead<2 * kQ80Bytes>(w + b * kQ80Bytes);
    acc0 = block_q8_0(w + b * kQ80Bytes, act + b * kQ80Bytes + 2,
                      load_f32(dy + 4 * b), acc0);
    acc1 = block_q8_0(w + (b + 1) * kQ80Bytes, act + (b + 1) * kQ80Bytes + 2,
                      load_f32(dy + 4 * (b + 1)), acc1);
  }
  if (b < nb) {
    acc0 = block_q8_0(w + b * kQ80Bytes, act + b * kQ80Bytes + 2,
                      load_f32(dy + 4 * b), acc0);
  }
  return hsum8(_mm256_add_ps(acc0, acc1));
}

// Broadcast i16 lane j of a 128-bit half into every i16 lane.
inline __m256i broadcast_i16(__m256i both_halves, int j) {
  const auto lo = static_cast<short>(2 * j), hi = static_cast<short>(2 * j + 1);
  return _mm256_shuffle_epi8(
      both_halves, _mm256_set1_epi16(static_cast<short>(hi << 8 | lo)));
}

// acc + (-dmin x dy) x sum_j min_j x (sum of the activation's sub-block j):
// the min term of a Q4_K/Q5_K block, from Q8_K's sums of 16 paired up.
inline __m128 k4_min_term(const std::uint8_t* ab, const std::uint8_t* wb,
                          float dy, const K4Scales& s, __m128 acc) {
  const __m256i sums16 = load256(ab + kQ8KSums);
  const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(sums16),
                                        _mm256_extracti128_si256(sums16, 1));
  const __m128i mins = _mm_cvtepu8_epi16(_mm_set_epi32(
      0, 0, static_cast<int>(s.mins_hi), static_cast<int>(s.mins_lo)));
  return _mm_fmadd_ps(_mm_set1_ps(-dy * f16_at(wb + 2)),
                      _mm_cvtepi32_ps(_mm_madd_epi16(mins, sums32)), acc);
}

// The Q4_K and Q5_K kernel: `kHighBits` adds the fifth bit from qh.
template <bool kHighBits>
float dot_k4(const std::uint8_t* w, const std::uint8_t* act, std::int64_t nb) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  constexpr int kQs = kHighBits ? 48 : 16;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_min = _mm_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kBytes;
    prefetch_ahead<kBytes>(wb);
    const float dy = load_f32(ab);
    const std::uint8_t* q8 = ab + kQ8KQs;
    const float d = dy * f16_at(wb);
    const K4Scales s = unpack_k4_scales(wb + 4);
    acc_min = k4_min_term(ab, wb, dy, s, acc_min);
    const __m256i scales = _mm256_broadcastsi128_si256(
        _mm_cvtepu8_epi16(_mm_set_epi32(0, 0, static_cast<int>(s.scales_hi),
                                        static_cast<int>(s.scales_lo))));
    [[maybe_unused]] __m256i high = _mm256_setzero_si256();
    if constexpr (kHighBits) high = load256(wb + 16);
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i bits = load256(wb + kQs + 32 * p);
      __m256i lo = _mm256_and_si256(bits, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), m4);
      if constexpr (kHighBits) {
        // Bit 2p (2p + 1) of qh byte l tops up element l of sub-block 2p
        // (2p + 1): moved to bit 4 of its byte.
        const __m256i one = _mm256_set1_epi8(1);
        lo = _mm256_or_si256(
            lo, _mm256_slli_epi16(
                    _mm256_and_si256(_mm256_srli_epi16(high, 2 * p), one), 4));
        hi = _mm256_or_si256(
            hi,
            _mm256_slli_epi16(
                _mm256_and_si256(_mm256_srli_epi16(high, 2 * p + 1), one), 4));
      }
      const __m256i plo =
          _mm256_madd_epi16(broadcast_i16(scales, 2 * p),
                            _mm256_maddubs_epi16(lo, load256(q8 + 64 * p)));
      const __m256i phi = _mm256_madd_epi16(
          broadcast_i16(scales, 2 * p + 1),
          _mm256_maddubs_epi16(hi, load256(q8 + 64 * p + 32)));
      sum = _mm256_add_epi32(sum, _mm256_add_epi32(plo, phi));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sum), acc);
  }
  return hsum8(acc) + hsum4(acc_min);
}

inline float dot_q6_k(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kQ6KBytes;
    prefetch_ahead<kQ6KBytes>(wb);
    const std::uint8_t* q8 = ab + kQ8KQs;
    const float d = load_f32(ab) * f16_at(wb + 208);
    const __m128i scales8 = load128(wb + 192);
    // Codes are stored + 32: subtract 32 * sum_i scale_i * sums16_i.
    const __m256i offset =
        _mm256_slli_epi32(_mm256_madd_epi16(load256(ab + kQ8KSums),
                                            _mm256_cvtepi8_epi16(scales8)),
                          5);
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i bits1 = load256(wb + 64 * h);
      const __m256i bits2 = load256(wb + 64 * h + 32);
      const __m256i high = load256(wb + 128 + 32 * h);
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(bits1, m4),
                          _mm256_slli_epi16(_mm256_and_si256(high, m2), 4)),
          _mm256_or_si256(
              _mm256_and_si256(bits2, m4),
              _mm256_slli_epi16(
                  _mm256_and_si256(_mm256_srli_epi16(high, 2), m2), 4)),
          _mm256_or_si256(
              _mm256_and_si256(_mm256_srli_epi16(bits1, 4), m4),
              _mm256_slli_epi16(
                  _mm256_and_si256(_mm256_srli_epi16(high, 4), m2), 4)),
          _mm256_or_si256(
              _mm256_and_si256(_mm256_srli_epi16(bits2, 4), m4),
              _mm256_slli_epi16(
                  _mm256_and_si256(_mm256_srli_epi16(high, 6), m2), 4)),
      };
#pragma GCC unroll 4
      for (int t = 0; t < 4; ++t) {
        // Lanes 0-15 belong to sub-block 8h + 2t, 16-31 to the next.
        const long long first = 8 * h + 2 * t;
        const __m128i pick = _mm_set_epi64x(0x0101010101010101LL * (first + 1),
                                            0x0101010101010101LL * first);
        const __m256i scale =
            _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales8, pick));
        const __m256i products =
            _mm256_maddubs_epi16(q[t], load256(q8 + 128 * h + 32 * t));
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(scale, products));
      }
    }
    sum = _mm256_sub_epi32(sum, offset);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sum), acc);
  }
  return hsum8(acc);
}

inline float dot_iq4_xs(const std::uint8_t* w, const std::uint8_t* act,
                        std::int64_t nb) {
  const __m128i codebook = load128(quant::kIq4Codebook);
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kIq4XsBytes;
    prefetch_ahead<kIq4XsBytes>(wb);
    const std::uint8_t* q8 = ab + kQ8KQs;
    __m256i sum = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int ib = 0; ib < 8; ++ib) {
      const __m128i bits = load128(wb + 8 + 16 * ib);
      const __m256i values = _mm256_set_m128i(
          _mm_shuffle_epi8(codebook,
                           _mm_and_si128(_mm_srli_epi16(bits, 4), m4)),
          _mm_shuffle_epi8(codebook, _mm_and_si128(bits, m4)));
      const int scale = quant::iq4_xs_scale(wb, ib) - 32;
      sum = _mm256_add_epi32(
          sum, _mm256_madd_epi16(dot_i8_pairs(values, load256(q8 + 32 * ib)),
                                 _mm256_set1_epi16(static_cast<short>(scale))));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16_at(wb) * load_f32(ab)),
                          _mm256_cvtepi32_ps(sum), acc);
  }
  return hsum8(acc);
}

#if HWY_TARGET == HWY_AVX3
// ---- IQ4_XS with AVX512-VNNI: two sub-blocks to a 512-bit register ----
//
// The 256-bit kernel spends about 20 instructions on each 32-weight
// sub-block (two table lookups, the sign trick of the signed x signed
// product, a scalar decode of its scale), 1.2 per weight byte. Here a
// register holds two sub-blocks: one lookup of all 64 codes, one vpdpbusd
// for their products, one multiply by their two scales. vpdpbusd wants an
// unsigned operand, so the lookup table is the codebook + 128 (1..241) and
// the surplus 128 x sum(y) of each sub-block comes back out once per
// super-block from the activation's block sums (Q8_K's bsums). The eight
// scales are decoded together in vector registers. All of it is integer
// arithmetic, exact, up to the one f32 scale step per super-block that
// the 256-bit kernel also takes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// The eight 6-bit scales of a super-block, less 32, as i32 lanes: scale i
// is nibble i % 2 of scales_l[i / 2] with bits 2i, 2i + 1 of scales_h
// above it.
inline __m256i iq4_xs_scales(const std::uint8_t* wb) {
  const __m128i low_bytes = _mm_shuffle_epi8(
      _mm_cvtsi32_si128(static_cast<int>(load_u32(wb + 4))),
      _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, -1, -1, -1, -1, -1, -1, -1, -1));
  const __m256i low = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_cvtepu8_epi32(low_bytes),
                        _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4)),
      _mm256_set1_epi32(0xF));
  const __m256i high = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_set1_epi32(quant::load_u16(wb + 2)),
                        _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
      _mm256_set1_epi32(3));
  return _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)),
                          _mm256_set1_epi32(32));
}

// Bytes 0-31 keep their low nibbles, bytes 32-63 their high nibbles moved
// down, from the same 32 bytes in both halves.
TESSEL_AVX512_VNNI_TARGET inline __m512i split_nibbles(const std::uint8_t* qs) {
  const __m512i both = _mm512_broadcast_i64x4(load256(qs));
  return _mm512_and_si512(
      _mm512_srlv_epi64(both, _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0)),
      _mm512_set1_epi8(0x0F));
}

// Scale 2p over lanes 0-3 and 8-11 and 2p + 1 over lanes 4-7 and 12-15:
// the lanes of scaled_pair_iq4_xs<p>'s sums.
template <int p>
inline __m512i spread_scale_pair(__m512i scales) {
  constexpr int a = 2 * p, b = 2 * p + 1;
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(b, b, b, b, a, a, a, a, b, b, b, b, a, a, a, a), scales);
}

// Sub-blocks 2p and 2p + 1 times their scales, as i32 lanes.
template <int p>
TESSEL_AVX512_VNNI_TARGET inline __m512i scaled_pair_iq4_xs(
    const std::uint8_t* wb, const std::uint8_t* q8, __m512i table,
    __m512i scales) {
  // Codes of [2p lo, 2p+1 lo, 2p hi, 2p+1 hi] (16 each): the activation
  // row's [2p, 2p+1] halves in 128-bit lanes 0, 2, 1, 3.
  const __m512i biased =
      _mm512_shuffle_epi8(table, split_nibbles(wb + 8 + 32 * p));
  const __m512i y = _mm512_loadu_si512(q8 + 64 * p);
  const __m512i sums =
      _mm512_dpbusd_epi32(_mm512_setzero_si512(), biased,
                          _mm512_shuffle_i64x2(y, y, _MM_SHUFFLE(3, 1, 2, 0)));
  return _mm512_mullo_epi32(sums, spread_scale_pair<p>(scales));
}

TESSEL_AVX512_VNNI_TARGET inline float dot_iq4_xs_vnni(const std::uint8_t* w,
                                                       const std::uint8_t* act,
                                                       std::int64_t nb) {
  alignas(16) static constexpr auto kBiased = [] {
    std::array<std::uint8_t, 16> t{};
    for (int i = 0; i < 16; ++i)
      t[static_cast<std::size_t>(i)] =
          static_cast<std::uint8_t>(quant::kIq4Codebook[i] + 128);
    return t;
  }();
  const __m512i table = _mm512_broadcast_i32x4(load128(kBiased.data()));
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kIq4XsBytes;
    prefetch_ahead<kIq4XsBytes>(wb);
    const std::uint8_t* q8 = ab + kQ8KQs;
    const __m256i scales8 = iq4_xs_scales(wb);
    const __m512i scales = _mm512_castsi256_si512(scales8);
    __m512i isum = _mm512_add_epi32(
        _mm512_add_epi32(scaled_pair_iq4_xs<0>(wb, q8, table, scales),
                         scaled_pair_iq4_xs<1>(wb, q8, table, scales)),
        _mm512_add_epi32(scaled_pair_iq4_xs<2>(wb, q8, table, scales),
                         scaled_pair_iq4_xs<3>(wb, q8, table, scales)));
    // Less 128 x scale x sum(y) of each sub-block (bsums pairs).
    const __m256i sum_y =
        _mm256_madd_epi16(load256(ab + kQ8KSums), _mm256_set1_epi16(1));
    const __m256i surplus =
        _mm256_slli_epi32(_mm256_mullo_epi32(scales8, sum_y), 7);
    isum = _mm512_sub_epi32(isum, _mm512_zextsi256_si512(surplus));
    acc = _mm512_fmadd_ps(_mm512_set1_ps(f16_at(wb) * load_f32(ab)),
                          _mm512_cvtepi32_ps(isum), acc);
  }
  return _mm512_reduce_add_ps(acc);
}

// ---- Q4_K, Q5_K and Q6_K with AVX512-VNNI: 64 weights to a register ----
//
// The 256-bit kernels take two multiplies (maddubs, then madd by a scale
// broadcast with a shuffle) and the unpacking of the codes for every 32
// weights: about 60 vector instructions for a Q4_K block, which left M = 1
// compute-bound (36 GB/s on two cores in cache, 64-70 % of the DRAM
// read cold). Here one vpdpbusd sums 64 code x activation products four at a
// time into i32 lanes with no scale applied. Each lane's sum fits in i16
// (|4 x 63 x 128| < 2^15, the widest codes, Q6_K's), so two such vectors
// pack into one of i16 and a single vpdpwssd multiplies them by their
// sub-blocks' scales and accumulates. The codes are unpacked from one
// 256-bit load broadcast to both halves of the register and shifted by a
// per-half count, which puts them in the activation row's own order: no
// cross-lane shuffle. Integer sums are exact, so only the f32 steps' order
// differs from the 256-bit kernels.

// codes | (bits & kMask), where bits is `high` rotated right per qword by
// kLowShift in the lower half of the register and kHighShift in the upper.
template <int kLowShift, int kHighShift, int kMask>
TESSEL_AVX512_VNNI_TARGET inline __m512i merge_high_bits(__m512i codes,
                                                         __m512i high) {
  const __m512i rotated = _mm512_rorv_epi64(
      high, _mm512_set_epi64(kHighShift, kHighShift, kHighShift, kHighShift,
                             kLowShift, kLowShift, kLowShift, kLowShift));
  // 0xF8: a | (b & c)
  return _mm512_ternarylogic_epi32(codes, rotated, _mm512_set1_epi8(kMask),
                                   0xF8);
}

// Sub-block pair p of a Q4_K/Q5_K block, from its nibbles split
// (split_nibbles): lanes 0-7 sum sub-block 2p's products, lanes 8-15
// sub-block 2p + 1's.
template <bool kHighBits, int p>
TESSEL_AVX512_VNNI_TARGET inline __m512i pair_products_k4(
    __m512i codes, __m512i high, const std::uint8_t* q8) {
  if constexpr (kHighBits) {
    // Bit 2p (2p + 1) of qh byte l is bit 4 of element l of sub-block
    // 2p (2p + 1).
    codes =
        merge_high_bits<(2 * p - 4) & 63, (2 * p - 3) & 63, 0x10>(codes, high);
  }
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes,
                             _mm512_loadu_si512(q8 + 64 * p));
}

// One Q4_K/Q5_K block's sums of scale x code x activation as i32 lanes:
// codes[p] is sub-block pair p split (split_nibbles or its GFNI form),
// scales01 and scales23 the i16 scales of pairs 0-1 and 2-3 in
// packs_epi32's lane order.
template <bool kHighBits>
TESSEL_AVX512_VNNI_TARGET inline __m512i scaled_sums_k4(
    const std::uint8_t* wb, const __m512i (&codes)[4], const std::uint8_t* q8,
    __m512i scales01, __m512i scales23) {
  [[maybe_unused]] __m512i high = _mm512_setzero_si512();
  if constexpr (kHighBits) high = _mm512_broadcast_i64x4(load256(wb + 16));
  const __m512i isum = _mm512_dpwssd_epi32(
      _mm512_setzero_si512(),
      _mm512_packs_epi32(pair_products_k4<kHighBits, 0>(codes[0], high, q8),
                         pair_products_k4<kHighBits, 1>(codes[1], high, q8)),
      scales01);
  return _mm512_dpwssd_epi32(
      isum,
      _mm512_packs_epi32(pair_products_k4<kHighBits, 2>(codes[2], high, q8),
                         pair_products_k4<kHighBits, 3>(codes[3], high, q8)),
      scales23);
}

template <bool kHighBits>
TESSEL_AVX512_VNNI_TARGET float dot_k4_vnni(const std::uint8_t* w,
                                            const std::uint8_t* act,
                                            std::int64_t nb) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  constexpr int kQs = kHighBits ? 48 : 16;
  // packs_epi32(pair 0, pair 1) holds, in each 128-bit lane, four i32
  // sums of one pair then four of the other: [2p, 2p + 2] in lanes 0-1,
  // [2p + 1, 2p + 3] in lanes 2-3. These pick each i16 lane's scale from
  // the eight scale bytes repeated in every 64 bits (zero high bytes).
  const auto pick = [](int a, int b, int c, int d) {
    const auto s = [](int i) { return static_cast<char>(i); };
    const char z = -1;
    return _mm512_set_epi8(
        z, s(d), z, s(d), z, s(d), z, s(d), z, s(c), z, s(c), z, s(c), z, s(c),
        z, s(d), z, s(d), z, s(d), z, s(d), z, s(c), z, s(c), z, s(c), z, s(c),
        z, s(b), z, s(b), z, s(b), z, s(b), z, s(a), z, s(a), z, s(a), z, s(a),
        z, s(b), z, s(b), z, s(b), z, s(b), z, s(a), z, s(a), z, s(a), z, s(a));
  };
  const __m512i pick01 = pick(0, 2, 1, 3), pick23 = pick(4, 6, 5, 7);
  __m512 acc = _mm512_setzero_ps();
  __m128 acc_min = _mm_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kBytes;
    prefetch_ahead<kBytes>(wb);
    const float dy = load_f32(ab);
    const std::uint8_t* q8 = ab + kQ8KQs;
    const K4Scales s = unpack_k4_scales(wb + 4);
    acc_min = k4_min_term(ab, wb, dy, s, acc_min);
    const __m512i scale_bytes = _mm512_set1_epi64(static_cast<long long>(
        static_cast<std::uint64_t>(s.scales_hi) << 32 | s.scales_lo));
    const std::uint8_t* qs = wb + kQs;
    const __m512i codes[4] = {split_nibbles(qs), split_nibbles(qs + 32),
                              split_nibbles(qs + 64), split_nibbles(qs + 96)};
    const __m512i isum = scaled_sums_k4<kHighBits>(
        wb, codes, q8, _mm512_shuffle_epi8(scale_bytes, pick01),
        _mm512_shuffle_epi8(scale_bytes, pick23));
    acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * f16_at(wb)),
                          _mm512_cvtepi32_ps(isum), acc);
  }
  return _mm512_reduce_add_ps(acc) + hsum4(acc_min);
}

// ---- Q4_K and Q5_K four blocks at a time (AVX512 VNNI, VBMI and GFNI) ----
//
// dot_k4_vnni spends over half its vector uops on what is not a product:
// the 6-bit scales and mins unpacked in scalar registers and moved over,
// the min term in 128-bit steps, two f16 scales converted and broadcast,
// all once per block. llvm-mca puts it at about 40 uops on ports 0 and 5
// per 144-byte block, 20 cycles, which is the rate it runs at in L2. Here
// that work is done once for four blocks:
// - Their 16-byte heads (d, dmin, 12 scale bytes) fill the four 128-bit
//   lanes of one register. Two byte permutes and two GF(2) affine maps
//   unpack every 6-bit field into a 64-byte table (k4_scale_at,
//   k4_min_at), and one masked byte permute per sub-block pair turns it
//   into the i16 scales vpdpwssd wants.
// - The mins of the four blocks meet the activation row's sums of 32
//   codes (written with the row, kQ8KGroup*) in one vpdpwssd, scaled per
//   lane by dmin x dy.
// - d and dmin of the four are converted in one step.
// The codes' nibbles split with one affine map per 64 codes (a matrix per
// qword: keep the low nibble in the lower half, move the high one down in
// the upper) where dot_k4_vnni shifts and masks. llvm-mca: 13 cycles a
// block against 20.8. Measured (Sapphire Rapids, M = 1, 4096 wide): one
// core with the weights in L2 reads Q4_K at 28 GB/s against 20.5, but
// from DRAM both kernels read 24-27 GB/s on two cores, so only weights
// that stay in cache gain (the 160M Q4_K_M model decodes 4 % faster).
// AVX512-VBMI and GFNI come with Ice Lake and Zen 4; Cascade Lake has VNNI
// only and keeps dot_k4_vnni.
#ifndef TESSEL_AVX512_ICL_TARGET
#define TESSEL_AVX512_ICL_TARGET                                     \
  __attribute__((                                                    \
      target("avx,avx2,bmi,bmi2,fma,f16c,avx512f,avx512cd,avx512vl," \
             "avx512dq,avx512bw,avx512vnni,avx512vbmi,gfni")))
#endif

// The vgf2p8affineqb matrix under which output bit i of every byte is
// input bit from[i] (zero where from[i] < 0): row 7 - i of the 8 x 8 bit
// matrix, stored one row a byte, selects the bits whose parity is bit i.
constexpr long long bit_matrix(std::array<int, 8> from) {
  std::uint64_t m = 0;
  for (int i = 0; i < 8; ++i) {
    if (from[static_cast<std::size_t>(i)] >= 0) {
      m |= std::uint64_t{1} << from[static_cast<std::size_t>(i)]
                            << (8 * (7 - i));
    }
  }
  return static_cast<long long>(m);
}
constexpr long long kLowNibble = bit_matrix({0, 1, 2, 3, -1, -1, -1, -1});
constexpr long long kHighNibble = bit_matrix({4, 5, 6, 7, -1, -1, -1, -1});
constexpr long long kLowSix = bit_matrix({0, 1, 2, 3, 4, 5, -1, -1});
constexpr long long kTopTwoUp = bit_matrix({-1, -1, -1, -1, 6, 7, -1, -1});

// As split_nibbles, in one instruction.
TESSEL_AVX512_ICL_TARGET inline __m512i split_nibbles_gfni(
    const std::uint8_t* qs) {
  return _mm512_gf2p8affine_epi64_epi8(
      _mm512_broadcast_i64x4(load256(qs)),
      _mm512_set_epi64(kHighNibble, kHighNibble, kHighNibble, kHighNibble,
                       kLowNibble, kLowNibble, kLowNibble, kLowNibble),
      0);
}

// Where block i of a group finds scale (min) j in its field table: scales
// and mins 0-3 at 8i, 8i + 4; scales 4-7 at 32 + 4i, mins 4-7 at 48 + 4i,
// so that each qword of the table takes one affine map.
constexpr int k4_scale_at(int i, int j) {
  return j < 4 ? 8 * i + j : 32 + 4 * i + j - 4;
}
constexpr int k4_min_at(int i, int j) {
  return j < 4 ? 8 * i + 4 + j : 48 + 4 * i + j - 4;
}

template <typename T, std::size_t kN>
TESSEL_AVX512_ICL_TARGET inline __m512i load_table(
    const std::array<T, kN>& table) {
  static_assert(sizeof(T) * kN == 64);
  return _mm512_loadu_si512(table.data());
}

// Constants of the group kernel, loaded once per row.
struct K4GroupConstants {
  __m512i fields_low, fields_high;  // byte permutes of the heads
  __m512i pick[4][2];               // block i, sub-block pairs (0-3, 4-7)
  __m512i mins;                     // the mins of all four, as i16
  __m512i factors;                  // d and dmin of the four, as f16
};

// Byte b of the i16 scales of block i for packs_epi32 of pairs 2q, 2q + 1
// (pair_products_k4's lanes): 128-bit lanes 0-1 hold sub-blocks 4q and
// 4q + 2, lanes 2-3 4q + 1 and 4q + 3, four i16 each.
constexpr std::array<std::uint8_t, 64> k4_pick(int i, int q) {
  std::array<std::uint8_t, 64> index{};
  for (int word = 0; word < 32; ++word) {
    const int lane = word / 8, second = word % 8 / 4;
    const int sub = 4 * q + (lane < 2 ? 0 : 1) + 2 * second;
    index[static_cast<std::size_t>(2 * word)] =
        static_cast<std::uint8_t>(k4_scale_at(i, sub));
  }
  return index;
}

TESSEL_AVX512_ICL_TARGET inline K4GroupConstants k4_group_constants() {
  // Head byte 16i + 4 + t is scale byte t of block i.
  static constexpr auto kLow = [] {
    std::array<std::uint8_t, 64> index{};
    for (int b = 0; b < 64; ++b) {
      const int e = b % 16;
      index[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(
          b < 32 ? 16 * (b / 8) + 4 + b % 8 : 16 * (e / 4) + 12 + e % 4);
    }
    return index;
  }();
  // Bytes 32-63: the bytes whose top two bits complete scales and mins
  // 4-7 (bytes 0-31 go through a zero matrix).
  static constexpr auto kHigh = [] {
    std::array<std::uint8_t, 64> index{};
    for (int b = 32; b < 64; ++b) {
      const int e = b % 16, mins = (b - 32) / 16;
      index[static_cast<std::size_t>(b)] =
          static_cast<std::uint8_t>(16 * (e / 4) + 4 + 4 * mins + e % 4);
    }
    return index;
  }();
  static constexpr std::array<std::array<std::uint8_t, 64>, 8> kPick = {
      k4_pick(0, 0), k4_pick(0, 1), k4_pick(1, 0), k4_pick(1, 1),
      k4_pick(2, 0), k4_pick(2, 1), k4_pick(3, 0), k4_pick(3, 1)};
  static constexpr auto kMins = [] {
    std::array<std::uint8_t, 64> index{};
    for (int word = 0; word < 32; ++word) {
      index[static_cast<std::size_t>(2 * word)] =
          static_cast<std::uint8_t>(k4_min_at(word / 8, word % 8));
    }
    return index;
  }();
  // Words 0-3: d of blocks 0-3 (head word 8i), 4-7: their dmin.
  static constexpr auto kFactors = [] {
    std::array<std::int16_t, 32> index{};
    for (int w = 0; w < 8; ++w) {
      index[static_cast<std::size_t>(w)] =
          static_cast<std::int16_t>(8 * (w % 4) + w / 4);
    }
    return index;
  }();
  K4GroupConstants c{};
  c.fields_low = load_table(kLow);
  c.fields_high = load_table(kHigh);
  for (int i = 0; i < 4; ++i) {
    for (int q = 0; q < 2; ++q) {
      c.pick[i][q] = load_table(kPick[static_cast<std::size_t>(2 * i + q)]);
    }
  }
  c.mins = load_table(kMins);
  c.factors = load_table(kFactors);
  return c;
}

constexpr __mmask64 kEvenBytes = 0x5555555555555555ULL;

// acc + factor x (block i's sum of scale x code x activation products).
template <bool kHighBits, int i>
TESSEL_AVX512_ICL_TARGET HWY_INLINE __m512
block_k4_scaled(const std::uint8_t* wb, const std::uint8_t* ab, __m512i fields,
                const K4GroupConstants& c, float factor, __m512 acc) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  constexpr int kQs = kHighBits ? 48 : 16;
  // Per block, as the other kernels: the same lines asked for once per
  // group of four (before its heads) read 20 GB/s cold against 26 (M = 1,
  // 4096 x 4096, two threads), and one request per line, no repeats,
  // 22.5-24.6. From 1.25 to 3 KiB ahead read alike.
  prefetch_ahead<kBytes, 2048>(wb);
  const std::uint8_t* q8 = ab + kQ8KQs;
  const std::uint8_t* qs = wb + kQs;
  const __m512i codes[4] = {split_nibbles_gfni(qs), split_nibbles_gfni(qs + 32),
                            split_nibbles_gfni(qs + 64),
                            split_nibbles_gfni(qs + 96)};
  const __m512i isum = scaled_sums_k4<kHighBits>(
      wb, codes, q8,
      _mm512_maskz_permutexvar_epi8(kEvenBytes, c.pick[i][0], fields),
      _mm512_maskz_permutexvar_epi8(kEvenBytes, c.pick[i][1], fields));
  return _mm512_fmadd_ps(_mm512_set1_ps(factor), _mm512_cvtepi32_ps(isum), acc);
}

// Blocks 0-3 of a group (weights at w0, activation blocks at a0, the
// activation row's group extras at extra) into acc[0] and acc[1].
template <bool kHighBits>
TESSEL_AVX512_ICL_TARGET HWY_INLINE void group_k4(const std::uint8_t* w0,
                                                  const std::uint8_t* a0,
                                                  const std::uint8_t* extra,
                                                  const K4GroupConstants& c,
                                                  __m512* acc) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  __m512i heads = _mm512_castsi128_si512(load128(w0));
  heads = _mm512_inserti32x4(heads, load128(w0 + kBytes), 1);
  heads = _mm512_inserti32x4(heads, load128(w0 + 2 * kBytes), 2);
  heads = _mm512_inserti32x4(heads, load128(w0 + 3 * kBytes), 3);
  const __m512i fields = _mm512_or_si512(
      _mm512_gf2p8affine_epi64_epi8(
          _mm512_permutexvar_epi8(c.fields_low, heads),
          _mm512_set_epi64(kHighNibble, kHighNibble, kLowNibble, kLowNibble,
                           kLowSix, kLowSix, kLowSix, kLowSix),
          0),
      _mm512_gf2p8affine_epi64_epi8(
          _mm512_permutexvar_epi8(c.fields_high, heads),
          _mm512_set_epi64(kTopTwoUp, kTopTwoUp, kTopTwoUp, kTopTwoUp, 0, 0, 0,
                           0),
          0));
  // [d x dy of blocks 0-3, dmin x dy of blocks 0-3]
  const __m256 factors = _mm256_mul_ps(
      _mm256_cvtph_ps(
          _mm512_castsi512_si128(_mm512_permutexvar_epi16(c.factors, heads))),
      _mm256_loadu_ps(reinterpret_cast<const float*>(extra + kQ8KGroupScales)));
  alignas(32) float f[8];
  _mm256_store_ps(f, factors);
  // The min term: lanes 4i..4i + 3 of block i, times dmin_i x dy_i.
  const __m512i min_sums = _mm512_dpwssd_epi32(
      _mm512_setzero_si512(),
      _mm512_maskz_permutexvar_epi8(kEvenBytes, c.mins, fields),
      _mm512_loadu_si512(extra + kQ8KGroupSums));
  const __m512 dmin_dy = _mm512_permutexvar_ps(
      _mm512_set_epi32(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4),
      _mm512_castps256_ps512(factors));
  acc[1] = _mm512_fnmadd_ps(dmin_dy, _mm512_cvtepi32_ps(min_sums), acc[1]);
  acc[0] = block_k4_scaled<kHighBits, 0>(w0, a0, fields, c, f[0], acc[0]);
  acc[1] = block_k4_scaled<kHighBits, 1>(w0 + kBytes, a0 + kQ8KBytes, fields, c,
                                         f[1], acc[1]);
  acc[0] = block_k4_scaled<kHighBits, 2>(w0 + 2 * kBytes, a0 + 2 * kQ8KBytes,
                                         fields, c, f[2], acc[0]);
  acc[1] = block_k4_scaled<kHighBits, 3>(w0 + 3 * kBytes, a0 + 3 * kQ8KBytes,
                                         fields, c, f[3], acc[1]);
}

// Activation rows of kind Q8_KWithK4Groups; blocks past the last whole
// group go through dot_k4_vnni.
template <bool kHighBits>
TESSEL_AVX512_ICL_TARGET float dot_k4_groups(const std::uint8_t* w,
                                             const std::uint8_t* act,
                                             std::int64_t nb) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  const std::uint8_t* extras = act + nb * kQ8KBytes;
  const K4GroupConstants c = k4_group_constants();
  __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  const std::int64_t groups = nb / 4;
  for (std::int64_t g = 0; g < groups; ++g) {
    group_k4<kHighBits>(w + 4 * g * kBytes, act + 4 * g * kQ8KBytes,
                        extras + g * kQ8KGroupBytes, c, acc);
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1]));
  if (4 * groups < nb) {
    sum += dot_k4_vnni<kHighBits>(
        w + 4 * groups * kBytes, act + 4 * groups * kQ8KBytes, nb - 4 * groups);
  }
  return sum;
}

// Half h of a Q6_K block (128 weights): lanes 4i-4i+3 of the first vector
// sum sub-block 8h + i's products (16 weights each), of the second
// sub-block 8h + 4 + i's.
template <int h>
TESSEL_AVX512_VNNI_TARGET inline __m512i half_products_q6_k(
    const std::uint8_t* wb, const std::uint8_t* q8) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i low_bits = _mm512_loadu_si512(wb + 64 * h);
  const __m512i high = _mm512_broadcast_i64x4(load256(wb + 128 + 32 * h));
  // Weights 0-63 of the half: low nibbles, with bits 0-1 (2-3) of qh
  // byte l on top of weight l (32 + l).
  const __m512i first =
      merge_high_bits<60, 62, 0x30>(_mm512_and_si512(low_bits, m4), high);
  // Weights 64-127: high nibbles, with bits 4-5 (6-7).
  const __m512i second = merge_high_bits<0, 2, 0x30>(
      _mm512_and_si512(_mm512_srli_epi16(low_bits, 4), m4), high);
  return _mm512_packs_epi32(
      _mm512_dpbusd_epi32(_mm512_setzero_si512(), first,
                          _mm512_loadu_si512(q8 + 128 * h)),
      _mm512_dpbusd_epi32(_mm512_setzero_si512(), second,
                          _mm512_loadu_si512(q8 + 128 * h + 64)));
}

// Scale of each i16 lane of half_products_q6_k<h>: 128-bit lane i holds
// four sums of sub-block 8h + i, then four of 8h + 4 + i.
template <int h>
inline __m512i half_scales_q6_k(__m512i scales16) {
  alignas(64) static constexpr auto kIndex = [] {
    std::array<std::int16_t, 32> index{};
    for (int i = 0; i < 32; ++i) {
      index[static_cast<std::size_t>(i)] =
          static_cast<std::int16_t>(8 * h + i / 8 + (i % 8 < 4 ? 0 : 4));
    }
    return index;
  }();
  return _mm512_permutexvar_epi16(_mm512_load_si512(kIndex.data()), scales16);
}

// This kernel, the fastest per byte, reads DRAM best with the lines asked
// for half as far ahead as the others: 28-29 GB/s at 1280-1536 bytes,
// 21-25 at 2048-4096 (M = 1, 4096 x 4096, three runs each); the others
// are flat from 1792 to 3072.
constexpr int kQ6KPrefetchBytes = 1536;

TESSEL_AVX512_VNNI_TARGET inline float dot_q6_k_vnni(const std::uint8_t* w,
                                                     const std::uint8_t* act,
                                                     std::int64_t nb) {
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const std::uint8_t* wb = w + b * kQ6KBytes;
    prefetch_ahead<kQ6KBytes, kQ6KPrefetchBytes>(wb);
    const std::uint8_t* q8 = ab + kQ8KQs;
    const __m256i scales = _mm256_cvtepi8_epi16(load128(wb + 192));
    const __m512i scales16 = _mm512_castsi256_si512(scales);
    // Codes are stored + 32: the sum starts at -32 x scale x sum(y) of
    // each sub-block.
    const __m256i offset = _mm256_sub_epi32(
        _mm256_setzero_si256(),
        _mm256_slli_epi32(_mm256_madd_epi16(load256(ab + kQ8KSums), scales),
                          5));
    __m512i isum = _mm512_dpwssd_epi32(_mm512_zextsi256_si512(offset),
                                       half_products_q6_k<0>(wb, q8),
                                       half_scales_q6_k<0>(scales16));
    isum = _mm512_dpwssd_epi32(isum, half_products_q6_k<1>(wb, q8),
                               half_scales_q6_k<1>(scales16));
    acc = _mm512_fmadd_ps(_mm512_set1_ps(load_f32(ab) * f16_at(wb + 208)),
                          _mm512_cvtepi32_ps(isum), acc);
  }
  return _mm512_reduce_add_ps(acc);
}
#pragma GCC diagnostic pop
#endif  // HWY_AVX3

#else
// ---- portable kernels: the same integer sums in plain C++ ----

using quant::load_f16;
inline int i16_at(const std::uint8_t* p) {
  return static_cast<std::int16_t>(quant::load_u16(p));
}

inline float dot_q4_0(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  float sum = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* wb = w + b * kQ40Bytes;
    const std::uint8_t* ab = act + b * kQ80Bytes;
    const auto* qy = reinterpret_cast<const std::int8_t*>(ab + 2);
    int s = 0;
    for (int j = 0; j < 16; ++j) {
      s +=
          ((wb[2 + j] & 0xF) - 8) * qy[j] + ((wb[2 + j] >> 4) - 8) * qy[j + 16];
    }
    sum += static_cast<float>(s) * (load_f16(wb) * load_f16(ab));
  }
  return sum;
}

inline float dot_q8_0(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  float sum = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* wb = w + b * kQ80Bytes;
    const std::uint8_t* ab = act + b * kQ80Bytes;
    const auto* qx = reinterpret_cast<const std::int8_t*>(wb + 2);
    const auto* qy = reinterpret_cast<const std::int8_t*>(ab + 2);
    int s = 0;
    for (int j = 0; j < 32; ++j) s += qx[j] * qy[j];
    sum += static_cast<float>(s) * (load_f16(wb) * load_f16(ab));
  }
  return sum;
}

template <bool kHighBits>
float dot_k4(const std::uint8_t* w, const std::uint8_t* act, std::int64_t nb) {
  constexpr int kBytes = kHighBits ? kQ5KBytes : kQ4KBytes;
  constexpr int kQs = kHighBits ? 48 : 16;
  float sum = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* wb = w + b * kBytes;
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const auto* q8 = reinterpret_cast<const std::int8_t*>(ab + kQ8KQs);
    const K4Scales s = unpack_k4_scales(wb + 4);
    std::uint8_t scales[8], mins[8];
    std::memcpy(scales, &s.scales_lo, 4);
    std::memcpy(scales + 4, &s.scales_hi, 4);
    std::memcpy(mins, &s.mins_lo, 4);
    std::memcpy(mins + 4, &s.mins_hi, 4);
    int isum = 0, isum_min = 0;
    for (int j = 0; j < 8; ++j) {
      const std::uint8_t* q = wb + kQs + 32 * (j / 2);
      int s32 = 0;
      for (int l = 0; l < 32; ++l) {
        int code = (q[l] >> (4 * (j % 2))) & 0xF;
        if constexpr (kHighBits) code += ((wb[16 + l] >> j) & 1) << 4;
        s32 += code * q8[32 * j + l];
      }
      isum += scales[j] * s32;
      isum_min += mins[j] * (i16_at(ab + kQ8KSums + 4 * j) +
                             i16_at(ab + kQ8KSums + 4 * j + 2));
    }
    const float dy = load_f32(ab);
    sum += dy * load_f16(wb) * static_cast<float>(isum) -
           dy * load_f16(wb + 2) * static_cast<float>(isum_min);
  }
  return sum;
}

inline float dot_q6_k(const std::uint8_t* w, const std::uint8_t* act,
                      std::int64_t nb) {
  float sum = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* wb = w + b * kQ6KBytes;
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const auto* q8 = reinterpret_cast<const std::int8_t*>(ab + kQ8KQs);
    int isum = 0;
    for (int e = 0; e < 256; ++e) {
      const int h = e / 128, t = e % 128 / 32, l = e % 32;
      const int lo = (wb[64 * h + 32 * (t & 1) + l] >> (4 * (t / 2))) & 0xF;
      const int hi = (wb[128 + 32 * h + l] >> (2 * t)) & 3;
      const auto scale = static_cast<std::int8_t>(wb[192 + e / 16]);
      isum += scale * ((lo | hi << 4) - 32) * q8[e];
    }
    sum += load_f32(ab) * load_f16(wb + 208) * static_cast<float>(isum);
  }
  return sum;
}

inline float dot_iq4_xs(const std::uint8_t* w, const std::uint8_t* act,
                        std::int64_t nb) {
  float sum = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* wb = w + b * kIq4XsBytes;
    const std::uint8_t* ab = act + b * kQ8KBytes;
    const auto* q8 = reinterpret_cast<const std::int8_t*>(ab + kQ8KQs);
    int isum = 0;
    for (int ib = 0; ib < 8; ++ib) {
      const int scale = quant::iq4_xs_scale(wb, ib) - 32;
      int s32 = 0;
      for (int j = 0; j < 16; ++j) {
        const std::uint8_t byte = wb[8 + 16 * ib + j];
        s32 += quant::kIq4Codebook[byte & 0xF] * q8[32 * ib + j] +
               quant::kIq4Codebook[byte >> 4] * q8[32 * ib + 16 + j];
      }
      isum += scale * s32;
    }
    sum += load_f16(wb) * load_f32(ab) * static_cast<float>(isum);
  }
  return sum;
}

#endif

using Dot = float (*)(const std::uint8_t*, const std::uint8_t*, std::int64_t);

// One weight row at a time against every activation row while it is hot in
// L1. Interleaving two or four weight rows to share the activation loads
// measured 1.3-1.7x slower at M = 1: each row is a memory stream of its
// own, and one sequential stream per thread is what the prefetchers serve
// best.
template <Dot kDot>
void all_rows(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
              const std::uint8_t* act, std::size_t act_bytes,
              std::int64_t m_rows, std::int64_t nb, float* y,
              std::int64_t ldy) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t m = 0; m < m_rows; ++m) {
      y[m * ldy + r] = kDot(w + r * ldw, act + m * act_bytes, nb);
    }
  }
}

static void QuantDotRowsImpl(int w_dtype, const std::uint8_t* w,
                             std::size_t ldw, std::int64_t rows,
                             const std::uint8_t* act, std::size_t act_bytes,
                             std::int64_t m_rows, std::int64_t nb, float* y,
                             std::int64_t ldy) {
  switch (static_cast<DType>(w_dtype)) {
    case DType::Q4_0:
#if HWY_TARGET == HWY_AVX3
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi()) {
        return all_rows<dot_q4_0_quads>(w, ldw, rows, act, act_bytes, m_rows,
                                        nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_q4_0_vnni>(w, ldw, rows, act, act_bytes, m_rows, nb,
                                       y, ldy);
      }
#endif
      return all_rows<dot_q4_0>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::Q8_0:
      return all_rows<dot_q8_0>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::Q4_K:
#if HWY_TARGET == HWY_AVX3
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi() && cpu_has_gfni()) {
        return all_rows<dot_k4_groups<false>>(w, ldw, rows, act, act_bytes,
                                              m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_k4_vnni<false>>(w, ldw, rows, act, act_bytes,
                                            m_rows, nb, y, ldy);
      }
#endif
      return all_rows<dot_k4<false>>(w, ldw, rows, act, act_bytes, m_rows, nb,
                                     y, ldy);
    case DType::Q5_K:
#if HWY_TARGET == HWY_AVX3
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi() && cpu_has_gfni()) {
        return all_rows<dot_k4_groups<true>>(w, ldw, rows, act, act_bytes,
                                             m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_k4_vnni<true>>(w, ldw, rows, act, act_bytes, m_rows,
                                           nb, y, ldy);
      }
#endif
      return all_rows<dot_k4<true>>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                    ldy);
    case DType::Q6_K:
#if HWY_TARGET == HWY_AVX3
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_q6_k_vnni>(w, ldw, rows, act, act_bytes, m_rows, nb,
                                       y, ldy);
      }
#endif
      return all_rows<dot_q6_k>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::IQ4_XS:
#if HWY_TARGET == HWY_AVX3
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_iq4_xs_vnni>(w, ldw, rows, act, act_bytes, m_rows,
                                         nb, y, ldy);
      }
#endif
      return all_rows<dot_iq4_xs>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                  ldy);
    default: return;  // has_quant_dot is checked by the caller
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(QuantDotRowsImpl);

bool has_quant_dot(DType w) {
  switch (w) {
    case DType::Q4_0:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS: return true;
    default: return false;
  }
}

void quant_dot_rows(DType w_dtype, const std::uint8_t* w,
                    std::size_t w_row_bytes, std::int64_t rows,
                    const std::uint8_t* act, std::int64_t m_rows,
                    std::int64_t k, float* y, std::int64_t ldy) {
  const ActivationBlocks kind = dot_activation_blocks(w_dtype);
  const std::int64_t block = activation_block_values(kind);
  HWY_DYNAMIC_DISPATCH(QuantDotRowsImpl)
  (static_cast<int>(w_dtype), w, w_row_bytes, rows, act,
   activation_row_bytes(kind, k), m_rows, k / block, y, ldy);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

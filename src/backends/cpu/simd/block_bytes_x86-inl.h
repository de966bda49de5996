// Per-target helpers of the block-quantised kernels (quant_dot_simd.cpp,
// dequant_simd.cpp, quant_gemm_pack_simd.cpp) on AVX2 and up: unaligned
// loads, an f16 block scale, the 32 nibbles of a 16-byte code run, a
// Q4_K/Q5_K sub-block's codes and an IQ4_XS super-block's scales. Included
// once per target by files that use foreach_target.h, hence Highway's
// include-guard idiom.
#if defined(TESSEL_BLOCK_BYTES_X86_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef TESSEL_BLOCK_BYTES_X86_INL_H_
#undef TESSEL_BLOCK_BYTES_X86_INL_H_
#else
#define TESSEL_BLOCK_BYTES_X86_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "quant/scalars.hpp"

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#include <immintrin.h>

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

inline __m256i load256(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
inline __m128i load128(const void* p) {
  return _mm_loadu_si128(static_cast<const __m128i*>(p));
}

// The f16 at p (a block's scale) as f32: F16C, exact, NaN kept quiet.
inline float f16_at(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return _cvtsh_ss(h);
}

// The 32 codes of 16 bytes of nibbles in element order: low nibbles are
// elements 0-15 (the low half), high nibbles 16-31, as Q4_0, IQ4_NL and
// IQ4_XS store them.
inline __m256i nibbles32(const std::uint8_t* p) {
  const __m128i raw = load128(p);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw),
                          _mm256_set1_epi8(0x0F));
}

// The 32 codes of sub-block j (0-7) of a Q4_K super-block, or with
// kHighBits of a Q5_K one (the fifth bit from qh): nibble j % 2 of
// qs[32 (j / 2) + l], plus bit j of qh[l] as bit 4.
template <bool kHighBits>
inline __m256i k4_codes(const std::uint8_t* block, int j) {
  const __m256i bits = load256(block + (kHighBits ? 48 : 16) + 32 * (j / 2));
  __m256i codes = _mm256_and_si256((j & 1) ? _mm256_srli_epi16(bits, 4) : bits,
                                   _mm256_set1_epi8(0x0F));
  if constexpr (kHighBits) {
    const __m256i top = _mm256_and_si256(
        _mm256_srl_epi16(load256(block + 16), _mm_cvtsi32_si128(j)),
        _mm256_set1_epi8(1));
    codes = _mm256_or_si256(codes, _mm256_slli_epi16(top, 4));
  }
  return codes;
}

// The eight 6-bit scales of an IQ4_XS super-block, less 32, as i32 lanes:
// scale i is nibble i % 2 of scales_l[i / 2] with bits 2i, 2i + 1 of
// scales_h above it.
inline __m256i iq4_xs_scales(const std::uint8_t* wb) {
  const __m128i low_bytes = _mm_shuffle_epi8(
      _mm_cvtsi32_si128(static_cast<int>(quant::load_u32(wb + 4))),
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

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif

#endif  // TESSEL_BLOCK_BYTES_X86_INL_H_

// Compiled once per Highway target. See dequant_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/dequant_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <cstdint>
#include <cstring>

#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/dequant_simd.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// Eight floats to out (32-byte aligned when kStream): kStream writes past
// the caches, so the lines are not first read for ownership (see
// dequant_simd.hpp).
template <bool kStream>
inline void put(float* out, __m256 v) {
  if constexpr (kStream) {
    _mm256_stream_ps(out, v);
  } else {
    _mm256_storeu_ps(out, v);
  }
}

// 32 signed bytes -> 32 floats, in order: the first 16 times `first`, the
// last 16 times `second`.
template <bool kStream>
inline void store_scaled(__m256i q, __m256 first, __m256 second, float* out) {
  const __m128i lo = _mm256_castsi256_si128(q);
  const __m128i hi = _mm256_extracti128_si256(q, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi,
                            _mm_srli_si128(hi, 8)};
  for (int i = 0; i < 4; ++i) {
    put<kStream>(
        out + 8 * i,
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[i])),
                      i < 2 ? first : second));
  }
}
template <bool kStream>
inline void store_scaled(__m256i q, __m256 scale, float* out) {
  store_scaled<kStream>(q, scale, scale, out);
}

template <bool kStream>
void q4_0(const std::uint8_t* b, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i, b += 18, out += 32) {
    store_scaled<kStream>(
        _mm256_sub_epi8(nibbles32(b + 2), _mm256_set1_epi8(8)),
        _mm256_set1_ps(f16_at(b)), out);
  }
}

// The scalar codec left to the compiler ran at 53 % of the STREAM copy
// rate (20 GB/s, 0.8x ggml) while every other type here is at 85 % or more.
template <bool kStream>
void q8_0(const std::uint8_t* b, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i, b += 34, out += 32) {
    store_scaled<kStream>(load256(b + 2), _mm256_set1_ps(f16_at(b)), out);
  }
}

template <bool kStream>
void iq4_xs(const std::uint8_t* b, float* out, std::int64_t n) {
  const __m128i codebook = load128(quant::kIq4Codebook);
  for (std::int64_t i = 0; i < n; ++i, b += 136) {
    const float d = f16_at(b);
    for (int ib = 0; ib < 8; ++ib, out += 32) {
      const int ls = quant::iq4_xs_scale(b, ib);
      const __m256i codes = nibbles32(b + 8 + 16 * ib);
      const __m128i lo =
          _mm_shuffle_epi8(codebook, _mm256_castsi256_si128(codes));
      const __m128i hi =
          _mm_shuffle_epi8(codebook, _mm256_extracti128_si256(codes, 1));
      store_scaled<kStream>(_mm256_set_m128i(hi, lo),
                            _mm256_set1_ps(d * static_cast<float>(ls - 32)),
                            out);
    }
  }
}

// Element e = 128 h + 32 t + l: low 4 bits from ql[64 h + 32 (t & 1) + l]
// (shifted by 4 (t / 2)), high 2 from qh[32 h + l] >> 2 t; scale
// (8 h + 2 t + l / 16).
template <bool kStream>
void q6_k(const std::uint8_t* b, float* out, std::int64_t n) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3),
                m32 = _mm256_set1_epi8(32);
  for (std::int64_t i = 0; i < n; ++i, b += 210) {
    const float d = f16_at(b + 208);
    const auto* scales = reinterpret_cast<const std::int8_t*>(b + 192);
    for (int h = 0; h < 2; ++h) {
      const __m256i bits1 = load256(b + 64 * h);
      const __m256i bits2 = load256(b + 64 * h + 32);
      const __m256i high = load256(b + 128 + 32 * h);
      for (int t = 0; t < 4; ++t, out += 32) {
        const __m256i low_bits = (t & 1) ? bits2 : bits1;
        const __m256i low = _mm256_and_si256(
            t >= 2 ? _mm256_srli_epi16(low_bits, 4) : low_bits, m4);
        const __m256i top = _mm256_slli_epi16(
            _mm256_and_si256(_mm256_srli_epi16(high, 2 * t), m2), 4);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, top), m32);
        // Two sub-blocks of 16, each with its own scale.
        store_scaled<kStream>(
            q, _mm256_set1_ps(d * static_cast<float>(scales[8 * h + 2 * t])),
            _mm256_set1_ps(d * static_cast<float>(scales[8 * h + 2 * t + 1])),
            out);
      }
    }
  }
}

// 32 unsigned codes -> dl * code - ml, in order: the scalar codec's two
// roundings (this file is compiled without FMA contraction).
template <bool kStream>
inline void store_affine(__m256i q, __m256 dl, __m256 ml, float* out) {
  const __m128i lo = _mm256_castsi256_si128(q);
  const __m128i hi = _mm256_extracti128_si256(q, 1);
  const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi,
                            _mm_srli_si128(hi, 8)};
  for (int i = 0; i < 4; ++i) {
    const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(parts[i]));
    put<kStream>(out + 8 * i, _mm256_sub_ps(_mm256_mul_ps(dl, v), ml));
  }
}

// Q4_K and Q5_K (kHighBits: the fifth bit from qh): sub-block j's codes are
// nibble j % 2 of qs[32 (j / 2) + l], its scale and min the table's pair j.
template <bool kHighBits, bool kStream>
void k4(const std::uint8_t* b, float* out, std::int64_t n) {
  constexpr int kBytes = kHighBits ? 176 : 144;
  for (std::int64_t i = 0; i < n; ++i, b += kBytes) {
    const float d = f16_at(b), dmin = f16_at(b + 2);
    const quant::K4Scales s = quant::unpack_k4_scales(b + 4);
    const std::uint32_t scales[2] = {s.scales_lo, s.scales_hi};
    const std::uint32_t mins[2] = {s.mins_lo, s.mins_hi};
    for (int j = 0; j < 8; ++j, out += 32) {
      const int shift = 8 * (j % 4);
      store_affine<kStream>(
          k4_codes<kHighBits>(b, j),
          _mm256_set1_ps(d *
                         static_cast<float>((scales[j / 4] >> shift) & 0xFF)),
          _mm256_set1_ps(dmin *
                         static_cast<float>((mins[j / 4] >> shift) & 0xFF)),
          out);
    }
  }
}

template <bool kStream>
bool dequantize(DType type, const std::uint8_t* blocks, float* out,
                std::int64_t nblocks) {
  switch (type) {
    case DType::Q4_0: return q4_0<kStream>(blocks, out, nblocks), true;
    case DType::Q8_0: return q8_0<kStream>(blocks, out, nblocks), true;
    case DType::IQ4_XS: return iq4_xs<kStream>(blocks, out, nblocks), true;
    case DType::Q6_K: return q6_k<kStream>(blocks, out, nblocks), true;
    case DType::Q4_K: return k4<false, kStream>(blocks, out, nblocks), true;
    case DType::Q5_K: return k4<true, kStream>(blocks, out, nblocks), true;
    default: return false;
  }
}

static bool DequantizeImpl(int type, const std::uint8_t* blocks, float* out,
                           std::int64_t nblocks, bool stream) {
  const auto t = static_cast<DType>(type);
  if (!stream || reinterpret_cast<std::uintptr_t>(out) % 32 != 0) {
    return dequantize<false>(t, blocks, out, nblocks);
  }
  const bool done = dequantize<true>(t, blocks, out, nblocks);
  // Streamed stores are weakly ordered: drained before the pool's join
  // hands the floats to another thread.
  _mm_sfence();
  return done;
}
#else
static bool DequantizeImpl(int, const std::uint8_t*, float*, std::int64_t,
                           bool) {
  return false;  // the scalar codecs serve these targets
}
#endif

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(DequantizeImpl);

bool dequantize_blocks_simd(DType type, const std::uint8_t* blocks, float* out,
                            std::int64_t nblocks, bool stream) {
  return HWY_DYNAMIC_DISPATCH(DequantizeImpl)(static_cast<int>(type), blocks,
                                              out, nblocks, stream);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

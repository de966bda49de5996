// Compiled once per Highway target. See quant_gemm_simd.hpp for the
// contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_gemm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "backends/cpu/simd/quant_gemm_simd.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

// What the packed form of each weight type is. Guarded: foreach_target.h
// includes this file once per target.
#ifndef TESSEL_QUANT_GEMM_LAYOUT
#define TESSEL_QUANT_GEMM_LAYOUT
namespace tessel::cpu::simd::gemm {

// A tile of R rows (8, or 16 with 512-bit VNNI) is, per group of `group`
// weights along k: group / 4 registers of R x 4 code bytes (register t:
// bytes 4r..4r+3 are row r's codes 4t..4t+3), then the rows' f32 group
// scales, then R 32-bit extras: the K-quants' f32 group mins, or, where
// signed codes meet biased activations, the i32 sums of the row's codes.
struct Layout {
  int group;          // weights per group: 32, or Q6_K's 16-weight sub-blocks
  bool signed_codes;  // i8 codes (Q8_0, IQ4_XS), else u8
  int zero_point;     // subtracted from u8 codes: Q4_0's 8, Q6_K's 32
  bool has_min;       // Q4_K/Q5_K: value = scale * code - min
  // Unsigned codes without VNNI: how many u8 x i8 pair products an i16
  // lane may sum before it could overflow (code max x 127 x 2 per
  // product, 32767 in all).
  int i16_depth;
  int act_block;  // weights under one activation scale: Q8_0's 32, Q8_K's 256
};

constexpr Layout layout_of(DType w) {
  switch (w) {
    case DType::Q4_0: return {32, false, 8, false, 8, 32};  // 15: 8 x 3810
    case DType::Q8_0: return {32, true, 0, false, 1, 32};
    case DType::Q4_K: return {32, false, 0, true, 8, 256};    // 15: 8 x 3810
    case DType::Q5_K: return {32, false, 0, true, 4, 256};    // 31: 4 x 7874
    case DType::Q6_K: return {16, false, 32, false, 2, 256};  // 63: 2 x 16002
    case DType::IQ4_XS: return {32, true, 0, false, 1, 256};
    default: return {32, false, 0, false, 1, 32};
  }
}

constexpr std::size_t codes_bytes(const Layout& l, int rows) {
  return static_cast<std::size_t>(rows * l.group);
}
constexpr std::size_t group_bytes(const Layout& l, int rows) {
  return codes_bytes(l, rows) + static_cast<std::size_t>(8 * rows);
}

// After an activation row's codes, per group: the f32 scale of its block,
// then what the weight type needs of the group's code sum, ready to use:
// zero_point x sum as i32 (Q4_0, Q6_K), or the sum as f32 for the min term
// (Q4_K, Q5_K); unused otherwise.
constexpr std::size_t kActGroupBytes = 8;

// Row `row`'s codes 32 c .. 32 c + 31 in element order (one group, or two
// of Q6_K's), as the tile stores them: u8 codes, or IQ4_XS's and Q8_0's i8
// values.
inline void row_codes32(DType w, const std::uint8_t* row, std::int64_t c,
                        std::uint8_t* out) {
  switch (w) {
    case DType::Q4_0: {
      const std::uint8_t* q = row + c * 18 + 2;
      for (int j = 0; j < 16; ++j) {
        out[j] = q[j] & 0xF;
        out[j + 16] = q[j] >> 4;
      }
      return;
    }
    case DType::Q8_0: std::memcpy(out, row + c * 34 + 2, 32); return;
    case DType::Q4_K:
    case DType::Q5_K: {
      const bool five = w == DType::Q5_K;
      const std::uint8_t* b = row + c / 8 * (five ? 176 : 144);
      const int j = static_cast<int>(c % 8);
      const std::uint8_t* q = b + (five ? 48 : 16) + 32 * (j / 2);
      for (int l = 0; l < 32; ++l) {
        int code = (q[l] >> (4 * (j % 2))) & 0xF;
        if (five) code |= ((b[16 + l] >> j) & 1) << 4;
        out[l] = static_cast<std::uint8_t>(code);
      }
      return;
    }
    case DType::Q6_K: {
      // Elements 32 t + l of half h: low 4 bits from ql, high 2 from qh.
      const std::uint8_t* b = row + c / 8 * 210;
      const int h = static_cast<int>(c % 8) / 4, t = static_cast<int>(c % 4);
      for (int l = 0; l < 32; ++l) {
        const int lo = (b[64 * h + 32 * (t & 1) + l] >> (4 * (t / 2))) & 0xF;
        const int hi = (b[128 + 32 * h + l] >> (2 * t)) & 3;
        out[l] = static_cast<std::uint8_t>(lo | hi << 4);
      }
      return;
    }
    case DType::IQ4_XS: {
      const std::uint8_t* q = row + c / 8 * 136 + 8 + 16 * (c % 8);
      for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<std::uint8_t>(quant::kIq4Codebook[q[j] & 0xF]);
        out[j + 16] = static_cast<std::uint8_t>(quant::kIq4Codebook[q[j] >> 4]);
      }
      return;
    }
    default: std::memset(out, 0, 32); return;
  }
}

// Stores row r's group scales (and mins) into every group of an R-row tile.
// Each block's scalars are decoded once for all its groups.
inline void store_row_scales(DType w, const Layout& l, int tile_rows,
                             const std::uint8_t* row, std::int64_t k, int r,
                             std::uint8_t* tile) {
  const std::size_t gb = group_bytes(l, tile_rows);
  std::uint8_t* scale = tile + codes_bytes(l, tile_rows) + 4 * r;
  std::uint8_t* extra = scale + 4 * tile_rows;
  auto put = [&](std::int64_t g, float v, float min) {
    std::memcpy(scale + g * gb, &v, 4);
    if (l.has_min) std::memcpy(extra + g * gb, &min, 4);
  };
  using quant::load_f16;
  switch (w) {
    case DType::Q4_0:
    case DType::Q8_0: {
      const int bytes = w == DType::Q4_0 ? 18 : 34;
      for (std::int64_t g = 0; g < k / 32; ++g) {
        put(g, load_f16(row + g * bytes), 0);
      }
      return;
    }
    case DType::Q4_K:
    case DType::Q5_K: {
      const int bytes = w == DType::Q5_K ? 176 : 144;
      for (std::int64_t b = 0; b < k / 256; ++b) {
        const std::uint8_t* blk = row + b * bytes;
        const float d = load_f16(blk), dmin = load_f16(blk + 2);
        const quant::K4Scales s = quant::unpack_k4_scales(blk + 4);
        for (int j = 0; j < 8; ++j) {
          const int shift = 8 * (j % 4);
          const std::uint32_t sc = j < 4 ? s.scales_lo : s.scales_hi;
          const std::uint32_t mn = j < 4 ? s.mins_lo : s.mins_hi;
          put(8 * b + j, d * static_cast<float>((sc >> shift) & 0xFF),
              dmin * static_cast<float>((mn >> shift) & 0xFF));
        }
      }
      return;
    }
    case DType::Q6_K:
      for (std::int64_t b = 0; b < k / 256; ++b) {
        const std::uint8_t* blk = row + b * 210;
        const float d = load_f16(blk + 208);
        for (int j = 0; j < 16; ++j) {
          put(16 * b + j,
              d * static_cast<float>(static_cast<std::int8_t>(blk[192 + j])),
              0);
        }
      }
      return;
    case DType::IQ4_XS:
      for (std::int64_t b = 0; b < k / 256; ++b) {
        const std::uint8_t* blk = row + b * 136;
        const float d = load_f16(blk);
        for (int j = 0; j < 8; ++j) {
          put(8 * b + j,
              d * static_cast<float>(quant::iq4_xs_scale(blk, j) - 32), 0);
        }
      }
      return;
    default: return;
  }
}

}  // namespace tessel::cpu::simd::gemm
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

using gemm::Layout;
using quant::load_f32;

inline std::int32_t load_i32(const std::uint8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2

// ---- packing: eight rows' codes transposed into 32-bit lanes ----

// Row `row`'s codes 32 c .. 32 c + 31 (row_codes32) in one register.
template <DType kW>
inline __m256i row_codes(const std::uint8_t* row, std::int64_t c) {
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  if constexpr (kW == DType::Q4_0) {
    return nibbles32(row + c * 18 + 2);
  } else if constexpr (kW == DType::Q8_0) {
    return load256(row + c * 34 + 2);
  } else if constexpr (kW == DType::Q4_K || kW == DType::Q5_K) {
    constexpr bool kFive = kW == DType::Q5_K;
    const std::uint8_t* b = row + c / 8 * (kFive ? 176 : 144);
    const int j = static_cast<int>(c % 8);
    const __m256i bits = load256(b + (kFive ? 48 : 16) + 32 * (j / 2));
    __m256i codes =
        _mm256_and_si256((j & 1) ? _mm256_srli_epi16(bits, 4) : bits, m4);
    if constexpr (kFive) {
      const __m256i high = _mm256_and_si256(
          _mm256_srl_epi16(load256(b + 16), _mm_cvtsi32_si128(j)),
          _mm256_set1_epi8(1));
      codes = _mm256_or_si256(codes, _mm256_slli_epi16(high, 4));
    }
    return codes;
  } else if constexpr (kW == DType::Q6_K) {
    const std::uint8_t* b = row + c / 8 * 210;
    const int h = static_cast<int>(c % 8) / 4, t = static_cast<int>(c % 4);
    const __m256i lo =
        _mm256_and_si256(_mm256_srl_epi16(load256(b + 64 * h + 32 * (t & 1)),
                                          _mm_cvtsi32_si128(4 * (t / 2))),
                         m4);
    const __m256i hi = _mm256_and_si256(
        _mm256_srl_epi16(load256(b + 128 + 32 * h), _mm_cvtsi32_si128(2 * t)),
        _mm256_set1_epi8(3));
    return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4));
  } else {
    const __m256i codebook =
        _mm256_broadcastsi128_si256(load128(quant::kIq4Codebook));
    return _mm256_shuffle_epi8(codebook,
                               nibbles32(row + c / 8 * 136 + 8 + 16 * (c % 8)));
  }
}

// Bytes of a row holding 32 weights.
template <DType kW>
constexpr std::int64_t bytes_per_32() {
  switch (kW) {
    case DType::Q4_0: return 18;
    case DType::Q8_0: return 34;
    case DType::Q4_K: return 144 / 8;
    case DType::Q5_K: return 176 / 8;
    case DType::Q6_K: return 210 / 8;
    default: return 136 / 8;  // IQ4_XS
  }
}

// Eight rows' registers of 8 x 4 code bytes -> eight registers whose lane
// r is row r's four bytes: an 8 x 8 transpose of 32-bit elements.
inline void transpose8x8_epi32(__m256i* v) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
    v[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
  }
}

// kRows (8 or 16) rows into a tile, eight rows per transpose. kCodeSums:
// store each row's group code sums as the extras (signed codes under the
// 512-bit kernel, whose activations are biased).
template <DType kW, int kRows, bool kCodeSums>
void pack_tile(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
               std::int64_t k, std::uint8_t* tile) {
  constexpr Layout kL = gemm::layout_of(kW);
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, kRows);
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, kRows);
  constexpr std::int64_t kBytesPer32 = bytes_per_32<kW>();
  for (std::int64_t c = 0; c < k / 32; ++c) {
    // 32 codes are one group, or two of 16.
    std::uint8_t* first = tile + c * (32 / kL.group) * kGroupBytes;
    for (int half = 0; half < kRows / 8; ++half) {
      __m256i v[8];
      for (int r = 0; r < 8; ++r) {
        const int row = 8 * half + r;
        if (row < rows) {
          // Each row is its own stream from memory: ask ahead for it (as
          // the dot kernels do).
          _mm_prefetch(reinterpret_cast<const char*>(w + row * ldw +
                                                     (c + 16) * kBytesPer32),
                       _MM_HINT_T0);
        }
        v[r] = row < rows ? row_codes<kW>(w + row * ldw, c)
                          : _mm256_setzero_si256();
      }
      transpose8x8_epi32(v);
      if constexpr (kCodeSums) {
        // Lane r of every register holds four of row r's codes: |sums| of
        // pairs <= 256, of sixteen <= 2048, so i16 lanes hold the total.
        const __m256i ones8 = _mm256_set1_epi8(1);
        __m256i sum16 = _mm256_maddubs_epi16(ones8, v[0]);
        for (int t = 1; t < 8; ++t) {
          sum16 = _mm256_add_epi16(sum16, _mm256_maddubs_epi16(ones8, v[t]));
        }
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(first + kCodes + 4 * kRows + 32 * half),
            _mm256_madd_epi16(sum16, _mm256_set1_epi16(1)));
      }
      for (int t = 0; t < 8; ++t) {
        std::uint8_t* reg = kL.group == 32 ? first + 4 * kRows * t
                                           : first + (t / 4) * kGroupBytes +
                                                 4 * kRows * (t % 4);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg + 32 * half), v[t]);
      }
    }
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    gemm::store_row_scales(kW, kL, kRows, w + r * ldw, k, static_cast<int>(r),
                           tile);
  }
}

inline __m256i broadcast4(const std::uint8_t* p) {
  return _mm256_set1_epi32(load_i32(p));
}

// ---- 256-bit kernel: 8 weight rows x up to 4 activation rows ----

// The f32 step of group g for kMr activation rows: isum[i] (eight rows'
// integer sums) less the code offset, times each row's group scale, less
// the K-quants' min term, into part[i]; the activation block's scale
// multiplies part once per block (span_end).
template <Layout kL, int kMr>
HWY_INLINE void add_group8(const std::uint8_t* tg,
                           const std::uint8_t* const* side, __m256i* isum,
                           __m256* part) {
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, 8);
  const __m256 scale =
      _mm256_loadu_ps(reinterpret_cast<const float*>(tg + kCodes));
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i) {
    if constexpr (kL.zero_point != 0) {
      isum[i] =
          _mm256_sub_epi32(isum[i], _mm256_set1_epi32(load_i32(side[i] + 4)));
    }
    part[i] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(isum[i]), part[i]);
    if constexpr (kL.has_min) {
      const __m256 min =
          _mm256_loadu_ps(reinterpret_cast<const float*>(tg + kCodes + 32));
      part[i] =
          _mm256_fnmadd_ps(_mm256_set1_ps(load_f32(side[i] + 4)), min, part[i]);
    }
  }
}

// kMr activation rows (a[i] their codes, then their group tables) against
// one 8-row tile, all groups; acc[i] lane r accumulates y[i][r]. The u8 x i8
// pair products go through i16 lanes: unsigned codes sum kL.i16_depth
// registers there before widening; signed ones multiply |w| by a with w's
// sign (exact: |a| <= 127, |w| <= 128).
template <Layout kL, int kMr>
void tile_rows8(const std::uint8_t* tile, const std::uint8_t* const* a,
                std::int64_t groups, __m256* acc) {
  constexpr int kRegs = kL.group / 4;
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, 8);
  const __m256i ones16 = _mm256_set1_epi16(1);
  constexpr int kSpan = kL.act_block / kL.group;  // groups per act. scale
  const std::int64_t k = groups * kL.group;
  __m256 part[kMr];
  for (int i = 0; i < kMr; ++i) part[i] = _mm256_setzero_ps();
  for (std::int64_t g = 0; g < groups; ++g) {
    if (g % kSpan == 0) {
      for (int i = 0; i < kMr; ++i) part[i] = _mm256_setzero_ps();
    }
    const std::uint8_t* tg = tile + g * kGroupBytes;
    const std::uint8_t* ag[kMr];
    const std::uint8_t* side[kMr];
    for (int i = 0; i < kMr; ++i) {
      ag[i] = a[i] + g * kL.group;
      side[i] = a[i] + k + g * gemm::kActGroupBytes;
    }
    __m256i isum[kMr];
    for (int i = 0; i < kMr; ++i) isum[i] = _mm256_setzero_si256();
    if constexpr (kL.signed_codes) {
#pragma GCC unroll 8
      for (int t = 0; t < kRegs; ++t) {
        const __m256i w = load256(tg + 32 * t);
        const __m256i aw = _mm256_sign_epi8(w, w);
#pragma GCC unroll 4
        for (int i = 0; i < kMr; ++i) {
          const __m256i p = _mm256_maddubs_epi16(
              aw, _mm256_sign_epi8(broadcast4(ag[i] + 4 * t), w));
          isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(p, ones16));
        }
      }
    } else {
#pragma GCC unroll 8
      for (int t0 = 0; t0 < kRegs; t0 += kL.i16_depth) {
        __m256i p[kMr];
        for (int i = 0; i < kMr; ++i) p[i] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int t = t0; t < t0 + kL.i16_depth && t < kRegs; ++t) {
          const __m256i w = load256(tg + 32 * t);
#pragma GCC unroll 4
          for (int i = 0; i < kMr; ++i) {
            p[i] = _mm256_add_epi16(
                p[i], _mm256_maddubs_epi16(w, broadcast4(ag[i] + 4 * t)));
          }
        }
        for (int i = 0; i < kMr; ++i) {
          isum[i] = _mm256_add_epi32(isum[i], _mm256_madd_epi16(p[i], ones16));
        }
      }
    }
    add_group8<kL, kMr>(tg, side, isum, part);
    if (g % kSpan == kSpan - 1) {
      for (int i = 0; i < kMr; ++i) {
        acc[i] =
            _mm256_fmadd_ps(_mm256_set1_ps(load_f32(side[i])), part[i], acc[i]);
      }
    }
  }
}

template <Layout kL>
void gemm_tile8(const std::uint8_t* tile, std::int64_t rows,
                const std::uint8_t* act, std::size_t act_bytes,
                std::int64_t m_rows, std::int64_t k, float* y,
                std::int64_t ldy) {
  constexpr int kMaxMr = 4;  // 4 x (sums, products, accumulators) + codes
  const std::int64_t groups = k / kL.group;
  for (std::int64_t m0 = 0; m0 < m_rows; m0 += kMaxMr) {
    const std::int64_t mr = std::min<std::int64_t>(kMaxMr, m_rows - m0);
    const std::uint8_t* a[kMaxMr];
    for (int i = 0; i < kMaxMr; ++i) {
      a[i] = act +
             static_cast<std::size_t>(m0 + std::min<std::int64_t>(i, mr - 1)) *
                 act_bytes;
    }
    __m256 acc[kMaxMr];
    for (__m256& v : acc) v = _mm256_setzero_ps();
    switch (mr) {
      case 4: tile_rows8<kL, 4>(tile, a, groups, acc); break;
      case 3: tile_rows8<kL, 3>(tile, a, groups, acc); break;
      case 2: tile_rows8<kL, 2>(tile, a, groups, acc); break;
      default: tile_rows8<kL, 1>(tile, a, groups, acc); break;
    }
    for (std::int64_t i = 0; i < mr; ++i) {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, acc[i]);
      std::copy(lanes, lanes + rows, y + (m0 + i) * ldy);
    }
  }
}

#if HWY_TARGET == HWY_AVX3
// ---- 512-bit VNNI kernel: 16 weight rows x up to 8 activation rows ----
//
// AVX512-VNNI (Ice Lake, Sapphire Rapids, Zen 4; Highway's AVX3 target does
// not assume it, so it is checked at run time) takes four u8 x i8 products
// straight into an i32 lane, twice the work per instruction of the 256-bit
// kernel and no i16 step to overflow. Its unsigned operand is the weight
// code, or, for signed codes, the activation biased by 128: the bias
// comes back out as 128 x the row's code sum, stored in the tile.
#define TESSEL_GEMM_ZMM 1
// GCC 12's _mm512_cvtepi32_ps reads an "undefined" register it then warns
// about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

inline bool has_vnni() {
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni;
}

template <Layout kL, int kMr>
__attribute__((target("avx512vnni"))) void tile_rows16(
    const std::uint8_t* tile, const std::uint8_t* const* a, std::int64_t groups,
    __m512* acc) {
  constexpr int kRegs = kL.group / 4;
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, 16);
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, 16);
  // Groups under one activation scale: a Q8_K block spans 8 or 16, whose
  // scaled sums gather in `part` before the one multiply by it.
  constexpr int kSpan = kL.act_block / kL.group;
  static_assert(kSpan >= 1 && kL.act_block % kL.group == 0);
  const std::int64_t k = groups * kL.group;
  for (std::int64_t g0 = 0; g0 < groups; g0 += kSpan) {
    __m512 part[kMr];
    for (int i = 0; i < kMr; ++i) part[i] = _mm512_setzero_ps();
    for (std::int64_t g = g0; g < g0 + kSpan; ++g) {
      const std::uint8_t* tg = tile + g * kGroupBytes;
      const std::uint8_t* ag[kMr];
      for (int i = 0; i < kMr; ++i) ag[i] = a[i] + g * kL.group;
      __m512i isum[kMr];
      for (int i = 0; i < kMr; ++i) isum[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int t = 0; t < kRegs; ++t) {
        const __m512i w = _mm512_loadu_si512(tg + 64 * t);
#pragma GCC unroll 8
        for (int i = 0; i < kMr; ++i) {
          const __m512i ab = _mm512_set1_epi32(load_i32(ag[i] + 4 * t));
          isum[i] = kL.signed_codes ? _mm512_dpbusd_epi32(isum[i], ab, w)
                                    : _mm512_dpbusd_epi32(isum[i], w, ab);
        }
      }
      const __m512 scale = _mm512_loadu_ps(tg + kCodes);
      [[maybe_unused]] __m512i bias;
      if constexpr (kL.signed_codes) {
        bias = _mm512_slli_epi32(_mm512_loadu_si512(tg + kCodes + 64), 7);
      }
#pragma GCC unroll 8
      for (int i = 0; i < kMr; ++i) {
        // One instruction each: the side table's value broadcast from
        // memory.
        const std::uint8_t* sum = a[i] + k + g * gemm::kActGroupBytes + 4;
        if constexpr (kL.zero_point != 0) {
          isum[i] = _mm512_sub_epi32(isum[i], _mm512_set1_epi32(load_i32(sum)));
        }
        if constexpr (kL.signed_codes) {
          isum[i] = _mm512_sub_epi32(isum[i], bias);
        }
        part[i] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(isum[i]), part[i]);
        if constexpr (kL.has_min) {
          part[i] =
              _mm512_fnmadd_ps(_mm512_set1_ps(load_f32(sum)),
                               _mm512_loadu_ps(tg + kCodes + 64), part[i]);
        }
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      const float dy = load_f32(a[i] + k + g0 * gemm::kActGroupBytes);
      acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(dy), part[i], acc[i]);
    }
  }
}

template <Layout kL>
void gemm_tile16(const std::uint8_t* tile, std::int64_t rows,
                 const std::uint8_t* act, std::size_t act_bytes,
                 std::int64_t m_rows, std::int64_t k, float* y,
                 std::int64_t ldy) {
  constexpr int kMaxMr = 8;  // 8 x (sums, accumulators) of 32 registers
  const std::int64_t groups = k / kL.group;
  for (std::int64_t m0 = 0; m0 < m_rows; m0 += kMaxMr) {
    const std::int64_t mr = std::min<std::int64_t>(kMaxMr, m_rows - m0);
    const std::uint8_t* a[kMaxMr];
    for (int i = 0; i < kMaxMr; ++i) {
      a[i] = act +
             static_cast<std::size_t>(m0 + std::min<std::int64_t>(i, mr - 1)) *
                 act_bytes;
    }
    __m512 acc[kMaxMr];
    for (__m512& v : acc) v = _mm512_setzero_ps();
    switch (mr) {
      case 8: tile_rows16<kL, 8>(tile, a, groups, acc); break;
      case 7: tile_rows16<kL, 7>(tile, a, groups, acc); break;
      case 6: tile_rows16<kL, 6>(tile, a, groups, acc); break;
      case 5: tile_rows16<kL, 5>(tile, a, groups, acc); break;
      case 4: tile_rows16<kL, 4>(tile, a, groups, acc); break;
      case 3: tile_rows16<kL, 3>(tile, a, groups, acc); break;
      case 2: tile_rows16<kL, 2>(tile, a, groups, acc); break;
      default: tile_rows16<kL, 1>(tile, a, groups, acc); break;
    }
    for (std::int64_t i = 0; i < mr; ++i) {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, acc[i]);
      std::copy(lanes, lanes + rows, y + (m0 + i) * ldy);
    }
  }
}
#pragma GCC diagnostic pop
#endif  // HWY_AVX3

// Rows per tile on this CPU: 16 where the 512-bit VNNI kernel runs.
inline int tile_rows() {
#ifdef TESSEL_GEMM_ZMM
  if (has_vnni()) return 16;
#endif
  return 8;
}

template <DType kW>
void pack(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
          std::int64_t k, std::uint8_t* tile) {
#ifdef TESSEL_GEMM_ZMM
  if (tile_rows() == 16) {
    return pack_tile<kW, 16, gemm::layout_of(kW).signed_codes>(w, ldw, rows, k,
                                                               tile);
  }
#endif
  pack_tile<kW, 8, false>(w, ldw, rows, k, tile);
}

template <Layout kL>
void gemm_tile(const std::uint8_t* tile, std::int64_t rows,
               const std::uint8_t* act, std::size_t act_bytes,
               std::int64_t m_rows, std::int64_t k, float* y,
               std::int64_t ldy) {
#ifdef TESSEL_GEMM_ZMM
  if (tile_rows() == 16) {
    return gemm_tile16<kL>(tile, rows, act, act_bytes, m_rows, k, y, ldy);
  }
#endif
  gemm_tile8<kL>(tile, rows, act, act_bytes, m_rows, k, y, ldy);
}

// Whether signed codes meet activations biased by 128 (the 512-bit kernel).
inline bool biased_activations(const Layout& l) {
  return l.signed_codes && tile_rows() == 16;
}

#else
// ---- portable: 8-row tiles, the same integer sums and f32 steps ----

inline int tile_rows() { return 8; }
inline bool biased_activations(const Layout&) { return false; }

template <DType kW>
void pack(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
          std::int64_t k, std::uint8_t* tile) {
  constexpr Layout kL = gemm::layout_of(kW);
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, 8);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* row = w + r * ldw;
    for (std::int64_t c = 0; c < k / 32; ++c) {
      std::uint8_t codes[32];
      gemm::row_codes32(kW, row, c, codes);
      for (int q = 0; q < 8; ++q) {
        const std::int64_t g = (32 * c + 4 * q) / kL.group;
        const int t = (32 * c + 4 * q) % kL.group / 4;
        std::memcpy(tile + g * kGroupBytes + 32 * t + 4 * r, codes + 4 * q, 4);
      }
    }
    gemm::store_row_scales(kW, kL, 8, row, k, static_cast<int>(r), tile);
  }
}

template <Layout kL>
void gemm_tile(const std::uint8_t* tile, std::int64_t rows,
               const std::uint8_t* act, std::size_t act_bytes,
               std::int64_t m_rows, std::int64_t k, float* y,
               std::int64_t ldy) {
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, 8);
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, 8);
  const std::int64_t groups = k / kL.group;
  for (std::int64_t m = 0; m < m_rows; ++m) {
    const std::uint8_t* a = act + static_cast<std::size_t>(m) * act_bytes;
    const auto* codes = reinterpret_cast<const std::int8_t*>(a);
    for (std::int64_t r = 0; r < rows; ++r) {
      float acc = 0;
      for (std::int64_t g = 0; g < groups; ++g) {
        const std::uint8_t* tg = tile + g * kGroupBytes;
        std::int32_t isum = 0;
        for (int e = 0; e < kL.group; ++e) {
          const std::uint8_t byte = tg[32 * (e / 4) + 4 * r + e % 4];
          const int w = kL.signed_codes ? static_cast<std::int8_t>(byte)
                                        : static_cast<int>(byte);
          isum += w * codes[g * kL.group + e];
        }
        const std::uint8_t* side = a + k + g * gemm::kActGroupBytes;
        const float dy = load_f32(side);
        if constexpr (kL.zero_point != 0) isum -= load_i32(side + 4);
        acc += dy * load_f32(tg + kCodes + 4 * r) * static_cast<float>(isum);
        if constexpr (kL.has_min) {
          acc -= dy * load_f32(side + 4) * load_f32(tg + kCodes + 32 + 4 * r);
        }
      }
      y[m * ldy + r] = acc;
    }
  }
}

#endif

static std::int64_t GemmTileRowsImpl() { return tile_rows(); }

static void PackGemmTileImpl(int w_dtype, const std::uint8_t* w,
                             std::size_t ldw, std::int64_t rows, std::int64_t k,
                             std::uint8_t* tile) {
  const auto type = static_cast<DType>(w_dtype);
  // Padding rows are zero codes and scales, so zero outputs.
  if (rows < tile_rows()) {
    std::memset(tile, 0,
                static_cast<std::size_t>(k / gemm::layout_of(type).group) *
                    gemm::group_bytes(gemm::layout_of(type), tile_rows()));
  }
  switch (type) {
#define TESSEL_PACK_CASE(T) \
  case DType::T: return pack<DType::T>(w, ldw, rows, k, tile);
    TESSEL_PACK_CASE(Q4_0)
    TESSEL_PACK_CASE(Q8_0)
    TESSEL_PACK_CASE(Q4_K)
    TESSEL_PACK_CASE(Q5_K)
    TESSEL_PACK_CASE(Q6_K)
    TESSEL_PACK_CASE(IQ4_XS)
#undef TESSEL_PACK_CASE
    default: return;
  }
}

// Activation rows from quantize_activations -> the GEMM's form: codes
// (biased by 128 where biased_activations), then per group the block's f32
// scale and its code sum as the type uses it (kActGroupBytes).
static void PrepareGemmActivationsImpl(int w_dtype, const std::uint8_t* act,
                                       std::int64_t rows, std::int64_t k,
                                       std::uint8_t* out) {
  const auto type = static_cast<DType>(w_dtype);
  const Layout l = gemm::layout_of(type);
  const bool biased = biased_activations(l);
  const ActivationBlocks kind = activation_blocks(type);
  const std::size_t in_bytes = activation_row_bytes(kind, k);
  const std::size_t out_bytes =
      static_cast<std::size_t>(k) +
      static_cast<std::size_t>(k / l.group) * gemm::kActGroupBytes;
  const bool q8_0 = kind == ActivationBlocks::Q8_0;
  const std::int64_t block = q8_0 ? 32 : 256, nb = k / block;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* in = act + static_cast<std::size_t>(r) * in_bytes;
    std::uint8_t* o = out + static_cast<std::size_t>(r) * out_bytes;
    for (std::int64_t b = 0; b < nb; ++b) {
      // Q8_0 rows: 34-byte blocks, then the f32 scales; Q8_K: f32 d, codes.
      const std::uint8_t* codes = q8_0 ? in + b * 34 + 2 : in + b * 292 + 4;
      const float d =
          q8_0 ? load_f32(in + nb * 34 + 4 * b) : load_f32(in + b * 292);
      for (std::int64_t g = b * block / l.group; g < (b + 1) * block / l.group;
           ++g) {
        const auto* q = reinterpret_cast<const std::int8_t*>(
            codes + (g * l.group - b * block));
        std::int32_t sum = 0;
        for (int e = 0; e < l.group; ++e) sum += q[e];
        std::uint8_t* side = o + k + g * gemm::kActGroupBytes;
        std::memcpy(side, &d, 4);
        if (l.has_min) {
          const auto f = static_cast<float>(sum);
          std::memcpy(side + 4, &f, 4);
        } else {
          const std::int32_t offset = l.zero_point * sum;
          std::memcpy(side + 4, &offset, 4);
        }
      }
      std::uint8_t* dst = o + b * block;
      for (std::int64_t e = 0; e < block; ++e) {
        dst[e] = biased ? static_cast<std::uint8_t>(codes[e] ^ 0x80) : codes[e];
      }
    }
  }
}

static void QuantGemmTileImpl(int w_dtype, const std::uint8_t* tile,
                              std::int64_t rows, const std::uint8_t* act,
                              std::size_t act_bytes, std::int64_t m_rows,
                              std::int64_t k, float* y, std::int64_t ldy) {
  switch (static_cast<DType>(w_dtype)) {
#define TESSEL_GEMM_CASE(T)                                                 \
  case DType::T:                                                            \
    return gemm_tile<gemm::layout_of(DType::T)>(tile, rows, act, act_bytes, \
                                                m_rows, k, y, ldy);
    TESSEL_GEMM_CASE(Q4_0)
    TESSEL_GEMM_CASE(Q8_0)
    TESSEL_GEMM_CASE(Q4_K)
    TESSEL_GEMM_CASE(Q5_K)
    TESSEL_GEMM_CASE(Q6_K)
    TESSEL_GEMM_CASE(IQ4_XS)
#undef TESSEL_GEMM_CASE
    default: return;  // has_quant_gemm is checked by the caller
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(GemmTileRowsImpl);
HWY_EXPORT(PackGemmTileImpl);
HWY_EXPORT(PrepareGemmActivationsImpl);
HWY_EXPORT(QuantGemmTileImpl);

bool has_quant_gemm(DType w) { return has_quant_dot(w); }

std::int64_t gemm_tile_rows() {
  return HWY_DYNAMIC_DISPATCH(GemmTileRowsImpl)();
}

std::size_t gemm_tile_bytes(DType w, std::int64_t k) {
  const gemm::Layout l = gemm::layout_of(w);
  return static_cast<std::size_t>(k / l.group) *
         gemm::group_bytes(l, static_cast<int>(gemm_tile_rows()));
}

void pack_gemm_tile(DType w_dtype, const std::uint8_t* w, std::size_t ldw,
                    std::int64_t rows, std::int64_t k, std::uint8_t* tile) {
  HWY_DYNAMIC_DISPATCH(PackGemmTileImpl)
  (static_cast<int>(w_dtype), w, ldw, rows, k, tile);
}

std::size_t gemm_activation_row_bytes(DType w, std::int64_t k) {
  const gemm::Layout l = gemm::layout_of(w);
  return static_cast<std::size_t>(k) +
         static_cast<std::size_t>(k / l.group) * gemm::kActGroupBytes;
}

void prepare_gemm_activations(DType w_dtype, const std::uint8_t* act,
                              std::int64_t rows, std::int64_t k,
                              std::uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(PrepareGemmActivationsImpl)
  (static_cast<int>(w_dtype), act, rows, k, out);
}

void quant_gemm_tile(DType w_dtype, const std::uint8_t* tile, std::int64_t rows,
                     const std::uint8_t* act, std::int64_t m_rows,
                     std::int64_t k, float* y, std::int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(QuantGemmTileImpl)
  (static_cast<int>(w_dtype), tile, rows, act,
   gemm_activation_row_bytes(w_dtype, k), m_rows, k, y, ldy);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

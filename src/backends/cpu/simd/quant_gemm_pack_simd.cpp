// Compiled once per Highway target: the packer of the integer GEMM's weight
// tiles (quant_gemm_layout.hpp says what a tile holds, quant_gemm_simd.hpp
// the contract).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_gemm_pack_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "backends/cpu/simd/address_ahead.hpp"
#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/quant_gemm_layout.hpp"
#include "backends/cpu/simd/quant_gemm_simd.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

using gemm::Layout;

constexpr int tile_rows() {
  return gemm::tile_rows_for(HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2);
}

// Whether this target packs for the 256-bit kernel: 8-row tiles, one or
// two a unit, each written whole, padding rows included.
inline bool packs_8row_tiles() {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return !gemm::vnni512_kernel(TESSEL_HWY_TARGET_AVX512);
#else
  return false;
#endif
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
    return k4_codes<kFive>(row + c / 8 * (kFive ? 176 : 144),
                           static_cast<int>(c % 8));
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

// Bytes of a row holding 32 weights (Q6_K's 26.25 rounded down: where to
// prefetch).
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

// Whether the type's scales come in 256-weight super-blocks, which
// pack_block_scales stores eight rows at a time; Q4_0's and Q8_0's one
// f16 per 32 weights go through pack_block_scales32, eight rows a block.
template <DType kW>
constexpr bool kSuperBlockScales = kW == DType::Q4_K || kW == DType::Q5_K ||
                                   kW == DType::Q6_K || kW == DType::IQ4_XS;

// Block c's f16 scales of eight rows starting at w (`rows` of them real,
// the rest zero) as f32 into half `half` of the group's slot: one
// widening for the eight. Decoding them row by row in scalar code with a
// 4-byte store each was two fifths of packing a Q4_0 tile.
template <DType kW, int kRows>
void pack_block_scales32(const std::uint8_t* w, std::size_t ldw,
                         std::int64_t rows, std::int64_t c, int half,
                         std::uint8_t* tile) {
  static_assert(kW == DType::Q4_0 || kW == DType::Q8_0,
                "the f16 scale first in each 32-weight block");
  constexpr Layout kL = gemm::layout_of(kW);
  // Inserted into a register: eight u16 stores to an array then one
  // 16-byte load of it stalled on the store forwarding, as the partial
  // tile's form below still does (one tile in a product).
  __m128i h = _mm_setzero_si128();
  const std::uint8_t* scale = w + c * bytes_per_32<kW>();
  const auto real = static_cast<int>(std::clamp<std::int64_t>(rows, 0, 8));
  if (real == 8) {
    h = _mm_setr_epi16(static_cast<short>(quant::load_u16(scale)),
                       static_cast<short>(quant::load_u16(scale + ldw)),
                       static_cast<short>(quant::load_u16(scale + 2 * ldw)),
                       static_cast<short>(quant::load_u16(scale + 3 * ldw)),
                       static_cast<short>(quant::load_u16(scale + 4 * ldw)),
                       static_cast<short>(quant::load_u16(scale + 5 * ldw)),
                       static_cast<short>(quant::load_u16(scale + 6 * ldw)),
                       static_cast<short>(quant::load_u16(scale + 7 * ldw)));
  } else {
    alignas(16) std::uint16_t part[8] = {};
    for (int r = 0; r < real; ++r) part[r] = quant::load_u16(scale + r * ldw);
    h = _mm_load_si128(reinterpret_cast<const __m128i*>(part));
  }
  _mm256_storeu_ps(
      reinterpret_cast<float*>(tile + c * gemm::group_bytes(kL, kRows) +
                               gemm::codes_bytes(kL, kRows) + 32 * half),
      _mm256_cvtph_ps(h));
}

// One row's super-block `blk` as f32: its eight sub-block scales (set
// `set` of Q6_K's sixteen) and the K-quants' eight mins, each the product
// store_row_scales forms.
template <DType kW>
inline void block_scales8(const std::uint8_t* blk, int set, __m256* scale,
                          __m256* min) {
  if constexpr (kW == DType::Q4_K || kW == DType::Q5_K) {
    const quant::K4Scales s = quant::unpack_k4_scales(blk + 4);
    const auto widen = [](std::uint32_t lo, std::uint32_t hi) {
      return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
          _mm_set_epi32(0, 0, static_cast<int>(hi), static_cast<int>(lo))));
    };
    *scale = _mm256_mul_ps(_mm256_set1_ps(f16_at(blk)),
                           widen(s.scales_lo, s.scales_hi));
    *min = _mm256_mul_ps(_mm256_set1_ps(f16_at(blk + 2)),
                         widen(s.mins_lo, s.mins_hi));
  } else if constexpr (kW == DType::Q6_K) {
    const __m128i q =
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 192 + 8 * set));
    *scale = _mm256_mul_ps(_mm256_set1_ps(f16_at(blk + 208)),
                           _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)));
  } else {
    *scale = _mm256_mul_ps(_mm256_set1_ps(f16_at(blk)),
                           _mm256_cvtepi32_ps(iq4_xs_scales(blk)));
  }
}

// Super-block b's scales (and mins) of eight rows starting at w (`rows`
// of them real, the rest zero) into half `half` of their groups' slots:
// each row's eight decoded together, then one transpose puts lane r of
// group g's slot at row r. Decoding a row's scales one at a time in
// scalar code cost a third of the packing.
template <DType kW, int kRows>
void pack_block_scales(const std::uint8_t* w, std::size_t ldw,
                       std::int64_t rows, std::int64_t b, int half,
                       std::uint8_t* tile) {
  constexpr Layout kL = gemm::layout_of(kW);
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, kRows);
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, kRows);
  constexpr std::int64_t kBlockBytes =
      kW == DType::Q6_K ? 210 : 8 * bytes_per_32<kW>();
  constexpr int kSets = 256 / kL.group / 8;  // Q6_K: two sets of eight
  for (int set = 0; set < kSets; ++set) {
    __m256i scale[8], min[8];
    for (int r = 0; r < 8; ++r) {
      __m256 s = _mm256_setzero_ps(), m = _mm256_setzero_ps();
      if (r < rows) {
        block_scales8<kW>(w + r * ldw + b * kBlockBytes, set, &s, &m);
      }
      scale[r] = _mm256_castps_si256(s);
      min[r] = _mm256_castps_si256(m);
    }
    transpose8x8_epi32(scale);
    if constexpr (kL.has_min) transpose8x8_epi32(min);
    for (int j = 0; j < 8; ++j) {
      std::uint8_t* slot = tile + (b * kSets * 8 + set * 8 + j) * kGroupBytes +
                           kCodes + 32 * half;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot), scale[j]);
      if constexpr (kL.has_min) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(slot + 4 * kRows),
                            min[j]);
      }
    }
  }
}

// kRows (8 or 16) rows into a tile, eight rows per transpose. kBiasCodes:
// store signed codes plus 128 as u8 (the 512-bit kernel's unsigned
// operand; the activations' side table takes the 128 x their sum back out).
template <DType kW, int kRows, bool kBiasCodes>
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
        if (row < rows && (kBytesPer32 > 32 || c % 2 == 0)) {
          // Each row is its own stream from memory: ask ahead for it (as
          // the dot kernels do), once per 64 bytes or less.
          _mm_prefetch(address_ahead(w + row * ldw, (c + 16) * kBytesPer32),
                       _MM_HINT_T0);
        }
        v[r] = row < rows ? row_codes<kW>(w + row * ldw, c)
                          : _mm256_setzero_si256();
      }
      transpose8x8_epi32(v);
      if constexpr (kBiasCodes) {
        for (int t = 0; t < 8; ++t) {
          v[t] = _mm256_xor_si256(v[t], _mm256_set1_epi8(-128));
        }
      }
      for (int t = 0; t < 8; ++t) {
        std::uint8_t* reg = kL.group == 32 ? first + 4 * kRows * t
                                           : first + (t / 4) * kGroupBytes +
                                                 4 * kRows * (t % 4);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(reg + 32 * half), v[t]);
      }
      if constexpr (kSuperBlockScales<kW>) {
        if (c % 8 == 0) {
          pack_block_scales<kW, kRows>(w + 8 * half * ldw, ldw, rows - 8 * half,
                                       c / 8, half, tile);
        }
      } else if (rows > 8 * half) {  // else the tile's zeros stand
        pack_block_scales32<kW, kRows>(w + 8 * half * ldw, ldw, rows - 8 * half,
                                       c, half, tile);
      }
    }
  }
}

template <DType kW>
void pack(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
          std::int64_t k, std::uint8_t* tile) {
  static_assert(tile_rows() == 16);
  constexpr Layout kL = gemm::layout_of(kW);
  if (!packs_8row_tiles()) {
    return pack_tile<kW, 16, kL.signed_codes>(w, ldw, rows, k, tile);
  }
  // Two tiles, one after the other, where gemm_tile_rows allows two.
  HWY_DASSERT(rows <= 8 || gemm::pairs_tiles(kL));
  pack_tile<kW, 8, false>(w, ldw, std::min<std::int64_t>(rows, 8), k, tile);
  if (rows > 8) {
    pack_tile<kW, 8, false>(w + 8 * ldw, ldw, rows - 8, k,
                            tile + gemm::tile_bytes(kL, 8, k));
  }
}

#else
// ---- portable: 8-row tiles from the scalar decoding ----

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
#endif

static std::int64_t GemmTileRowsImpl(int w_dtype, std::int64_t m_rows) {
  if (packs_8row_tiles() &&
      (m_rows < gemm::kPairMinRows ||
       !gemm::pairs_tiles(gemm::layout_of(static_cast<DType>(w_dtype))))) {
    return 8;
  }
  return tile_rows();
}

static void PackGemmTileImpl(int w_dtype, const std::uint8_t* w,
                             std::size_t ldw, std::int64_t rows, std::int64_t k,
                             std::uint8_t* tile) {
  const auto type = static_cast<DType>(w_dtype);
  // Padding rows are zero codes and scales, so zero outputs. The 512-bit
  // kernel's half of no rows and the portable packer's padding rows are
  // not written, so zeroed first.
  if (rows < tile_rows() && !packs_8row_tiles()) {
    std::memset(tile, 0,
                gemm::tile_bytes(gemm::layout_of(type), tile_rows(), k));
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

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(GemmTileRowsImpl);
HWY_EXPORT(PackGemmTileImpl);

std::int64_t gemm_tile_rows(DType w, std::int64_t m_rows) {
  return HWY_DYNAMIC_DISPATCH(GemmTileRowsImpl)(static_cast<int>(w), m_rows);
}

std::size_t gemm_tile_bytes(DType w, std::int64_t k) {
  return gemm::tile_bytes(
      gemm::layout_of(w),
      static_cast<int>(gemm_tile_rows(w, gemm::kPairMinRows)), k);
}

void pack_gemm_tile(DType w_dtype, const std::uint8_t* w, std::size_t ldw,
                    std::int64_t rows, std::int64_t k, std::uint8_t* tile) {
  HWY_DYNAMIC_DISPATCH(PackGemmTileImpl)
  (static_cast<int>(w_dtype), w, ldw, rows, k, tile);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

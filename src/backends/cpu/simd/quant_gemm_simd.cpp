// Compiled once per Highway target: the integer GEMM's kernels and its
// activation rows. See quant_gemm_simd.hpp for the contract,
// quant_gemm_layout.hpp for the tiles (packed by quant_gemm_pack_simd.cpp).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_gemm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/quant_dot_layout.hpp"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "backends/cpu/simd/quant_gemm_layout.hpp"
#include "backends/cpu/simd/quant_gemm_simd.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
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

inline __m256i broadcast4(const std::uint8_t* p) {
  return _mm256_set1_epi32(load_i32(p));
}

// Calls f(std::integral_constant<int, mr>) for the run-time mr in
// [1, kMax]: the kernels take their row count as a template argument.
template <int kMax, class F>
void with_rows(std::int64_t mr, F&& f) {
  if constexpr (kMax > 1) {
    if (mr < kMax) return with_rows<kMax - 1>(mr, f);
  }
  f(std::integral_constant<int, kMax>{});
}

// The activation rows kMaxMr at a time through step(kMr, rows' codes,
// accumulators); accumulator i * kParts + h then holds activation row i's
// outputs for the tile's rows kLanes h onward, of which the first `rows`
// in all are stored. A short last step repeats its last row's pointer.
template <int kMaxMr, int kParts, class Vec, class Step>
void activation_steps(const std::uint8_t* act, std::size_t act_bytes,
                      std::int64_t m_rows, std::int64_t rows, float* y,
                      std::int64_t ldy, Step&& step) {
  constexpr std::int64_t kLanes = sizeof(Vec) / sizeof(float);
  for (std::int64_t m0 = 0; m0 < m_rows; m0 += kMaxMr) {
    const std::int64_t mr = std::min<std::int64_t>(kMaxMr, m_rows - m0);
    const std::uint8_t* a[kMaxMr];
    for (int i = 0; i < kMaxMr; ++i) {
      a[i] = act +
             static_cast<std::size_t>(m0 + std::min<std::int64_t>(i, mr - 1)) *
                 act_bytes;
    }
    Vec acc[kParts * kMaxMr] = {};
    with_rows<kMaxMr>(mr, [&](auto kMr) { step(kMr, a, acc); });
    for (int h = 0; h < kParts; ++h) {
      const std::int64_t part_rows = std::min(kLanes, rows - kLanes * h);
      for (std::int64_t i = 0; i < mr; ++i) {
        float* out = y + (m0 + i) * ldy + kLanes * h;
        const Vec& v = acc[i * kParts + h];
        // A whole register is one vector store; a copy of a run length
        // known only at run time is a call to memmove (4.4 % of a 160M
        // Q4_K_M prompt's samples went to those calls).
        if (part_rows == kLanes) {
          std::memcpy(out, &v, sizeof(Vec));
          continue;
        }
        float lanes[kLanes];
        std::memcpy(lanes, &v, sizeof(Vec));
        std::copy(lanes, lanes + part_rows, out);
      }
    }
  }
}

// ---- 256-bit kernel: 8-row tiles, one or two at once ----
//
// A register holds eight rows of one tile. Two tiles against two
// activation rows at a time make each broadcast feed two products and read
// each activation row's codes once per 16 weight rows; one against four
// reads the tile's codes half as often (gemm::kPairMinRows says which
// pays). With everything in L1 the two forms run alike: the u8 x i8
// products and their i16 sums bind both.

// v stays in a register here and its chain keeps its order. Without it GCC
// reassociates a group's 32 products into a tree, computing them all
// before the first add: 16 live registers more than AVX2 has, spilled and
// reloaded every group, which made the loads the kernel's bound.
HWY_INLINE void pin(__m256i& v) { asm("" : "+x"(v)); }

// The f32 step of group g for kMr activation rows and kTiles tiles:
// isum[i * kTiles + h] (eight rows' integer sums) less the code offset, times
// each row's group scale, less the K-quants' min term, into part; the
// activation block's scale multiplies part once per block (span_end).
template <Layout kL, int kMr, int kTiles>
HWY_INLINE void add_group8(const std::uint8_t* const* tg,
                           const std::uint8_t* const* side, __m256i* isum,
                           __m256* part) {
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, 8);
#pragma GCC unroll 4
  for (int i = 0; i < kMr; ++i) {
#pragma GCC unroll 2
    for (int h = 0; h < kTiles; ++h) {
      const int j = i * kTiles + h;
      const __m256 scale =
          _mm256_loadu_ps(reinterpret_cast<const float*>(tg[h] + kCodes));
      if constexpr (kL.zero_point != 0) {
        isum[j] =
            _mm256_sub_epi32(isum[j], _mm256_set1_epi32(load_i32(side[i] + 4)));
      }
      part[j] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(isum[j]), part[j]);
      if constexpr (kL.has_min) {
        const __m256 min = _mm256_loadu_ps(
            reinterpret_cast<const float*>(tg[h] + kCodes + 32));
        part[j] = _mm256_fnmadd_ps(_mm256_set1_ps(load_f32(side[i] + 4)), min,
                                   part[j]);
      }
    }
  }
}

// kMr activation rows (a[i] their codes, then their group tables) against
// kTiles 8-row tiles (tile h at tile + h * tile_bytes), all groups;
// acc[i * kTiles + h] lane r accumulates y[i][8 h + r]. The u8 x i8 pair
// products go through i16 lanes: unsigned codes sum kL.i16_depth registers
// there before widening; signed ones multiply |w| by a with w's sign (exact:
// |a| <= 127, |w| <= 128).
template <Layout kL, int kMr, int kTiles>
void tile_rows8(const std::uint8_t* tile, std::size_t tile_bytes,
                const std::uint8_t* const* a, std::int64_t groups,
                __m256* acc) {
  constexpr int kRegs = kL.group / 4;
  constexpr int kAcc = kTiles * kMr;
  constexpr std::size_t kGroupBytes = gemm::group_bytes(kL, 8);
  const __m256i ones16 = _mm256_set1_epi16(1);
  constexpr int kSpan = kL.act_block / kL.group;  // groups per act. scale
  const std::int64_t k = groups * kL.group;
  // Local, so they live in registers: stores through acc could alias.
  __m256 sum[kAcc], part[kAcc];
  for (int j = 0; j < kAcc; ++j) {
    sum[j] = acc[j];
    part[j] = _mm256_setzero_ps();
  }
  for (std::int64_t g = 0; g < groups; ++g) {
    if (g % kSpan == 0) {
      for (int j = 0; j < kAcc; ++j) part[j] = _mm256_setzero_ps();
    }
    const std::uint8_t* tg[kTiles];
    for (int h = 0; h < kTiles; ++h) {
      tg[h] = tile + h * tile_bytes + g * kGroupBytes;
    }
    const std::uint8_t* ag[kMr];
    const std::uint8_t* side[kMr];
    for (int i = 0; i < kMr; ++i) {
      ag[i] = a[i] + g * kL.group;
      side[i] = a[i] + k + g * gemm::kActGroupBytes;
    }
    __m256i isum[kAcc];
    for (int j = 0; j < kAcc; ++j) isum[j] = _mm256_setzero_si256();
    if constexpr (kL.signed_codes) {
#pragma GCC unroll 8
      for (int t = 0; t < kRegs; ++t) {
        __m256i w[kTiles], aw[kTiles];
        for (int h = 0; h < kTiles; ++h) {
          w[h] = load256(tg[h] + 32 * t);
          aw[h] = _mm256_sign_epi8(w[h], w[h]);
        }
#pragma GCC unroll 4
        for (int i = 0; i < kMr; ++i) {
          const __m256i b = broadcast4(ag[i] + 4 * t);
          for (int h = 0; h < kTiles; ++h) {
            const int j = i * kTiles + h;
            const __m256i p =
                _mm256_maddubs_epi16(aw[h], _mm256_sign_epi8(b, w[h]));
            isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p, ones16));
            pin(isum[j]);
          }
        }
      }
    } else {
#pragma GCC unroll 8
      for (int t0 = 0; t0 < kRegs; t0 += kL.i16_depth) {
        __m256i p[kAcc];
        for (int j = 0; j < kAcc; ++j) p[j] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int t = t0; t < t0 + kL.i16_depth && t < kRegs; ++t) {
          __m256i w[kTiles];
          for (int h = 0; h < kTiles; ++h) {
            w[h] = load256(tg[h] + 32 * t);
          }
#pragma GCC unroll 4
          for (int i = 0; i < kMr; ++i) {
            const __m256i b = broadcast4(ag[i] + 4 * t);
            for (int h = 0; h < kTiles; ++h) {
              const int j = i * kTiles + h;
              p[j] = _mm256_add_epi16(p[j], _mm256_maddubs_epi16(w[h], b));
              pin(p[j]);
            }
          }
        }
        for (int j = 0; j < kAcc; ++j) {
          isum[j] = _mm256_add_epi32(isum[j], _mm256_madd_epi16(p[j], ones16));
        }
      }
    }
    add_group8<kL, kMr, kTiles>(tg, side, isum, part);
    if (g % kSpan == kSpan - 1) {
      for (int i = 0; i < kMr; ++i) {
        const __m256 dy = _mm256_set1_ps(load_f32(side[i]));
        for (int h = 0; h < kTiles; ++h) {
          const int j = i * kTiles + h;
          sum[j] = _mm256_fmadd_ps(dy, part[j], sum[j]);
        }
      }
    }
  }
  for (int j = 0; j < kAcc; ++j) acc[j] = sum[j];
}

template <Layout kL>
void gemm_tile8(const std::uint8_t* tile, std::int64_t rows,
                const std::uint8_t* act, std::size_t act_bytes,
                std::int64_t m_rows, std::int64_t k, float* y,
                std::int64_t ldy) {
  const std::size_t tile_bytes = gemm::tile_bytes(kL, 8, k);
  const auto step = [&](auto tiles) {
    constexpr int kTiles = decltype(tiles)::value;
    // kTiles x 4 / kTiles x (sums, products, accumulators) + codes: the 16
    // registers.
    activation_steps<4 / kTiles, kTiles, __m256>(
        act, act_bytes, m_rows, rows, y, ldy,
        [&](auto kMr, const std::uint8_t* const* a, __m256* acc) {
          tile_rows8<kL, decltype(kMr)::value, kTiles>(tile, tile_bytes, a,
                                                       k / kL.group, acc);
        });
  };
  // More than eight rows are two tiles (gemm_tile_rows).
  HWY_DASSERT(rows <= 8 || gemm::pairs_tiles(kL));
  if constexpr (gemm::pairs_tiles(kL)) {
    if (rows > 8) return step(std::integral_constant<int, 2>{});
  }
  step(std::integral_constant<int, 1>{});
}

#if TESSEL_HWY_TARGET_AVX512
// ---- 512-bit VNNI kernel: 16 weight rows x up to 8 activation rows ----
//
// AVX512-VNNI (Ice Lake, Sapphire Rapids, Zen 4; Highway's AVX3 target does
// not assume it, so it is checked at run time) takes four u8 x i8 products
// straight into an i32 lane, twice the work per instruction of the 256-bit
// kernel and no i16 step to overflow. Its unsigned operand is the weight
// code; signed codes are packed plus 128, and the surplus 128 x sum(a)
// comes back out of the activation's side table as a zero point's does.
// (Biasing the activations instead needs each weight row's code sums,
// which cost the packer more than the codes themselves.)
//
// GCC 12's _mm512_cvtepi32_ps reads an "undefined" register it then warns
// about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The scale steps of group g for one activation row, shared by the VNNI
// and AMX kernels so that they give the same bits: the row's 16 i32 sums
// (lane r: weight row r) less the code offset, times the weight rows'
// group scales (scale), less the K-quants' min term, into the row's
// block partial. `side` is the row's side-table entry for the group
// (kActGroupBytes: its block's scale, then the code sum as the type uses
// it), loaded as one broadcast from memory per use.
template <Layout kL>
TESSEL_AVX512_VNNI_TARGET __attribute__((always_inline)) inline __m512
add_group16(__m512i isum, const std::uint8_t* side, const std::uint8_t* tg,
            __m512 scale, __m512 part) {
  constexpr std::size_t kCodes = gemm::codes_bytes(kL, 16);
  if constexpr (kL.zero_point != 0 || kL.signed_codes) {
    isum = _mm512_sub_epi32(isum, _mm512_set1_epi32(load_i32(side + 4)));
  }
  part = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(isum), part);
  if constexpr (kL.has_min) {
    part = _mm512_fnmadd_ps(_mm512_set1_ps(load_f32(side + 4)),
                            _mm512_loadu_ps(tg + kCodes + 64), part);
  }
  return part;
}

// The end of an activation block (kL.act_block / kL.group groups): its
// scale, from the side entry of its first group, times the partial.
TESSEL_AVX512_VNNI_TARGET __attribute__((always_inline)) inline __m512
close_block16(const std::uint8_t* first_side, __m512 part, __m512 acc) {
  return _mm512_fmadd_ps(_mm512_set1_ps(load_f32(first_side)), part, acc);
}

template <Layout kL, int kMr>
TESSEL_AVX512_VNNI_TARGET void tile_rows16(const std::uint8_t* tile,
                                           const std::uint8_t* const* a,
                                           std::int64_t groups, __m512* acc) {
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
          isum[i] = _mm512_dpbusd_epi32(
              isum[i], w, _mm512_set1_epi32(load_i32(ag[i] + 4 * t)));
        }
      }
      const __m512 scale = _mm512_loadu_ps(tg + kCodes);
#pragma GCC unroll 8
      for (int i = 0; i < kMr; ++i) {
        part[i] = add_group16<kL>(isum[i], a[i] + k + g * gemm::kActGroupBytes,
                                  tg, scale, part[i]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < kMr; ++i) {
      acc[i] =
          close_block16(a[i] + k + g0 * gemm::kActGroupBytes, part[i], acc[i]);
    }
  }
}

#define TESSEL_QUANT_GEMM_SIMD_PART
#include "backends/cpu/simd/quant_gemm_amx.inc"
#undef TESSEL_QUANT_GEMM_SIMD_PART

template <Layout kL>
void gemm_tile16(const std::uint8_t* tile, std::int64_t rows,
                 const std::uint8_t* act, std::size_t act_bytes,
                 std::int64_t m_rows, std::int64_t k, float* y,
                 std::int64_t ldy) {
  std::int64_t done = 0;
#if TESSEL_AMX_KERNEL
  if constexpr (amx_layout(kL)) {
    if (takes_amx_tiles(kL, m_rows)) {
      done = m_rows / 16 * 16;
      amx_rows16<kL>(tile, rows, act, act_bytes, done, k, y, ldy);
    }
  }
#endif
  if (done == m_rows) return;
  // 8 x (sums, partials, accumulators) of the 32 registers.
  activation_steps<8, 1, __m512>(
      act + static_cast<std::size_t>(done) * act_bytes, act_bytes,
      m_rows - done, rows, y + done * ldy, ldy,
      [&](auto kMr, const std::uint8_t* const* a, __m512* acc) {
        tile_rows16<kL, decltype(kMr)::value>(tile, a, k / kL.group, acc);
      });
}

#pragma GCC diagnostic pop
#endif  // TESSEL_HWY_TARGET_AVX512

inline bool vnni512_kernel() {
  return gemm::vnni512_kernel(TESSEL_HWY_TARGET_AVX512);
}

template <Layout kL>
void gemm_tile(const std::uint8_t* tile, std::int64_t rows,
               const std::uint8_t* act, std::size_t act_bytes,
               std::int64_t m_rows, std::int64_t k, float* y,
               std::int64_t ldy) {
#if TESSEL_HWY_TARGET_AVX512
  if (vnni512_kernel()) {
    return gemm_tile16<kL>(tile, rows, act, act_bytes, m_rows, k, y, ldy);
  }
#endif
  gemm_tile8<kL>(tile, rows, act, act_bytes, m_rows, k, y, ldy);
}

// The zero point the kernel takes back out of a group's sum: signed codes
// are packed plus 128 for the 512-bit kernel.
inline int kernel_zero_point(const Layout& l) {
  return l.signed_codes && vnni512_kernel() ? 128 : l.zero_point;
}

#else
// ---- portable: 8-row tiles, the same integer sums and f32 steps ----

inline int kernel_zero_point(const Layout& l) { return l.zero_point; }

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

// Activation rows from quantize_activations -> the GEMM's form: codes,
// then per group the block's f32 scale and its code sum as the type uses
// it (kActGroupBytes).
static void PrepareGemmActivationsImpl(int w_dtype, const std::uint8_t* act,
                                       std::int64_t rows, std::int64_t k,
                                       std::uint8_t* out) {
  const auto type = static_cast<DType>(w_dtype);
  const Layout l = gemm::layout_of(type);
  const int zero_point = kernel_zero_point(l);
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
      // Q8_0 rows: blocks, then the f32 scales; Q8_K: f32 d, codes.
      using namespace layout;
      const std::uint8_t* codes =
          q8_0 ? in + b * kQ80Bytes + 2 : in + b * kQ8KBytes + kQ8KQs;
      const float d = q8_0 ? load_f32(in + nb * kQ80Bytes + 4 * b)
                           : load_f32(in + b * kQ8KBytes);
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
          const std::int32_t offset = zero_point * sum;
          std::memcpy(side + 4, &offset, 4);
        }
      }
      std::memcpy(o + b * block, codes, static_cast<std::size_t>(block));
    }
  }
}

static bool QuantGemmTakesAmxImpl(int w_dtype, std::int64_t m_rows) {
#if TESSEL_HWY_TARGET_AVX512
  return vnni512_kernel() &&
         takes_amx_tiles(gemm::layout_of(static_cast<DType>(w_dtype)), m_rows);
#else
  (void)w_dtype;
  (void)m_rows;
  return false;
#endif
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

HWY_EXPORT(PrepareGemmActivationsImpl);
HWY_EXPORT(QuantGemmTileImpl);
HWY_EXPORT(QuantGemmTakesAmxImpl);

bool has_quant_gemm(DType w) { return has_quant_dot(w); }

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

bool quant_gemm_takes_amx(DType w_dtype, std::int64_t m_rows) {
  return has_quant_gemm(w_dtype) && HWY_DYNAMIC_DISPATCH(QuantGemmTakesAmxImpl)(
                                        static_cast<int>(w_dtype), m_rows);
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

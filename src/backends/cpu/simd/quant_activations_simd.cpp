// Compiled once per Highway target. The activation rows of the quantised
// dot kernels and GEMM (quant_dot_simd.hpp's quantize_activations): each
// f32 row to ggml's 8-bit blocks, plus the regions quant_dot_layout.hpp
// adds to a Q8_0 row.
//
// A decode step quantises one activation row per linear layer, and at a
// layer's usual size that is not free beside the weights it meets: the
// scalar quantisers took 7-9 us of a 10-12 us call with 16 rows of a 4096
// wide Q4_K or Q4_0 weight (libm's nearbyint per code, a branch per value
// to find the largest), about 4 % of a cold 4096 x 4096 product. The
// vector forms here give the same bytes: the same f32 products, rounded
// ties to even as ggml's codes are.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_activations_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/simd/quant_dot_layout.hpp"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes: a Q8_K bsum covers 16 values, a Q8_0 block 32.
using DF = hn::CappedTag<float, 16>;
using DI = hn::RebindToSigned<DF>;
using D8 = hn::Rebind<std::int8_t, DF>;

struct Extent {
  float amax;   // largest magnitude
  bool finite;  // no NaN or Inf
};

// x * 0 is NaN exactly for NaN and Inf, so one sum tells both.
HWY_INLINE Extent extent(const float* x, int n) {
  const DF d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  auto largest = hn::Zero(d);
  auto poison = hn::Zero(d);
  for (int i = 0; i < n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    largest = hn::Max(largest, hn::Abs(v));
    poison = hn::MulAdd(v, hn::Zero(d), poison);
  }
  const float p = hn::GetLane(hn::SumOfLanes(d, poison));
  return {hn::GetLane(hn::MaxOfLanes(d, largest)), p == 0};
}

// The first value of largest magnitude, with its sign (ggml's scan keeps
// the first on a tie).
HWY_INLINE float first_with_magnitude(const float* x, int n, float amax) {
  const DF d;
  const int lanes = static_cast<int>(hn::Lanes(d));
  const auto target = hn::Set(d, amax);
  for (int i = 0; i < n; i += lanes) {
    const intptr_t at =
        hn::FindFirstTrue(d, hn::Eq(hn::Abs(hn::LoadU(d, x + i)), target));
    if (at >= 0) return x[i + at];
  }
  return amax;  // unreachable: amax is one of the magnitudes
}

// round(x[i] * scale) ties to even, capped at 127, for i < n (a multiple
// of the lane count): stored as i8, their sum returned. A multiplier that
// overflowed (127 over a largest magnitude below about 3.7e-37) gives zero
// codes: that block's stored scale is 0 (its f16 rounds to zero, Q8_K's
// reciprocal is +-0), so they add nothing to a product, and zeros are what
// ggml's Q8_K reference writes there; the AVX-512 forms below agree.
HWY_INLINE std::int32_t codes(const float* x, int n, float scale,
                              std::int8_t* out) {
  if (!std::isfinite(scale)) {
    std::fill(out, out + n, std::int8_t{0});
    return 0;
  }
  const DF d;
  const DI di;
  const D8 d8;
  const int lanes = static_cast<int>(hn::Lanes(d));
  const auto s = hn::Set(d, scale);
  const auto cap = hn::Set(di, 127);
  auto sum = hn::Zero(di);
  for (int i = 0; i < n; i += lanes) {
    const auto q =
        hn::Min(hn::NearestInt(hn::Mul(hn::LoadU(d, x + i), s)), cap);
    sum = hn::Add(sum, q);
    hn::StoreU(hn::DemoteTo(d8, q), d8, out + i);
  }
  return hn::GetLane(hn::SumOfLanes(di, sum));
}

// ggml's x86 quantize_row_q8_0: scale amax / 127 stored as f16, codes
// round(x * (127 / amax)) (the reciprocal of amax, not of the scale).
// Non-finite blocks get a NaN scale and zero codes.
HWY_INLINE void q8_0_block(const float* x, std::uint8_t* block) {
  auto* q = reinterpret_cast<std::int8_t*>(block + 2);
  const Extent e = extent(x, 32);
  if (!e.finite) {
    quant::store_u16(block, 0x7E00);
    std::fill(q, q + 32, std::int8_t{0});
    return;
  }
  quant::store_u16(block, quant::f16_from_f32(e.amax / 127.f));
  codes(x, 32, e.amax != 0 ? 127.f / e.amax : 0.f, q);
}

// The 512-bit Q8_0 kernel's copy of block b's codes and its start, -128 x
// their sum (layout's Q8_0WithQ8_0Lanes region).
[[maybe_unused]] static void q8_0_lanes(const std::uint8_t* codes,
                                        std::int64_t nb, std::int64_t b,
                                        std::uint8_t* row) {
  using namespace layout;
  const auto nbu = static_cast<std::size_t>(nb);
  std::memcpy(row + q8_0_lanes_offset(nbu) + b * kQ80LaneBytes, codes, 32);
  std::int32_t sum = 0;
  for (int i = 0; i < 32; ++i) sum += static_cast<std::int8_t>(codes[i]);
  const std::int32_t start = -128 * sum;
  std::memcpy(row + q8_0_block_starts_offset(nbu) + b * kQ80BlockStartBytes,
              &start, 4);
}

// The padding of a Q8_0WithQ8_0Lanes row before its codes, before their
// starts and after them: no kernel reads it, but every byte of a
// reused buffer is written.
static void zero_q8_0_lanes_padding(std::int64_t nb, std::uint8_t* row) {
  using namespace layout;
  const auto nbu = static_cast<std::size_t>(nb);
  std::fill(row + nb * (kQ80Bytes + kQ80ScaleBytes),
            row + q8_0_lanes_offset(nbu), std::uint8_t{0});
  std::fill(row + q8_0_lanes_offset(nbu) + nb * kQ80LaneBytes,
            row + q8_0_block_starts_offset(nbu), std::uint8_t{0});
  std::fill(row + q8_0_block_starts_offset(nbu) + nb * kQ80BlockStartBytes,
            row + q8_0_lanes_row_bytes(nbu), std::uint8_t{0});
}

// A Q8_0 row: its blocks and their f32 scales, then, for the Q4_0 dot
// kernels, layout's per-block offsets and groups of four, or for the
// 512-bit Q8_0 kernel its codes again and their starts.
[[maybe_unused]] static void q8_0_row(const float* x, std::int64_t k,
                                      ActivationBlocks kind,
                                      std::uint8_t* row) {
  using namespace layout;
  const std::int64_t nb = k / 32;
  std::uint8_t* scales = row + nb * kQ80Bytes;
  for (std::int64_t b = 0; b < nb; ++b) {
    std::uint8_t* block = row + b * kQ80Bytes;
    q8_0_block(x + 32 * b, block);
    quant::store_f32(scales + 4 * b, quant::load_f16(block));
    if (kind == ActivationBlocks::Q8_0WithQ8_0Lanes) {
      q8_0_lanes(block + 2, nb, b, row);
    }
  }
  if (kind == ActivationBlocks::Q8_0WithQ8_0Lanes) {
    zero_q8_0_lanes_padding(nb, row);
    return;
  }
  if (kind != ActivationBlocks::Q8_0WithQ4_0Sums) return;
  std::uint8_t* offsets = scales + nb * kQ80ScaleBytes;
  const auto nbu = static_cast<std::size_t>(nb);
  std::uint8_t* quads = row + q4_0_quads_offset(nbu);
  std::uint8_t* groups = row + q4_0_quad_groups_offset(nbu);
  std::memset(groups, 0, q4_0_row_bytes(nbu) - q4_0_quad_groups_offset(nbu));
  for (std::int64_t b = 0; b < nb; ++b) {
    const auto* q =
        reinterpret_cast<const std::int8_t*>(row + b * kQ80Bytes + 2);
    std::int32_t offset[8] = {};
    for (int lane = 0; lane < 4; ++lane) {
      for (int i : {4 * lane, 16 + 4 * lane}) {
        offset[lane] += 8 * (q[i] + q[i + 1] + q[i + 2] + q[i + 3]);
      }
    }
    std::memcpy(offsets + b * kQ80OffsetBytes, offset, sizeof offset);
    if (b >= nb / 4 * 4) continue;  // not in a whole group of four
    // Block i = b % 4 of quad q = b / 4 % 4 of its group.
    std::uint8_t* quad = quads + b / 4 * kQ80QuadBytes;
    std::uint8_t* group = groups + b / 16 * kQ80GroupBytes;
    const auto lane = static_cast<std::size_t>(4 * (b % 4) + b / 4 % 4);
    std::memcpy(quad + kQ80QuadLow + 16 * (b % 4), q, 16);
    std::memcpy(quad + kQ80QuadHigh + 16 * (b % 4), q + 16, 16);
    std::int32_t sum = 0;
    for (const std::int32_t o : offset) sum += o;
    std::memcpy(group + kQ80GroupOffsets + 4 * lane, &sum, 4);
    std::memcpy(group + kQ80GroupScales + 4 * lane, scales + 4 * b, 4);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// q8_0_row in AVX-512, one pass over each block: the same scale and codes
// (ggml's x86 quantize_row_q8_0: products rounded by the MXCSR's
// nearest-even conversion) with one horizontal step a block instead of
// three, and the Q4_0 kernels' offsets from the codes in registers
// (maddubs by ones, then madd by 8: eight sums of four codes, times 8,
// folded to four lanes)
// instead of a scalar loop. It took a 1024-wide row with the Q4_0 offsets
// from 750 ns to 320 on Zen 4 (the division 127 / amax and the reduction
// before it are the chain each block waits on).
//
// GCC 12's 512-bit conversions and reductions pass an "undefined" register
// as their unused merge source, and then warn about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
static void q8_0_row_avx512(const float* x, std::int64_t k,
                            ActivationBlocks kind, std::uint8_t* row) {
  using namespace layout;
  const std::int64_t nb = k / 32;
  const auto nbu = static_cast<std::size_t>(nb);
  std::uint8_t* scales = row + nb * kQ80Bytes;
  // The Q4_0 kernels' regions, in rows that have them.
  const bool q4_0_sums = kind == ActivationBlocks::Q8_0WithQ4_0Sums;
  std::uint8_t* offsets = nullptr;
  std::uint8_t* quads = nullptr;
  std::uint8_t* groups = nullptr;
  if (q4_0_sums) {
    offsets = scales + nb * kQ80ScaleBytes;
    quads = row + q4_0_quads_offset(nbu);
    groups = row + q4_0_quad_groups_offset(nbu);
    std::memset(groups, 0, q4_0_row_bytes(nbu) - q4_0_quad_groups_offset(nbu));
  }
  // The Q8_0 kernel's, likewise.
  std::uint8_t* lanes = nullptr;
  std::uint8_t* block_starts = nullptr;
  if (kind == ActivationBlocks::Q8_0WithQ8_0Lanes) {
    lanes = row + q8_0_lanes_offset(nbu);
    block_starts = row + q8_0_block_starts_offset(nbu);
    zero_q8_0_lanes_padding(nb, row);
  }
  const __m512 zero = _mm512_setzero_ps();
  const __m512i cap = _mm512_set1_epi32(127);
  const __m256i ones = _mm256_set1_epi8(1);
  const __m256i eight = _mm256_set1_epi16(8);
  const __m256i minus_128 = _mm256_set1_epi16(-128);
  for (std::int64_t b = 0; b < nb; ++b) {
    const __m512 v0 = _mm512_loadu_ps(x + 32 * b);
    const __m512 v1 = _mm512_loadu_ps(x + 32 * b + 16);
    std::uint8_t* block = row + b * kQ80Bytes;
    // x * 0 is NaN exactly for NaN and Inf.
    const __m512 poison =
        _mm512_add_ps(_mm512_mul_ps(v0, zero), _mm512_mul_ps(v1, zero));
    __m128i c0 = _mm_setzero_si128(), c1 = _mm_setzero_si128();
    // The scale's f16 bits stay in a register: reading them back from the
    // block stalled on its two byte stores (most of this function's time
    // in a decode step).
    std::uint16_t half = 0x7E00;
    if (_mm512_cmp_ps_mask(poison, poison, _CMP_UNORD_Q) == 0) {
      const float amax = _mm512_reduce_max_ps(
          _mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
      // F16C rounds to nearest even, as quant::f16_from_f32 does.
      half = static_cast<std::uint16_t>(
          _cvtss_sh(amax / 127.f, _MM_FROUND_TO_NEAREST_INT));
      const float inverse = amax != 0 ? 127.f / amax : 0.f;
      if (std::isfinite(inverse)) {  // else zero codes, as `codes` gives
        const __m512 s = _mm512_set1_ps(inverse);
        c0 = _mm512_cvtepi32_epi8(
            _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v0, s)), cap));
        c1 = _mm512_cvtepi32_epi8(
            _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v1, s)), cap));
      }
    }
    quant::store_u16(block, half);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block + 2), c0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block + 18), c1);
    const float scale = _cvtsh_ss(half);
    quant::store_f32(scales + 4 * b, scale);
    const __m256i codes = _mm256_set_m128i(c1, c0);
    if (lanes != nullptr) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes + b * kQ80LaneBytes),
                          codes);
      // -128 x the codes' sum, four at a time as the Q4_0 offsets below.
      const std::int32_t start = _mm512_reduce_add_epi32(_mm512_zextsi256_si512(
          _mm256_madd_epi16(_mm256_maddubs_epi16(ones, codes), minus_128)));
      std::memcpy(block_starts + b * kQ80BlockStartBytes, &start, 4);
    }
    if (!q4_0_sums) continue;
    const __m256i offset =
        _mm256_madd_epi16(_mm256_maddubs_epi16(ones, codes), eight);
    // Lanes 4-7 (codes 16-31) folded onto lanes 0-3.
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(offsets + b * kQ80OffsetBytes),
        _mm256_zextsi128_si256(
            _mm_add_epi32(_mm256_castsi256_si128(offset),
                          _mm256_extracti128_si256(offset, 1))));
    if (b >= nb / 4 * 4) continue;  // not in a whole group of four
    // Block i = b % 4 of quad q = b / 4 % 4 of its group.
    std::uint8_t* quad = quads + b / 4 * kQ80QuadBytes;
    std::uint8_t* group = groups + b / 16 * kQ80GroupBytes;
    const auto lane = static_cast<std::size_t>(4 * (b % 4) + b / 4 % 4);
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(quad + kQ80QuadLow + 16 * (b % 4)), c0);
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(quad + kQ80QuadHigh + 16 * (b % 4)), c1);
    const std::int32_t sum =
        _mm512_reduce_add_epi32(_mm512_zextsi256_si512(offset));
    std::memcpy(group + kQ80GroupOffsets + 4 * lane, &sum, 4);
    quant::store_f32(group + kQ80GroupScales + 4 * lane, scale);
  }
}

// q8_k_block in AVX-512: the same scale and codes, the block held in 16
// registers, and the 16 sums of 16 codes by SAD over the codes biased to
// unsigned (each 16-sum is two 8-byte SADs less 16 x 128) instead of a
// horizontal sum per 16.
static void q8_k_block_avx512(const float* x, std::uint8_t* block) {
  using namespace layout;
  const __m512 zero = _mm512_setzero_ps();
  __m512 v[16];
  __m512 largest = zero, poison = zero;
  for (int i = 0; i < 16; ++i) {
    v[i] = _mm512_loadu_ps(x + 16 * i);
    largest = _mm512_max_ps(largest, _mm512_abs_ps(v[i]));
    poison = _mm512_add_ps(poison, _mm512_mul_ps(v[i], zero));
  }
  // Zero codes and sums with scale d: a non-finite block (NaN), an
  // all-zero one (0), one whose multiplier overflows (+-0), as `codes`.
  const auto zero_block = [block](float d) {
    std::fill(block, block + kQ8KBytes, std::uint8_t{0});
    quant::store_f32(block, d);
  };
  if (_mm512_cmp_ps_mask(poison, poison, _CMP_UNORD_Q) != 0) {
    return zero_block(std::numeric_limits<float>::quiet_NaN());
  }
  const float amax = _mm512_reduce_max_ps(largest);
  if (amax == 0) return zero_block(0.f);
  // The first value of largest magnitude, with its sign (ggml's scan).
  float first = amax;
  const __m512 target = _mm512_set1_ps(amax);
  for (int i = 0; i < 16; ++i) {
    const __mmask16 at =
        _mm512_cmp_ps_mask(_mm512_abs_ps(v[i]), target, _CMP_EQ_OQ);
    if (at != 0) {
      first = x[16 * i + __builtin_ctz(at)];
      break;
    }
  }
  const float iscale = -127.f / first;
  if (!std::isfinite(iscale)) return zero_block(1 / iscale);
  const __m512 scale = _mm512_set1_ps(iscale);
  const __m512i cap = _mm512_set1_epi32(127);
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i bias_sum = _mm512_set1_epi64(16 * 128);
  std::uint8_t* qs = block + kQ8KQs;
  __m512i sums[4];
  // Codes of values 16 i to 16 i + 15.
  const auto codes_of = [&](int i) {
    return _mm512_cvtepi32_epi8(
        _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v[i], scale)), cap));
  };
  for (int r = 0; r < 4; ++r) {
    // The lane of vinserti32x4 must be a constant: spelled out, not a
    // loop (which the sanitizer build's -O2 did not unroll).
    __m512i codes = _mm512_castsi128_si512(codes_of(4 * r));
    codes = _mm512_inserti32x4(codes, codes_of(4 * r + 1), 1);
    codes = _mm512_inserti32x4(codes, codes_of(4 * r + 2), 2);
    codes = _mm512_inserti32x4(codes, codes_of(4 * r + 3), 3);
    _mm512_storeu_si512(qs + 64 * r, codes);
    const __m512i sad =
        _mm512_sad_epu8(_mm512_xor_si512(codes, bias), _mm512_setzero_si512());
    // Lanes 0, 2, 4, 6: the sums of 16, moved to lanes 0-3.
    sums[r] = _mm512_maskz_compress_epi64(
        0x55,
        _mm512_sub_epi64(_mm512_add_epi64(sad, _mm512_bsrli_epi128(sad, 8)),
                         bias_sum));
  }
  for (int h = 0; h < 2; ++h) {
    const __m512i eight = _mm512_inserti64x4(
        sums[2 * h], _mm512_castsi512_si256(sums[2 * h + 1]), 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(block + kQ8KSums + 16 * h),
                     _mm512_cvtepi64_epi16(eight));
  }
  quant::store_f32(block, 1 / iscale);
}
#pragma GCC diagnostic pop
#endif

// ggml's quantize_row_q8_K_ref: scale -127 / (the signed value of largest
// magnitude), codes capped at 127, 16 sums of 16 codes. An all-zero block
// is all zero bytes; a non-finite one gets a NaN scale and zero codes.
[[maybe_unused]] static void q8_k_block(const float* x, std::uint8_t* block) {
  using namespace layout;
  const Extent e = extent(x, 256);
  if (!e.finite || e.amax == 0) {
    std::fill(block, block + kQ8KBytes, std::uint8_t{0});
    if (!e.finite) {
      quant::store_f32(block, std::numeric_limits<float>::quiet_NaN());
    }
    return;
  }
  const float iscale = -127.f / first_with_magnitude(x, 256, e.amax);
  auto* q = reinterpret_cast<std::int8_t*>(block + kQ8KQs);
  for (int j = 0; j < 16; ++j) {
    const std::int32_t sum = codes(x + 16 * j, 16, iscale, q + 16 * j);
    quant::store_u16(
        block + kQ8KSums + 2 * j,
        static_cast<std::uint16_t>(static_cast<std::int16_t>(sum)));
  }
  quant::store_f32(block, 1 / iscale);
}

// The sum of sub-block s's 32 codes in a Q8_K block, from its two sums of
// 16 (at most 32 x 128 in magnitude).
static std::int32_t sub_block_sum(const std::uint8_t* block, int s) {
  using namespace layout;
  return static_cast<std::int16_t>(quant::load_u16(block + kQ8KSums + 4 * s)) +
         static_cast<std::int16_t>(
             quant::load_u16(block + kQ8KSums + 4 * s + 2));
}

// After a row's Q8_K blocks, what k4_row_lanes reads for each group of
// four, a last partial one padded with zeros (quant_dot_layout.hpp's
// kQ8KGroup*), then every block's codes in its sub-block order
// (kQ8KK4Lanes).
static void k4_groups(std::int64_t nb, std::uint8_t* row) {
  using namespace layout;
  std::uint8_t* groups = row + nb * kQ8KBytes;
  std::memset(groups, 0,
              static_cast<std::size_t>((nb + 3) / 4) *
                  static_cast<std::size_t>(kQ8KGroupBytes));
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* block = row + b * kQ8KBytes;
    std::uint8_t* group = groups + b / 4 * kQ8KGroupBytes;
    const int i = static_cast<int>(b % 4);
    std::memcpy(group + kQ8KGroupScales + 4 * i, block, 4);
    std::memcpy(group + kQ8KGroupScales + 16 + 4 * i, block, 4);
    for (int j = 0; j < 8; ++j) {
      quant::store_u16(group + kQ8KGroupSums + 16 * i + 2 * j,
                       static_cast<std::uint16_t>(sub_block_sum(block, j)));
    }
  }
  // The block codes in the group kernel's sub-block order, after padding.
  const auto nbu = static_cast<std::size_t>(nb);
  std::uint8_t* lanes = row + k4_lanes_offset(nbu);
  std::fill(groups + (nb + 3) / 4 * kQ8KGroupBytes, lanes, std::uint8_t{0});
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* q = row + b * kQ8KBytes + kQ8KQs;
    for (int chunk = 0; chunk < 8; ++chunk) {
      std::memcpy(lanes + b * kQ8KK4Lanes + 32 * chunk,
                  q + 32 * k4_lane_sub_block(chunk), 32);
    }
  }
}

// After a row's Q8_K blocks, their codes in IQ4_XS's nibble order
// (quant_dot_layout.hpp's kQ8KIq4Lanes).
static void iq4_lanes(std::int64_t nb, std::uint8_t* row) {
  using namespace layout;
  std::uint8_t* lanes = row + iq4_lanes_offset(static_cast<std::size_t>(nb));
  for (std::int64_t b = 0; b < nb; ++b) {
    const std::uint8_t* q = row + b * kQ8KBytes + kQ8KQs;
    std::uint8_t* out = lanes + b * kQ8KIq4Lanes;
    for (int h = 0; h < 2; ++h) {
      for (int j = 0; j < 4; ++j) {
        const std::uint8_t* sub = q + 32 * (4 * h + j);
        std::memcpy(out + 128 * h + 16 * j, sub, 16);
        std::memcpy(out + 128 * h + 64 + 16 * j, sub + 16, 16);
      }
    }
  }
  std::uint8_t* pairs = row + iq4_pairs_offset(static_cast<std::size_t>(nb));
  for (std::int64_t p = 0; p < nb / 2; ++p) {
    for (int lane = 0; lane < 16; ++lane) {
      const int sub = iq4_pair_sub_block(lane);
      const std::int32_t surplus =
          128 * sub_block_sum(row + (2 * p + sub / 8) * kQ8KBytes, sub % 8);
      std::memcpy(pairs + p * kQ8KIq4PairBytes + 4 * lane, &surplus, 4);
    }
  }
}

static void QuantizeActivationsImpl(int kind, const float* x, std::int64_t ldx,
                                    std::int64_t rows, std::int64_t k,
                                    std::size_t row_bytes, std::uint8_t* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * ldx;
    std::uint8_t* o = out + static_cast<std::size_t>(r) * row_bytes;
    const auto blocks = static_cast<ActivationBlocks>(kind);
    if (activation_block_values(blocks) == 32) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      q8_0_row_avx512(xr, k, blocks, o);
#else
      q8_0_row(xr, k, blocks, o);
#endif
      continue;
    }
    for (std::int64_t b = 0; b < k / 256; ++b) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      q8_k_block_avx512(xr + 256 * b, o + b * layout::kQ8KBytes);
#else
      q8_k_block(xr + 256 * b, o + b * layout::kQ8KBytes);
#endif
    }
    if (blocks == ActivationBlocks::Q8_KWithK4Groups) k4_groups(k / 256, o);
    if (blocks == ActivationBlocks::Q8_KWithIq4Lanes) iq4_lanes(k / 256, o);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(QuantizeActivationsImpl);

ActivationBlocks activation_blocks(DType w) {
  return w == DType::Q4_0 || w == DType::Q8_0 ? ActivationBlocks::Q8_0
                                              : ActivationBlocks::Q8_K;
}

ActivationBlocks dot_activation_blocks(DType w) {
  if (w == DType::Q4_0) return ActivationBlocks::Q8_0WithQ4_0Sums;
  if (w == DType::Q8_0) return ActivationBlocks::Q8_0WithQ8_0Lanes;
  if (w == DType::Q4_K || w == DType::Q5_K) {
    return ActivationBlocks::Q8_KWithK4Groups;
  }
  if (w == DType::IQ4_XS) return ActivationBlocks::Q8_KWithIq4Lanes;
  return activation_blocks(w);
}

std::size_t activation_row_bytes(ActivationBlocks kind, std::int64_t k) {
  using namespace layout;
  const auto n = static_cast<std::size_t>(k);
  switch (kind) {
    case ActivationBlocks::Q8_0: return n / 32 * (kQ80Bytes + kQ80ScaleBytes);
    case ActivationBlocks::Q8_0WithQ4_0Sums:
      static_assert(kQ80QuadBytes % 64 == 0 && kQ80GroupBytes % 64 == 0 &&
                        kQ8KIq4Lanes % 64 == 0 && kQ8KIq4PairBytes % 64 == 0,
                    "rows of whole cache lines keep every row aligned");
      return q4_0_row_bytes(n / 32);
    case ActivationBlocks::Q8_0WithQ8_0Lanes:
      return q8_0_lanes_row_bytes(n / 32);
    case ActivationBlocks::Q8_K: break;
    case ActivationBlocks::Q8_KWithK4Groups:
      return k4_lanes_offset(n / 256) + n / 256 * kQ8KK4Lanes;
    case ActivationBlocks::Q8_KWithIq4Lanes:
      return iq4_pairs_offset(n / 256) + n / 512 * kQ8KIq4PairBytes;
  }
  return n / 256 * kQ8KBytes;
}

void quantize_activations(ActivationBlocks kind, const float* x,
                          std::int64_t ldx, std::int64_t rows, std::int64_t k,
                          std::uint8_t* out) {
  HWY_DYNAMIC_DISPATCH(QuantizeActivationsImpl)
  (static_cast<int>(kind), x, ldx, rows, k, activation_row_bytes(kind, k), out);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

// The packed form of block-quantised weight tiles for the integer GEMM
// (quant_gemm_simd.hpp): what each type packs to, and the scalar decoding
// the portable packer uses (quant_gemm_pack_simd.cpp; the x86 ones decode
// in vector registers) and the kernels share (quant_gemm_simd.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backends/cpu/simd/cpu_features.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"
#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd::gemm {

// A tile of R rows (8 or 16) is, per group of `group` weights along k:
// group / 4 registers of R x 4 code bytes (register t: bytes 4r..4r+3 are
// row r's codes 4t..4t+3), then the rows' f32 group scales, then, for the
// K-quants with mins, the rows' f32 group mins. The 512-bit kernel takes
// 16-row tiles; the 256-bit one takes two 8-row tiles one after the other
// (tile_rows_for); the portable one 8-row tiles.
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
  return codes_bytes(l, rows) +
         static_cast<std::size_t>((l.has_min ? 8 : 4) * rows);
}
// Bytes of a tile of `rows` rows of length k.
constexpr std::size_t tile_bytes(const Layout& l, int rows, std::int64_t k) {
  return static_cast<std::size_t>(k / l.group) * group_bytes(l, rows);
}

// After an activation row's codes, per group: the f32 scale of its block,
// then what the weight type needs of the group's code sum, ready to use:
// zero_point x sum as i32 (Q4_0, Q6_K, and the signed codes the 512-bit
// kernel packs plus 128), or the sum as f32 for the min term (Q4_K, Q5_K);
// unused otherwise.
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

// Whether the 512-bit VNNI kernel runs: one of Highway's AVX-512 targets
// (TESSEL_HWY_TARGET_AVX512) on a CPU with AVX512-VNNI, which those
// targets do not all assume. It takes signed codes packed plus 128. The
// packer and the kernels ask the same question, so they agree.
inline bool vnni512_kernel(bool avx512_target) {
  return avx512_target && cpu_has_avx512_vnni();
}

// Most rows per packed unit (gemm_tile_rows): 16 on x86 from AVX2 up,
// where a register of the 512-bit kernel holds all 16 and the 256-bit
// kernel takes two 8-row tiles, whose registers can share each activation
// broadcast; 8 in the portable kernel.
constexpr int tile_rows_for(bool x86_vector_kernels) {
  return x86_vector_kernels ? 16 : 8;
}

// Activation rows from which the 256-bit kernel takes two 8-row tiles at
// once (below, one at a time, packed just before it runs). Together they
// read each activation row's codes once per 16 weight rows instead of once
// per 8 but the tiles' codes twice as often: a prompt's activations come
// from L2 and outweigh the tiles (Zen 3: 128 rows of K = 2816 took
// 12.7-14.0 ns per 1024 Q4_0 products together, 15.1 apart; the 160M Q4_0
// prompt ran 14 % faster), while at 16 rows of K = 4096 the tiles are most
// of the traffic and two at once ran 10-20 % slower.
constexpr std::int64_t kPairMinRows = 32;

// Whether the 256-bit kernel takes two tiles at once at all: not for
// signed codes under an activation scale of several groups (IQ4_XS),
// whose partial sums kept across groups beside the codes' absolute values
// need more than AVX2's 16 registers (12 % slower at M = 512 on Zen 3).
constexpr bool pairs_tiles(const Layout& l) {
  return !(l.signed_codes && l.act_block > l.group);
}

}  // namespace tessel::cpu::simd::gemm

// The codebook ("IQ") block types of GGUF: IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ3_XXS, IQ3_S (values looked up in a lattice grid) and IQ4_XS
// (4-bit codes into a 16-value codebook). All are 256-element super-blocks.
// Dequantisation of every type, quantisation of IQ4_XS only (the others need
// an importance matrix in ggml). Each decoder multiplies and adds in the
// order of ggml's dequantize_row_* and the IQ4_XS encoder follows ggml's
// quantize_iq4_xs without quant weights step by step, so both match ggml to
// the bit (see block_codecs.hpp).
//
// Sign groups: the IQ2/IQ3 types give each group of 8 values an 8-bit sign
// mask (bit j set: value j negative), stored whole or as a 7-bit index into
// kIqSigns. A value is decoded as scale * magnitude * (+1 or -1): a multiply,
// not a negation, as ggml does it (the two differ in the sign of a NaN).
#include <cmath>
#include <cstdint>

#include "quant/block_codecs.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/iq_grids.hpp"
#include "quant/scalars.hpp"

namespace tessel::quant {

namespace {

constexpr int kSuperBlock = 256;  // elements per block (ggml's QK_K)
constexpr int kSubBlock = 32;     // elements per sub-block scale
constexpr int kSubBlocks = kSuperBlock / kSubBlock;

// IQ1_S / IQ1_M: the offset added to every grid value, its sign per group.
constexpr float kIq1Delta = 0.125f;

// +1 or -1 for value j of a sign group.
inline float sign_of(std::uint8_t signs, int j) {
  return (signs >> j) & 1u ? -1.f : 1.f;
}

// 8 outputs from one grid entry of magnitudes (bytes, least significant
// first): y[j] = scale * magnitude_j * sign_j.
inline void put_signed8(float* y, float scale, std::uint64_t entry,
                        std::uint8_t signs) {
  for (int j = 0; j < 8; ++j) {
    y[j] = scale * grid_byte(entry, j) * sign_of(signs, j);
  }
}

// 8 outputs from one IQ1 grid entry (int8 values in {-1, 0, 1}):
// y[j] = scale * (value_j + delta).
inline void put_iq1(float* y, float scale, std::uint64_t entry, float delta) {
  for (int j = 0; j < 8; ++j) {
    y[j] = scale * (static_cast<std::int8_t>(grid_byte(entry, j)) + delta);
  }
}

// ---- IQ2_XXS: 66 bytes ----
//   [0,2)   d: f16 super-block scale
//   [2,66)  8 sub-blocks of 32 values, 8 bytes each: bytes 0..3 are the
//           grid indices (kIq2XxsGrid) of its 4 groups of 8; bytes 4..7 a
//           u32 whose bits 7l..7l+6 index group l's signs (kIqSigns) and
//           whose bits 28..31 are the 4-bit scale s.
//   y = (d * (0.5 + s) * 0.25) * grid * sign
constexpr int kIq2XxsBytes = 66;
constexpr int kIq2XxsQs = 2;

// ---- IQ2_XS: 74 bytes ----
//   [0,2)   d: f16
//   [2,66)  32 u16, one per group of 8: bits 0..8 grid index (kIq2XsGrid),
//           bits 9..15 sign index (kIqSigns)
//   [66,74) one byte per sub-block: low nibble scales its first 16 values,
//           high nibble its last 16
//   y = (d * (0.5 + s) * 0.25) * grid * sign
constexpr int kIq2XsBytes = 74;
constexpr int kIq2XsQs = 2;
constexpr int kIq2XsScales = 66;

// ---- IQ2_S: 82 bytes ----
//   [0,2)   d: f16
//   [2,34)  low 8 bits of the grid index (kIq2SGrid) of each group of 8
//   [34,66) the 8-bit sign mask of each group
//   [66,74) one byte per sub-block: bits 2l..2l+1 are bits 8..9 of the grid
//           index of its group l
//   [74,82) one byte per sub-block: nibble scales as IQ2_XS
//   y = (d * (0.5 + s) * 0.25) * grid * sign
constexpr int kIq2SBytes = 82;
constexpr int kIq2SQs = 2;
constexpr int kIq2SSigns = 34;
constexpr int kIq2SQh = 66;
constexpr int kIq2SScales = 74;

// ---- IQ3_XXS: 98 bytes ----
//   [0,2)   d: f16
//   [2,66)  one grid index (kIq3XxsGrid, 4 values) per group of 4
//   [66,98) one u32 per sub-block: bits 7l..7l+6 index the signs of its
//           group of 8 l (kIqSigns), bits 28..31 the 4-bit scale s
//   y = (d * (0.5 + s) * 0.5) * grid * sign
constexpr int kIq3XxsBytes = 98;
constexpr int kIq3XxsQs = 2;
constexpr int kIq3XxsScalesSigns = 66;

// ---- IQ3_S: 110 bytes ----
//   [0,2)    d: f16
//   [2,66)   low 8 bits of the grid index (kIq3SGrid, 4 values) of each
//            group of 4
//   [66,74)  one byte per sub-block: bit k is bit 8 of the index of its
//            group of 4 number k
//   [74,106) the 8-bit sign mask of each group of 8
//   [106,110) one byte per two sub-blocks: low nibble scales the first,
//            high nibble the second
//   y = (d * (1 + 2 s)) * grid * sign
constexpr int kIq3SBytes = 110;
constexpr int kIq3SQs = 2;
constexpr int kIq3SQh = 66;
constexpr int kIq3SSigns = 74;
constexpr int kIq3SScales = 106;

// ---- IQ1_S: 50 bytes ----
//   [0,2)   d: f16
//   [2,34)  low 8 bits of the grid index (kIq1SGrid) of each group of 8
//   [34,50) one u16 per sub-block: bits 3l..3l+2 are bits 8..10 of the
//           index of its group l, bits 12..14 the scale s, bit 15 the sign
//           of the delta
//   y = (d * (2 s + 1)) * (grid + delta), delta = +-0.125
constexpr int kIq1SBytes = 50;
constexpr int kIq1SQs = 2;
constexpr int kIq1SQh = 34;

// ---- IQ1_M: 56 bytes (no separate super-block scale field) ----
//   [0,32)  low 8 bits of the grid index (kIq1SGrid) of each group of 8
//   [32,48) one byte per 16 values: bits 0..2 are bits 8..10 of the index
//           of its first group of 8, bit 3 that group's delta sign; bits
//           4..7 the same for its second group
//   [48,56) four u16: u16 k holds the 3-bit scales of sub-blocks 2k and
//           2k+1 (bits 0..2 and 3..5 for the first, 6..8 and 9..11 for the
//           second; each scales 16 values), and in bits 12..15 bits
//           4k..4k+3 of the f16 super-block scale d
//   y = (d * (2 s + 1)) * (grid + delta), delta = +-0.125
constexpr int kIq1MBytes = 56;
constexpr int kIq1MQs = 0;
constexpr int kIq1MQh = 32;
constexpr int kIq1MScales = 48;

// ---- IQ4_XS: 136 bytes ----
//   [0,2)   d: f16
//   [2,4)   scales_h: u16, bits 2b..2b+1 are the high 2 bits of sub-block
//           b's 6-bit scale
//   [4,8)   scales_l: one nibble per sub-block (low nibble first), its low
//           4 bits
//   [8,136) 16 bytes per sub-block: byte j holds the codes of values j (low
//           nibble) and j + 16 (high nibble)
//   y = (d * (scale - 32)) * kIq4Codebook[code]
constexpr int kIq4XsBytes = 136;
constexpr int kIq4XsScalesH = 2;
constexpr int kIq4XsScalesL = 4;
constexpr int kIq4XsQs = 8;

// One IQ4_XS block from 256 floats: the sub-block scales, then d = -(the
// scale of largest magnitude) / 32, each sub-block's scale rounded to a
// 6-bit multiple of d (biased by 32), and its codes chosen for that
// rounded scale.
void quantize_iq4_xs_block(const float* x, std::uint8_t* b) {
  float scales[kSubBlocks];
  float max_scale = 0, amax_scale = 0;
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    scales[ib] = iq4_group_scale(x + ib * kSubBlock);
    const float abs_d = std::fabs(scales[ib]);
    if (abs_d > amax_scale) {
      amax_scale = abs_d;
      max_scale = scales[ib];
    }
  }
  const float d = -max_scale / 32;
  store_f16(b, d);
  const float id = d ? 1 / d : 0.f;
  std::uint16_t scales_h = 0;
  std::uint8_t codes[kSuperBlock];
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    int l = nearest_int(id * scales[ib]);
    l = l < -32 ? -32 : (l > 31 ? 31 : l);
    const float dl = d * l;
    const float idl = dl ? 1 / dl : 0.f;
    const float* xb = x + ib * kSubBlock;
    std::uint8_t* cb = codes + ib * kSubBlock;
    for (int j = 0; j < kSubBlock; ++j) {
      cb[j] = static_cast<std::uint8_t>(nearest_iq4_code(idl * xb[j]));
    }
    l += 32;
    std::uint8_t& low = b[kIq4XsScalesL + ib / 2];
    if (ib % 2 == 0) {
      low = static_cast<std::uint8_t>(l & 0xf);
    } else {
      low = static_cast<std::uint8_t>(low | ((l & 0xf) << 4));
    }
    scales_h = static_cast<std::uint16_t>(scales_h | ((l >> 4) << (2 * ib)));
  }
  store_u16(b + kIq4XsScalesH, scales_h);
  std::uint8_t* qs = b + kIq4XsQs;
  for (int ib = 0; ib < kSubBlocks; ++ib) {
    for (int j = 0; j < 16; ++j) {
      qs[16 * ib + j] = static_cast<std::uint8_t>(
          codes[32 * ib + j] | (codes[32 * ib + 16 + j] << 4));
    }
  }
}

}  // namespace

void dequantize_iq2_xxs(const std::uint8_t* blocks, float* out,
                        std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq2XxsBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint8_t* sub = b + kIq2XxsQs + 8 * ib;
      const std::uint32_t aux = load_u32(sub + 4);
      const float db = d * (0.5f + (aux >> 28)) * 0.25f;
      for (int l = 0; l < 4; ++l) {
        put_signed8(out, db, kIq2XxsGrid[sub[l]],
                    kIqSigns[(aux >> 7 * l) & 127]);
        out += 8;
      }
    }
  }
}

void dequantize_iq2_xs(const std::uint8_t* blocks, float* out,
                       std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq2XsBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint8_t s = b[kIq2XsScales + ib];
      const float db[2] = {d * (0.5f + (s & 0xf)) * 0.25f,
                           d * (0.5f + (s >> 4)) * 0.25f};
      for (int l = 0; l < 4; ++l) {
        const std::uint16_t q = load_u16(b + kIq2XsQs + 2 * (4 * ib + l));
        put_signed8(out, db[l / 2], kIq2XsGrid[q & 511], kIqSigns[q >> 9]);
        out += 8;
      }
    }
  }
}

void dequantize_iq2_s(const std::uint8_t* blocks, float* out,
                      std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq2SBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint8_t s = b[kIq2SScales + ib];
      const float db[2] = {d * (0.5f + (s & 0xf)) * 0.25f,
                           d * (0.5f + (s >> 4)) * 0.25f};
      const unsigned qh = b[kIq2SQh + ib];
      for (int l = 0; l < 4; ++l) {
        const unsigned index =
            b[kIq2SQs + 4 * ib + l] | ((qh << (8 - 2 * l)) & 0x300);
        put_signed8(out, db[l / 2], kIq2SGrid[index],
                    b[kIq2SSigns + 4 * ib + l]);
        out += 8;
      }
    }
  }
}

void dequantize_iq3_xxs(const std::uint8_t* blocks, float* out,
                        std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq3XxsBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint8_t* qs = b + kIq3XxsQs + 8 * ib;
      const std::uint32_t aux = load_u32(b + kIq3XxsScalesSigns + 4 * ib);
      const float db = d * (0.5f + (aux >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l) {
        // Two 4-value entries make the group of 8.
        const std::uint64_t entry =
            kIq3XxsGrid[qs[2 * l]] |
            (static_cast<std::uint64_t>(kIq3XxsGrid[qs[2 * l + 1]]) << 32);
        put_signed8(out, db, entry, kIqSigns[(aux >> 7 * l) & 127]);
        out += 8;
      }
    }
  }
}

void dequantize_iq3_s(const std::uint8_t* blocks, float* out,
                      std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq3SBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint8_t s = b[kIq3SScales + ib / 2];
      const float db = d * (1 + 2 * (ib % 2 == 0 ? s & 0xf : s >> 4));
      const std::uint8_t* qs = b + kIq3SQs + 8 * ib;
      const unsigned qh = b[kIq3SQh + ib];
      for (int l = 0; l < 4; ++l) {
        const unsigned i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
        const unsigned i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
        const std::uint64_t entry =
            kIq3SGrid[i1] | (static_cast<std::uint64_t>(kIq3SGrid[i2]) << 32);
        put_signed8(out, db, entry, b[kIq3SSigns + 4 * ib + l]);
        out += 8;
      }
    }
  }
}

void dequantize_iq1_s(const std::uint8_t* blocks, float* out,
                      std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq1SBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const std::uint16_t qh = load_u16(b + kIq1SQh + 2 * ib);
      const float dl = d * (2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
      for (int l = 0; l < 4; ++l) {
        const unsigned index =
            b[kIq1SQs + 4 * ib + l] | (((qh >> 3 * l) & 7) << 8);
        put_iq1(out, dl, kIq1SGrid[index], delta);
        out += 8;
      }
    }
  }
}

void dequantize_iq1_m(const std::uint8_t* blocks, float* out,
                      std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq1MBytes;
    std::uint16_t sc[4];
    for (int k = 0; k < 4; ++k) sc[k] = load_u16(b + kIq1MScales + 2 * k);
    const std::uint16_t d_bits =
        static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                   ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    const float d = f32_from_f16(d_bits);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const unsigned shift = 6 * (ib % 2);
      const float dl1 = d * (2 * ((sc[ib / 2] >> shift) & 0x7) + 1);
      const float dl2 = d * (2 * ((sc[ib / 2] >> (shift + 3)) & 0x7) + 1);
      const std::uint8_t* qs = b + kIq1MQs + 4 * ib;
      const std::uint8_t* qh = b + kIq1MQh + 2 * ib;
      for (int l = 0; l < 4; ++l) {
        // Group l's high index bits and delta sign: nibble l % 2 of qh[l / 2].
        const unsigned h = qh[l / 2] >> (4 * (l % 2));
        const unsigned index = qs[l] | ((h & 7) << 8);
        const float delta = h & 8 ? -kIq1Delta : kIq1Delta;
        put_iq1(out, l < 2 ? dl1 : dl2, kIq1SGrid[index], delta);
        out += 8;
      }
    }
  }
}

void dequantize_iq4_xs(const std::uint8_t* blocks, float* out,
                       std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    const std::uint8_t* b = blocks + i * kIq4XsBytes;
    const float d = load_f16(b);
    for (int ib = 0; ib < kSubBlocks; ++ib) {
      const int ls = iq4_xs_scale(b, ib);
      const float dl = d * (ls - 32);
      const std::uint8_t* qs = b + kIq4XsQs + 16 * ib;
      for (int j = 0; j < 16; ++j) {
        out[j] = dl * kIq4Codebook[qs[j] & 0xf];
        out[j + 16] = dl * kIq4Codebook[qs[j] >> 4];
      }
      out += kSubBlock;
    }
  }
}

void quantize_iq4_xs(const float* in, std::uint8_t* blocks,
                     std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    quantize_iq4_xs_block(in + i * kSuperBlock, blocks + i * kIq4XsBytes);
  }
}

}  // namespace tessel::quant

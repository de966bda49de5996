// The scalar conversions of the GGUF block formats, with ggml's exact
// semantics (where tessel's own f16 conversion differs: a NaN scale becomes
// the canonical 0x7E00 quiet NaN, as ggml stores it, not a payload-keeping
// one), and ggml's round-to-nearest trick. The block codecs use these and
// nothing else for their scalars, so that their bytes match ggml's.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace tessel::quant {

// f16 bits -> f32: normal values by exponent rebias and a scaling multiply,
// subnormals through a magic-bias subtraction (the FP16 library's method,
// which ggml uses). A NaN comes out quiet with its payload.
inline float f32_from_f16(std::uint16_t h) {
  const std::uint32_t w = static_cast<std::uint32_t>(h) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normalized =
      std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized =
      std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t bits =
      sign | (two_w < (1u << 27) ? std::bit_cast<std::uint32_t>(denormalized)
                                 : std::bit_cast<std::uint32_t>(normalized));
  return std::bit_cast<float>(bits);
}

// f32 -> f16 bits, round to nearest even; overflow is Inf; NaN is 0x7E00
// with the sign.
inline std::uint16_t f16_from_f32(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(base);
  const std::uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const std::uint32_t mantissa_bits = bits & 0x00000FFFu;
  const std::uint32_t nonsign = exp_bits + mantissa_bits;
  return static_cast<std::uint16_t>((sign >> 16) |
                                    (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// Round to nearest (ties to even) for |x| <= 4194303 by adding 1.5 * 2^23:
// the integer lands in the low mantissa bits. ggml's nearest_int.
inline int nearest_int(float x) {
  const float biased = x + 12582912.f;
  std::int32_t i;
  std::memcpy(&i, &biased, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

// E8M0 (MXFP4's shared exponent) -> f32: 2^(x - 127), and 2^(x - 128) for
// the halved form MXFP4 decodes with (its E2M1 codes are stored doubled).
inline float f32_from_e8m0(std::uint8_t x) {
  return std::bit_cast<float>(x == 0 ? 0x00400000u
                                     : static_cast<std::uint32_t>(x) << 23);
}
inline float f32_from_e8m0_half(std::uint8_t x) {
  return std::bit_cast<float>(x < 2 ? 0x00200000u << x
                                    : static_cast<std::uint32_t>(x - 1) << 23);
}

// The value of largest magnitude in x[0, n) (the first on ties) and that
// magnitude, found by ggml's `if (amax < |x|)` scan: a NaN never wins.
// The symmetric types' scales come from `max` with its sign.
struct SignedMax {
  float amax = 0.0f;
  float max = 0.0f;
};
inline SignedMax signed_absmax(const float* x, int n) {
  SignedMax m;
  for (int j = 0; j < n; ++j) {
    const float ax = std::fabs(x[j]);
    if (m.amax < ax) {
      m.amax = ax;
      m.max = x[j];
    }
  }
  return m;
}

// max |x| over x[0, n) as ggml's MAX(amax, fabsf(v)) macro computes it
// (a > b ? a : b): a NaN is taken, then dropped by the next element, so only
// a NaN in the last position survives into the scale.
inline float absmax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(x[j]);
    amax = amax > a ? amax : a;
  }
  return amax;
}

// Little-endian loads and stores of the blocks' multi-byte fields (GGUF is
// little-endian). On little-endian hosts they are one memcpy each, a plain
// move: GCC 12 left the byte-by-byte form as separate byte stores, and a
// load of the field right after them (a Q8_0 activation block's scale read
// back for its f32 copy) stalled on the store-to-load forward.
inline std::uint16_t load_u16(const std::uint8_t* p) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
inline void store_u16(std::uint8_t* p, std::uint16_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, 2);
    return;
  }
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
inline std::uint32_t load_u32(const std::uint8_t* p) {
  if constexpr (std::endian::native == std::endian::little) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  return static_cast<std::uint32_t>(p[0]) |
         (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) |
         (static_cast<std::uint32_t>(p[3]) << 24);
}
inline void store_u32(std::uint8_t* p, std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, 4);
    return;
  }
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
inline float load_f16(const std::uint8_t* p) {
  return f32_from_f16(load_u16(p));
}
inline void store_f16(std::uint8_t* p, float v) {
  store_u16(p, f16_from_f32(v));
}
inline float load_f32(const std::uint8_t* p) {
  return std::bit_cast<float>(load_u32(p));
}
inline void store_f32(std::uint8_t* p, float v) {
  store_u32(p, std::bit_cast<std::uint32_t>(v));
}

// The 6-bit scales and mins of a Q4_K/Q5_K super-block: 12 bytes hold
// sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins),
// and 4-7 in the nibbles of bytes 8-11 topped up by the two high bits of
// bytes 0-7. Unpacked four at a time as 32-bit words.
struct K4Scales {
  std::uint32_t scales_lo, scales_hi, mins_lo, mins_hi;  // 4 bytes each
};
inline K4Scales unpack_k4_scales(const std::uint8_t* table) {
  const std::uint32_t a = load_u32(table), b = load_u32(table + 4),
                      c = load_u32(table + 8);
  constexpr std::uint32_t k6 = 0x3f3f3f3f, k4 = 0x0f0f0f0f, k2 = 0x03030303;
  return {a & k6, (c & k4) | (((a >> 6) & k2) << 4), b & k6,
          ((c >> 4) & k4) | (((b >> 6) & k2) << 4)};
}

}  // namespace tessel::quant

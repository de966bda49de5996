// Codecs of the 32-element "legacy" blocks (Q4_0 … Q8_1), the 4-bit
// codebook IQ4_NL, microscaling MXFP4 and the 256-element ternary TQ1_0 and
// TQ2_0. Each follows ggml-quants.c operation for operation: the same float
// expressions in the same order (division where ggml divides, a reciprocal
// where it multiplies), the same scalar conversions (scalars.hpp), and the
// same integer wrap-around where ggml converts a float to a narrow integer.
// Changing any of that changes bytes, not just accuracy.
//
// Every block is parsed as an exact little-endian byte layout; the offsets
// below are GGUF's (../shared/FORMATS.md §2 lists the Q types; IQ4_NL,
// MXFP4 and TQ* follow ggml-common.h). Within a 32-element block,
// packed nibbles always pair element j (low nibble) with element j + 16
// (high nibble) in byte j.
#include <cmath>
#include <cstdint>
#include <limits>

#include "backends/cpu/simd/legacy_quantize_simd.hpp"
#include "quant/block_codecs.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"

namespace tessel::quant {

namespace {

constexpr int kQk = 32;          // elements per legacy / IQ4_NL / MXFP4 block
constexpr int kQkTernary = 256;  // elements per TQ block (ggml's QK_K)

// ggml's quantisers store `(int8_t)f` / `(uint8_t)f` for a float f. That is
// undefined in C for out-of-range f, so the bytes are what x86-64 compilers
// emit: cvttss2si to int32 (NaN and out-of-range give INT32_MIN, the
// "integer indefinite") and keep the low byte. A NaN or infinite scaled
// value (a subnormal scale's reciprocal overflows) thus stores code 0, and
// MXFP4's exponent of a tiny amax wraps modulo 256.
std::uint8_t low_byte_of_truncation(float v) {
  std::int32_t i = std::numeric_limits<std::int32_t>::min();
  if (v >= -2147483648.f && v < 2147483648.f) i = static_cast<std::int32_t>(v);
  return static_cast<std::uint8_t>(i);
}

// The trit (0, 1, 2 for -1, 0, 1) of `(int)(lroundf(v) + 1)`, which the TQ
// quantisers compute. glibc's lroundf returns LONG_MIN for NaN and Inf, whose
// low 32 bits are 0, so those encode as trit 1, the zero.
int ternary_digit(float v) {
  const float r = std::round(v);  // halves away from zero, as lroundf
  if (!(std::fabs(r) < 0x1p63f)) return 1;
  return static_cast<int>(static_cast<std::int64_t>(r) + 1);
}

// min and max of x[0, n), starting from ±FLT_MAX as ggml does (so an
// all-NaN block gives min = FLT_MAX, max = -FLT_MAX).
struct Range {
  float min = std::numeric_limits<float>::max();
  float max = -std::numeric_limits<float>::max();
};
Range value_range(const float* x, int n) {
  Range r;
  for (int j = 0; j < n; ++j) {
    if (x[j] < r.min) r.min = x[j];
    if (x[j] > r.max) r.max = x[j];
  }
  return r;
}

// The reciprocal every legacy quantiser multiplies by (0 for a zero scale).
float inverse_or_zero(float d) { return d != 0.0f ? 1.0f / d : 0.0f; }

// ---- Q4_0: [f16 d][16 B nibbles], x = (q - 8) * d ----
// d = max / -8 (max = the signed value of largest magnitude), so max codes
// as q = 0 and the other side of zero gets the spare level 15.
namespace q4_0 {
constexpr DType kDType = DType::Q4_0;
constexpr int kElements = kQk;
constexpr int kBytes = 18;
constexpr int kD = 0;
constexpr int kQs = 2;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  for (int j = 0; j < kQk / 2; ++j) {
    const int q0 = (b[kQs + j] & 0x0F) - 8;
    const int q1 = (b[kQs + j] >> 4) - 8;
    y[j] = static_cast<float>(q0) * d;
    y[j + kQk / 2] = static_cast<float>(q1) * d;
  }
}

// Rounds by truncating x/d + 8.5 (half up), clamped to 15 (x = -max).
std::uint8_t code(float v) {
  const auto q = static_cast<std::int8_t>(low_byte_of_truncation(v + 8.5f));
  return static_cast<std::uint8_t>(q < 15 ? q : 15);
}

void encode(const float* x, std::uint8_t* b) {
  const SignedMax m = signed_absmax(x, kQk);
  const float d = m.max / -8.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  for (int j = 0; j < kQk / 2; ++j) {
    b[kQs + j] = static_cast<std::uint8_t>(code(x[j] * id) |
                                           (code(x[j + kQk / 2] * id) << 4));
  }
}
}  // namespace q4_0

// ---- Q4_1: [f16 d][f16 m][16 B nibbles], x = q * d + m ----
// Asymmetric: m = min, d = (max - min) / 15. The scale and the reciprocal
// stay f32 while encoding; only the stored d and m are rounded to f16.
namespace q4_1 {
constexpr DType kDType = DType::Q4_1;
constexpr int kElements = kQk;
constexpr int kBytes = 20;
constexpr int kD = 0;
constexpr int kM = 2;
constexpr int kQs = 4;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  const float m = load_f16(b + kM);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = static_cast<float>(b[kQs + j] & 0x0F) * d + m;
    y[j + kQk / 2] = static_cast<float>(b[kQs + j] >> 4) * d + m;
  }
}

std::uint8_t code(float v) {
  const auto q = static_cast<std::int8_t>(low_byte_of_truncation(v + 0.5f));
  return static_cast<std::uint8_t>(q < 15 ? q : 15);
}

void encode(const float* x, std::uint8_t* b) {
  const Range r = value_range(x, kQk);
  const float d = (r.max - r.min) / 15.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  store_f16(b + kM, r.min);
  for (int j = 0; j < kQk / 2; ++j) {
    const std::uint8_t q0 = code((x[j] - r.min) * id);
    const std::uint8_t q1 = code((x[j + kQk / 2] - r.min) * id);
    b[kQs + j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
  }
}
}  // namespace q4_1

// The fifth bits of Q5_0 / Q5_1: a little-endian u32 whose bit j belongs
// to element j, beside the usual low nibbles.
int five_bit_code(const std::uint8_t* qs, std::uint32_t qh, int element) {
  const int j = element % (kQk / 2);
  const int low = element < kQk / 2 ? qs[j] & 0x0F : qs[j] >> 4;
  return low | static_cast<int>(((qh >> element) & 1u) << 4);
}

void pack_five_bit_codes(const std::uint8_t* q, std::uint8_t* qs,
                         std::uint8_t* qh) {
  std::uint32_t high = 0;
  for (int j = 0; j < kQk / 2; ++j) {
    const std::uint8_t q0 = q[j];
    const std::uint8_t q1 = q[j + kQk / 2];
    qs[j] = static_cast<std::uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
    high |= static_cast<std::uint32_t>((q0 & 0x10u) >> 4) << j;
    high |= static_cast<std::uint32_t>((q1 & 0x10u) >> 4) << (j + kQk / 2);
  }
  store_u32(qh, high);
}

// ---- Q5_0: [f16 d][u32 qh][16 B nibbles], x = (q - 16) * d ----
// Q4_0 with a fifth bit: d = max / -16, codes clamped to 31.
namespace q5_0 {
constexpr DType kDType = DType::Q5_0;
constexpr int kElements = kQk;
constexpr int kBytes = 22;
constexpr int kD = 0;
constexpr int kQh = 2;
constexpr int kQs = 6;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  const std::uint32_t qh = load_u32(b + kQh);
  for (int i = 0; i < kQk; ++i) {
    y[i] = static_cast<float>(five_bit_code(b + kQs, qh, i) - 16) * d;
  }
}

void encode(const float* x, std::uint8_t* b) {
  const SignedMax m = signed_absmax(x, kQk);
  const float d = m.max / -16.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  std::uint8_t q[kQk];
  for (int i = 0; i < kQk; ++i) {
    const auto c =
        static_cast<std::int8_t>(low_byte_of_truncation(x[i] * id + 16.5f));
    q[i] = static_cast<std::uint8_t>(c < 31 ? c : 31);
  }
  pack_five_bit_codes(q, b + kQs, b + kQh);
}
}  // namespace q5_0

// ---- Q5_1: [f16 d][f16 m][u32 qh][16 B nibbles], x = q * d + m ----
// Q4_1 with a fifth bit: d = (max - min) / 31. ggml does not clamp these
// codes (x - min <= max - min keeps them in range for finite input).
namespace q5_1 {
constexpr DType kDType = DType::Q5_1;
constexpr int kElements = kQk;
constexpr int kBytes = 24;
constexpr int kD = 0;
constexpr int kM = 2;
constexpr int kQh = 4;
constexpr int kQs = 8;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  const float m = load_f16(b + kM);
  const std::uint32_t qh = load_u32(b + kQh);
  for (int i = 0; i < kQk; ++i) {
    y[i] = static_cast<float>(five_bit_code(b + kQs, qh, i)) * d + m;
  }
}

void encode(const float* x, std::uint8_t* b) {
  const Range r = value_range(x, kQk);
  const float d = (r.max - r.min) / 31.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  store_f16(b + kM, r.min);
  std::uint8_t q[kQk];
  for (int i = 0; i < kQk; ++i) {
    q[i] = low_byte_of_truncation((x[i] - r.min) * id + 0.5f);
  }
  pack_five_bit_codes(q, b + kQs, b + kQh);
}
}  // namespace q5_1

// Q8_0 / Q8_1 codes: roundf (halves away from zero) of x / d, d = amax/127.
// Inline rather than libm's roundf (a call per value unless the build
// targets SSE4.1, which the portable one does not): below 2^23 the
// truncation and the fraction v - t are exact, so comparing the fraction
// with +-0.5 rounds exactly as roundf; larger values, Inf and NaN are
// integral already or take the truncation rule.
std::int8_t q8_code(float v) {
  if (std::fabs(v) < 0x1p23f) {
    const auto t = static_cast<std::int32_t>(v);
    const float fraction = v - static_cast<float>(t);
    const std::int32_t r = t + (fraction >= 0.5f) - (fraction <= -0.5f);
    return static_cast<std::int8_t>(static_cast<std::uint8_t>(r));
  }
  return static_cast<std::int8_t>(low_byte_of_truncation(v));
}

// Q8_0 / Q8_1 decode: 32 int8 codes times d.
void decode_int8_codes(const std::uint8_t* qs, float d, float* y) {
  for (int j = 0; j < kQk; ++j) {
    y[j] = static_cast<float>(static_cast<std::int8_t>(qs[j])) * d;
  }
}

// ---- Q8_0: [f16 d][32 x i8], x = q * d ----
namespace q8_0 {
constexpr DType kDType = DType::Q8_0;
constexpr int kElements = kQk;
constexpr int kBytes = 34;
constexpr int kD = 0;
constexpr int kQs = 2;

void decode(const std::uint8_t* b, float* y) {
  decode_int8_codes(b + kQs, load_f16(b + kD), y);
}

void encode(const float* x, std::uint8_t* b) {
  const float d = absmax(x, kQk) / 127.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  for (int j = 0; j < kQk; ++j) {
    b[kQs + j] = static_cast<std::uint8_t>(q8_code(x[j] * id));
  }
}
}  // namespace q8_0

// ---- Q8_1: [f16 d][f16 s][32 x i8], x = q * d; s = d * sum(q) ----
// s (from the f32 d) only feeds ggml's dot products. ggml has no Q8_1
// dequantiser; decoding ignores s and computes q * d as Q8_0 does.
namespace q8_1 {
constexpr DType kDType = DType::Q8_1;
constexpr int kElements = kQk;
constexpr int kBytes = 36;
constexpr int kD = 0;
constexpr int kS = 2;
constexpr int kQs = 4;

void decode(const std::uint8_t* b, float* y) {
  decode_int8_codes(b + kQs, load_f16(b + kD), y);
}

void encode(const float* x, std::uint8_t* b) {
  const float d = absmax(x, kQk) / 127.0f;
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  int sum = 0;
  for (int j = 0; j < kQk; ++j) {
    const std::int8_t q = q8_code(x[j] * id);
    b[kQs + j] = static_cast<std::uint8_t>(q);
    sum += q;
  }
  store_f16(b + kS, static_cast<float>(sum) * d);
}
}  // namespace q8_1

// ---- IQ4_NL: [f16 d][16 B nibbles], x = d * kIq4Codebook[q] ----
namespace iq4_nl {
constexpr DType kDType = DType::IQ4_NL;
constexpr int kElements = kQk;
constexpr int kBytes = 18;
constexpr int kD = 0;
constexpr int kQs = 2;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = d * static_cast<float>(kIq4Codebook[b[kQs + j] & 0x0F]);
    y[j + kQk / 2] = d * static_cast<float>(kIq4Codebook[b[kQs + j] >> 4]);
  }
}

// One group of the shared IQ4 search (iq4_codebook.hpp); the codes are
// re-picked with 1 / d of the unrounded d, as ggml does.
void encode(const float* x, std::uint8_t* b) {
  const float d = iq4_group_scale(x);
  store_f16(b + kD, d);
  const float id = d != 0.0f ? 1 / d : 0.0f;
  for (int j = 0; j < kQk / 2; ++j) {
    const int q0 = nearest_iq4_code(id * x[j]);
    const int q1 = nearest_iq4_code(id * x[j + kQk / 2]);
    b[kQs + j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
  }
}

// ggml's quantize_row_iq4_nl_ref (quantize_row_iq4_nl_impl with ntry -1):
// the codes that put the largest magnitude on codebook[0] = -127, then
// their least-squares scale (weights x^2; 0 unless positive), with no
// search over nearby scales and the codes kept. A group below 1e-15 gets scale
// 0 and the code of 0 (ggml leaves whatever its buffer held; either decodes to
// 0).
void encode_runtime(const float* x, std::uint8_t* b) {
  constexpr float kGroupMaxEps = 1e-15f;
  const auto [amax, max] = signed_absmax(x, kQk);
  std::uint8_t codes[kQk];
  float d = 0.0f;
  if (amax < kGroupMaxEps) {
    for (auto& c : codes) c = static_cast<std::uint8_t>(nearest_iq4_code(0));
  } else {
    float sumqx, sumq2;
    iq4_fit(x, 1 / (max / kIq4Codebook[0]), sumqx, sumq2, codes);
    // ggml's guard: a NaN among the values makes sumq2 NaN, and d 0.
    d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
  }
  store_f16(b + kD, d);
  for (int j = 0; j < kQk / 2; ++j) {
    b[kQs + j] =
        static_cast<std::uint8_t>(codes[j] | (codes[j + kQk / 2] << 4));
  }
}
}  // namespace iq4_nl

// ---- MXFP4: [e8m0 e][16 B nibbles], x = kE2m1Doubled[q] * 2^(e - 128) ----
// The format's codebook: FP4 E2M1 (sign bit 3; 0, 0.5, 1, 1.5, 2, 3, 4, 6)
// stored doubled so the levels are integers, hence the halved E8M0 scale.
constexpr std::int8_t kE2m1Doubled[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                          0, -1, -2, -3, -4, -6, -8, -12};

namespace mxfp4 {
constexpr DType kDType = DType::MXFP4;
constexpr int kElements = kQk;
constexpr int kBytes = 17;
constexpr int kE = 0;
constexpr int kQs = 1;

void decode(const std::uint8_t* b, float* y) {
  const float d = f32_from_e8m0_half(b[kE]);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = static_cast<float>(kE2m1Doubled[b[kQs + j] & 0x0F]) * d;
    y[j + kQk / 2] = static_cast<float>(kE2m1Doubled[b[kQs + j] >> 4]) * d;
  }
}

// Exhaustive nearest level (first index on ties, so +0 beats -0).
int nearest_index(float x, float d) {
  int best = 0;
  float best_err = std::fabs(static_cast<float>(kE2m1Doubled[0]) * d - x);
  for (int i = 1; i < 16; ++i) {
    const float err = std::fabs(static_cast<float>(kE2m1Doubled[i]) * d - x);
    if (err < best_err) {
      best = i;
      best_err = err;
    }
  }
  return best;
}

// e = floor(log2(amax)) - 2 + 127 puts amax in the top binade of the scaled
// codebook (levels up to 6 = 1.5 * 2^2). ggml takes log2f from libm and
// casts the float to uint8_t, so a subnormal amax wraps (see
// low_byte_of_truncation) and an infinite one gives e = 0.
void encode(const float* x, std::uint8_t* b) {
  float amax = 0.0f;
  for (int j = 0; j < kQk; ++j) {
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
  }
  const std::uint8_t e =
      amax > 0.0f
          ? low_byte_of_truncation(std::floor(std::log2(amax)) - 2.0f + 127.0f)
          : 0;
  const float d = f32_from_e8m0_half(e);
  b[kE] = e;
  for (int j = 0; j < kQk / 2; ++j) {
    const int q0 = nearest_index(x[j], d);
    const int q1 = nearest_index(x[j + kQk / 2], d);
    b[kQs + j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
  }
}
}  // namespace mxfp4

// ---- TQ1_0: [48 B qs][4 B qh][f16 d], 256 trits t, x = (t - 1) * d ----
// Five trits per byte: a byte holds ceil(v * 256 / 243) for the base-3
// number v = t0 t1 t2 t3 t4 (t0 most significant), so trit n is the top
// base-3 digit of (byte * 3^n mod 256), read as (that * 3) >> 8. qs[0, 32)
// hold elements m + 32n (elements 0..159), qs[32, 48) elements 160 + m + 16n,
// and qh[j] elements 240 + j + 4n for n < 4, with a zero fifth trit.
// d = amax, so every |x| / d <= 1 rounds to a trit.
namespace tq1_0 {
constexpr DType kDType = DType::TQ1_0;
constexpr int kElements = kQkTernary;
constexpr int kBytes = 54;
constexpr int kQs = 0;
constexpr int kQh = 48;
constexpr int kD = 52;
constexpr int kQhBytes = 4;
constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};

float trit_value(std::uint8_t byte, int n, float d) {
  const auto shifted = static_cast<std::uint8_t>(byte * kPow3[n]);
  const int t = (shifted * 3) >> 8;
  return static_cast<float>(t - 1) * d;
}

// Decodes `bytes` bytes of `trits` trits each into elements m + bytes * n.
void decode_group(const std::uint8_t* q, int bytes, int trits, float d,
                  float* y) {
  for (int n = 0; n < trits; ++n) {
    for (int m = 0; m < bytes; ++m) y[m + bytes * n] = trit_value(q[m], n, d);
  }
}

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  decode_group(b + kQs, 32, 5, d, y);
  decode_group(b + kQs + 32, 16, 5, d, y + 160);
  decode_group(b + kQh, kQhBytes, 4, d, y + 240);
}

// ceil(v * 256 / 243): the smallest byte whose decoding yields v's trits.
std::uint8_t pack_trits(std::uint8_t v) {
  return static_cast<std::uint8_t>((v * 256 + (243 - 1)) / 243);
}

// Encodes elements m + bytes * n (n < trits) of x into byte m, the first
// trit most significant; a 4-trit group gets a zero fifth trit.
void encode_group(const float* x, float id, int bytes, int trits,
                  std::uint8_t* q) {
  for (int m = 0; m < bytes; ++m) {
    std::uint8_t v = 0;
    for (int n = 0; n < trits; ++n) {
      v = static_cast<std::uint8_t>(v * 3 +
                                    ternary_digit(x[m + bytes * n] * id));
    }
    if (trits == 4) v = static_cast<std::uint8_t>(v * 3);
    q[m] = pack_trits(v);
  }
}

void encode(const float* x, std::uint8_t* b) {
  const float d = absmax(x, kQkTernary);
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  encode_group(x, id, 32, 5, b + kQs);
  encode_group(x + 160, id, 16, 5, b + kQs + 32);
  encode_group(x + 240, id, kQhBytes, 4, b + kQh);
}
}  // namespace tq1_0

// ---- TQ2_0: [64 B qs][f16 d], 256 2-bit trits t, x = (t - 1) * d ----
// Byte 32c + m holds elements 128c + m + 32n at bits 2n (n < 4). d = amax.
namespace tq2_0 {
constexpr DType kDType = DType::TQ2_0;
constexpr int kElements = kQkTernary;
constexpr int kBytes = 66;
constexpr int kQs = 0;
constexpr int kD = 64;

void decode(const std::uint8_t* b, float* y) {
  const float d = load_f16(b + kD);
  for (int c = 0; c < 2; ++c) {
    for (int n = 0; n < 4; ++n) {
      for (int m = 0; m < 32; ++m) {
        const int t = (b[kQs + 32 * c + m] >> (2 * n)) & 3;
        y[128 * c + 32 * n + m] = static_cast<float>(t - 1) * d;
      }
    }
  }
}

void encode(const float* x, std::uint8_t* b) {
  const float d = absmax(x, kQkTernary);
  const float id = inverse_or_zero(d);
  store_f16(b + kD, d);
  for (int c = 0; c < 2; ++c) {
    for (int m = 0; m < 32; ++m) {
      unsigned v = 0;
      for (int n = 0; n < 4; ++n) {
        const int t = ternary_digit(x[128 * c + 32 * n + m] * id);
        v += static_cast<unsigned>(t & 3) << (2 * n);
      }
      b[kQs + 32 * c + m] = static_cast<std::uint8_t>(v);
    }
  }
}
}  // namespace tq2_0

}  // namespace

// Blocks are independent: the public functions just walk them. The scalar
// encoders run where quantize_blocks_simd declines; it takes Q4_0 and Q8_0
// on AVX2 and up, with the same bytes (cpu/simd/legacy_quantize_simd.hpp).
#define TESSEL_DEFINE_LEGACY_CODEC(name)                                    \
  void dequantize_##name(const std::uint8_t* blocks, float* out,            \
                         std::int64_t nblocks) {                            \
    for (std::int64_t i = 0; i < nblocks; ++i) {                            \
      name::decode(blocks + i * name::kBytes, out + i * name::kElements);   \
    }                                                                       \
  }                                                                         \
  void quantize_##name(const float* in, std::uint8_t* blocks,               \
                       std::int64_t nblocks) {                              \
    if (cpu::simd::quantize_blocks_simd(name::kDType, in, blocks, nblocks)) \
      return;                                                               \
    for (std::int64_t i = 0; i < nblocks; ++i) {                            \
      name::encode(in + i * name::kElements, blocks + i * name::kBytes);    \
    }                                                                       \
  }
TESSEL_LEGACY_BLOCK_TYPES(TESSEL_DEFINE_LEGACY_CODEC)
#undef TESSEL_DEFINE_LEGACY_CODEC

void quantize_iq4_nl_runtime(const float* in, std::uint8_t* blocks,
                             std::int64_t nblocks) {
  for (std::int64_t i = 0; i < nblocks; ++i) {
    iq4_nl::encode_runtime(in + i * iq4_nl::kElements,
                           blocks + i * iq4_nl::kBytes);
  }
}

}  // namespace tessel::quant

// Block-quantised tensors through the public API: hand-built blocks whose
// decoded values and encoded bytes are worked out below, conversions through
// views, the op-level rule that block operands compute in f32 (DESIGN §1
// rule 4), and the refusals. Bit-exactness against ggml for every type and
// many inputs is tests/oracle/test_quant_ggml.py's job.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backends/cpu/simd/dequant_simd.hpp"
#include "backends/cpu/simd/legacy_quantize_simd.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const std::uint8_t*>(t.raw_data());
  return {p, p + storage_bytes(t.dtype(), t.numel())};
}

using testing::from_bytes;

std::vector<float> values_of(const Tensor& t) {
  const Tensor f = t.to(DType::F32).contiguous();
  const float* p = f.data<float>();
  return {p, p + f.numel()};
}

// x_j = (j mod 16) - 8: the largest magnitude is -8, so Q4_0's scale is
// d = -8 / -8 = 1 and each code is x_j + 8 = j mod 16. Byte j < 16 holds
// element j (low nibble) and element j + 16 (high): (j | j << 4) = 17 j.
TEST(BlockQuant, Q4_0EncodesAndDecodesAHandWorkedBlock) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j % 16 - 8);
  const Tensor q = from_vector(x, {1, 32}).to(DType::Q4_0);
  const std::vector<std::uint8_t> b = bytes_of(q);
  ASSERT_EQ(b.size(), 18u);
  EXPECT_EQ(b[0], 0x00);  // d = 1.0 as f16 0x3C00, little-endian
  EXPECT_EQ(b[1], 0x3C);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(b[2 + j], 17 * j) << j;
  EXPECT_EQ(values_of(q), x);
}

// IQ4_NL's run-time quantiser (ggml's from_float, which fills llama.cpp's
// KV cache): the largest value, 127, goes onto codebook[0] = -127, so
// 1 / d = -1; values that are codebook values negated get their codes
// exactly, and the least-squares scale sum(x^3 q) / sum(x^2 q^2) with
// q = -x is -1 (f16 0xBC00).
TEST(BlockQuant, Iq4NlRuntimeQuantiserTakesTheScaleFromTheLargestValue) {
  constexpr std::int8_t kCodebook[16] = {
      -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = -static_cast<float>(kCodebook[j % 16]);
  CastOptions runtime;
  runtime.runtime_quantizer = true;
  const Tensor q = from_vector(x, {1, 32}).to(DType::IQ4_NL, runtime);
  const std::vector<std::uint8_t> b = bytes_of(q);
  ASSERT_EQ(b.size(), 18u);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0xBC);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(b[2 + j], 17 * j) << j;
  EXPECT_EQ(values_of(q), x);
  // On random data it is not the file quantiser (ggml_quantize_chunk's
  // search over 15 more scales), which fits at least as well in its
  // weighted sense; every other type quantises one way.
  Generator g(4);
  const Tensor r = randn({8, 256}, g);
  EXPECT_NE(bytes_of(r.to(DType::IQ4_NL, runtime)),
            bytes_of(r.to(DType::IQ4_NL)));
  for (const DType d : {DType::Q8_0, DType::Q4_0, DType::Q5_1, DType::Q4_K}) {
    EXPECT_EQ(bytes_of(r.to(d, runtime)), bytes_of(r.to(d))) << dtype_name(d);
  }
}

// max |x| = 127 makes Q8_0's scale exactly 1: codes are the values.
TEST(BlockQuant, Q8_0StoresIntegersExactlyWhenTheScaleIsOne) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(4 * j - 64);
  x[0] = -127;
  const Tensor q = from_vector(x, {32}).to(DType::Q8_0);
  const std::vector<std::uint8_t> b = bytes_of(q);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0x3C);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(static_cast<std::int8_t>(b[2 + j]), static_cast<int>(x[j]));
  }
  EXPECT_EQ(values_of(q), x);
}

// With scale 1 (max |x| = 127) every x.5 is a tie, which Q8_0 rounds away
// from zero (ggml's roundf), and values just inside a tie round inward.
TEST(BlockQuant, Q8_0RoundsHalvesAwayFromZero) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127;
  const float below_half = std::nextafter(0.5f, 0.0f);
  const std::vector<std::pair<float, int>> cases = {
      {0.5f, 1},        {-0.5f, -1},      {1.5f, 2},          {-1.5f, -2},
      {2.5f, 3},        {-2.5f, -3},      {126.5f, 127},      {below_half, 0},
      {-below_half, 0}, {1.49999988f, 1}, {-1.49999988f, -1}, {0.25f, 0},
      {-0.75f, -1}};
  for (std::size_t i = 0; i < cases.size(); ++i) x[1 + i] = cases[i].first;
  const std::vector<std::uint8_t> b =
      bytes_of(from_vector(x, {32}).to(DType::Q8_0));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(static_cast<std::int8_t>(b[3 + i]), cases[i].second)
        << "x = " << cases[i].first;
  }
}

// A Q4_K super-block: d = 1, dmin = 0.5, 8 sub-blocks of 32 with 6-bit
// scales and mins packed in 12 bytes. Bytes 0-3 hold sub-blocks 0-3's scale
// (2), bytes 4-7 their min (1); bytes 8-11 hold sub-blocks 4-7's scale (low
// nibble, 3) and min (high nibble, 1), whose top bits would come from the
// top 2 bits of bytes 0-7 (zero here). Every 4-bit code is 5 (0x55), so
// sub-blocks 0-3 decode to 1 * 2 * 5 - 0.5 * 1 = 9.5 and 4-7 to
// 1 * 3 * 5 - 0.5 * 1 = 14.5; elements 0-127 are sub-blocks 0-3 (each
// 64-element chunk is 32 low nibbles, then 32 high ones).
TEST(BlockQuant, Q4_KDecodesAHandBuiltSuperBlock) {
  std::vector<std::uint8_t> b(144, 0x55);
  b[0] = 0x00, b[1] = 0x3C;  // d = 1
  b[2] = 0x00, b[3] = 0x38;  // dmin = 0.5
  for (int i = 0; i < 4; ++i) b[4 + i] = 2;
  for (int i = 4; i < 8; ++i) b[4 + i] = 1;
  for (int i = 8; i < 12; ++i) b[4 + i] = 0x13;
  const std::vector<float> v = values_of(from_bytes(b, {256}, DType::Q4_K));
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(v[i], i < 128 ? 9.5f : 14.5f) << i;
  }
}

// |x - decoded| <= d / 2 from rounding plus |q| |d - f16(d)| <= 127 d 2^-11
// from storing d in f16: under 0.57 d, with d = max |x| / 127 per block.
TEST(BlockQuant, Q8_0RoundTripErrorIsBoundedByHalfAStepPerBlock) {
  Generator gen(3);
  const Tensor x = randn({8, 256}, gen);
  const std::vector<float> in = values_of(x);
  const std::vector<float> out = values_of(x.to(DType::Q8_0));
  for (std::size_t b = 0; b < in.size(); b += 32) {
    float amax = 0;
    for (std::size_t j = b; j < b + 32; ++j)
      amax = std::max(amax, std::abs(in[j]));
    const float d = amax / 127;
    for (std::size_t j = b; j < b + 32; ++j) {
      EXPECT_LE(std::abs(in[j] - out[j]), 0.57f * d) << j;
    }
  }
}

TEST(BlockQuant, RowViewsStayBlocksAndDecodeLikeTheirRows) {
  Generator gen(4);
  const Tensor x = randn({6, 64}, gen);
  const Tensor q = x.to(DType::Q4_1);
  const Tensor rows = q.slice(0, 1, 6, 2);  // rows 1, 3, 5: zero-copy
  EXPECT_EQ(rows.dtype(), DType::Q4_1);
  EXPECT_TRUE(rows.shares_storage_with(q));
  const Tensor all = q.to(DType::F32);
  EXPECT_TRUE(equal(rows.to(DType::F32), all.slice(0, 1, 6, 2).contiguous()));
  // Whole blocks along the row: the second 32 elements of each row.
  const Tensor halves = q.slice(1, 32, 64);
  EXPECT_TRUE(equal(halves.to(DType::F32), all.slice(1, 32, 64).contiguous()));
  // Copying into a view of whole blocks quantises into it.
  Tensor target = zeros({6, 64}).to(DType::Q4_1);
  target.slice(0, 1, 6, 2).copy_(x.slice(0, 1, 6, 2));
  EXPECT_TRUE(
      equal(target.slice(0, 1, 6, 2).to(DType::F32), rows.to(DType::F32)));
  EXPECT_TRUE(equal(target.slice(0, 0, 6, 2).to(DType::F32), zeros({3, 64})));
}

TEST(BlockQuant, OpsOnBlockOperandsComputeOnTheDequantisedValues) {
  Generator gen(5);
  const Tensor x = randn({4, 256}, gen);
  const Tensor q = x.to(DType::Q6_K);
  const Tensor f = q.to(DType::F32);
  const Tensor y = randn({4, 256}, gen);
  EXPECT_EQ(add(q, y).dtype(), DType::F32);
  EXPECT_TRUE(equal(add(q, y), add(f, y)));
  EXPECT_TRUE(equal(exp(q), exp(f)));
  EXPECT_TRUE(equal(sum(q, {1}), sum(f, {1})));
  EXPECT_TRUE(equal(max(q), max(f)));
  EXPECT_TRUE(equal(q.to(DType::BF16), f.to(DType::BF16)));
  // Requantising goes through f32 too.
  EXPECT_TRUE(equal(q.to(DType::Q8_0).to(DType::F32),
                    f.to(DType::Q8_0).to(DType::F32)));
}

// 127 everywhere: Q8_0's scale is 127 / 127 = 1 and every code 127.
TEST(BlockQuant, FillQuantisesTheFilledValues) {
  Tensor q = empty({2, 32}, DType::Q8_0);
  q.fill_(127);
  EXPECT_TRUE(equal(q.to(DType::F32), full({2, 32}, 127.0)));
  EXPECT_EQ(bytes_of(q)[2], 127);
}

TEST(BlockQuant, RefusalsNameTheProblem) {
  const Tensor x = zeros({2, 256});
  // ggml needs an importance matrix for the IQ1/IQ2/IQ3 lattices.
  try {
    (void)x.to(DType::IQ2_XXS);
    FAIL() << "quantising to iq2_xxs should be refused";
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.code(), "E2201");
    EXPECT_NE(std::string(e.what()).find("importance matrix"),
              std::string::npos);
  }
  // Rows that are not whole blocks, named with their length.
  Tensor odd = zeros({3, 96});
  odd.set_name("blk.0.ffn_up.weight");
  try {
    (void)odd.to(DType::Q4_K);
    FAIL() << "rows of 96 are not whole Q4_K blocks";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.code(), "E2102");
    const std::string what = e.what();
    EXPECT_NE(what.find("blk.0.ffn_up.weight"), std::string::npos) << what;
    EXPECT_NE(what.find("96"), std::string::npos) << what;
  }
  // A tensor that is already IQ2 still copies, as blocks, and decodes.
  Tensor iq = empty({256}, DType::IQ2_XXS);
  std::memset(iq.mutable_raw_data(), 0, 66);
  EXPECT_EQ(iq.clone().dtype(), DType::IQ2_XXS);
  EXPECT_TRUE(equal(iq.to(DType::F32), zeros({256})));
}

TEST(BlockQuant, MetaTensorsConvertWithoutData) {
  const Tensor m = empty({4, 512}, DType::F32, Device::meta());
  const Tensor q = m.to(DType::Q4_K);
  EXPECT_EQ(q.dtype(), DType::Q4_K);
  EXPECT_EQ(q.to(DType::F32).shape(), (Shape{4, 512}));
}

// An f32 output past the last-level cache (counted at most 32 MiB) is
// written with streaming stores, one run a thread for a contiguous tensor
// (src/backends/cpu/quantize.cpp); the same blocks taken 256 rows at a time
// (4 MiB, stored as usual, each a contiguous view at its own offset) and
// the left half of every row (a strided view, decoded a row at a time) give
// the same bits. Random bytes make NaN and infinite scales too, so bits,
// not values, compare.
TEST(BlockQuant, OutputsPastTheCacheDecodeBitForBitAsSmallOnes) {
  constexpr std::int64_t kRows = 2049, kCols = 4096;  // 33.6 MB of f32
  std::mt19937 bits(7);
  for (const DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K,
                           DType::Q6_K, DType::IQ4_XS}) {
    SCOPED_TRACE(dtype_name(type));
    std::vector<std::uint8_t> raw(storage_bytes(type, kRows * kCols));
    for (std::size_t i = 0; i + 4 <= raw.size(); i += 4) {
      const std::uint32_t word = bits();
      std::memcpy(&raw[i], &word, 4);
    }
    const Tensor q = from_bytes(raw, {kRows, kCols}, type);
    const Tensor whole = q.to(DType::F32);
    const auto* got = whole.data<float>();
    for (std::int64_t r0 = 0; r0 < kRows; r0 += 256) {
      const std::int64_t r1 = std::min(kRows, r0 + 256);
      const Tensor part = q.slice(0, r0, r1).to(DType::F32);
      ASSERT_EQ(std::memcmp(part.data<float>(), got + r0 * kCols,
                            static_cast<std::size_t>((r1 - r0) * kCols) * 4),
                0)
          << "rows " << r0 << "-" << r1;
    }
    const Tensor left = q.slice(1, 0, kCols / 2).to(DType::F32);
    for (std::int64_t r = 0; r < kRows; ++r) {
      ASSERT_EQ(std::memcmp(left.data<float>() + r * kCols / 2, got + r * kCols,
                            static_cast<std::size_t>(kCols / 2) * 4),
                0)
          << "row " << r << ", left half";
    }
  }
}

// The streamed decoders against the stored ones on every target, into a
// 32-byte-aligned buffer and one a float off it (which takes plain stores):
// the same bits, and the same answer as to whether a decoder ran.
TEST(BlockQuant, StreamedDecodersWriteTheSameBitsOnEveryTarget) {
  constexpr std::int64_t kValues = 64 * 256;
  std::mt19937 bits(11);
  for (const DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K,
                           DType::Q6_K, DType::IQ4_XS}) {
    SCOPED_TRACE(dtype_name(type));
    std::vector<std::uint8_t> raw(storage_bytes(type, kValues));
    for (auto& b : raw) b = static_cast<std::uint8_t>(bits());
    const std::int64_t blocks = kValues / dtype_traits(type).block_size;
    std::vector<float> stored(kValues), room(kValues + 16);
    float* aligned = room.data();
    while (reinterpret_cast<std::uintptr_t>(aligned) % 32 != 0) ++aligned;
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      SCOPED_TRACE(hwy::TargetName(target));
      const bool ran = cpu::simd::dequantize_blocks_simd(
          type, raw.data(), stored.data(), blocks, false);
      for (float* out : {aligned, aligned + 1}) {
        std::fill(room.begin(), room.end(), 0.0f);
        ASSERT_EQ(cpu::simd::dequantize_blocks_simd(type, raw.data(), out,
                                                    blocks, true),
                  ran);
        if (ran) {
          EXPECT_EQ(std::memcmp(out, stored.data(), sizeof(float) * kValues),
                    0);
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Q4_0's and Q8_0's vector encoders
// (backends/cpu/simd/legacy_quantize_simd.cpp) against the scalar encoders,
// which a target without them falls back to and tests/oracle/test_quant_ggml.py
// compares with ggml: blocks that reach each special case of the scalar code.
// The encoders take eight blocks at a time (Q8_0 scans the eight in order
// when one holds a NaN) and pad the last few with zero blocks, so the
// cases are grouped by eight, the last three blocks are a remainder, and
// each block is also encoded alone.
TEST(BlockQuant, LegacyVectorEncodersGiveTheScalarBytes) {
  constexpr int kBlocks = 8 * 8 + 3;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Generator g(5);
  std::vector<float> x = values_of(randn({kBlocks * 32}, g));
  const auto at = [&](int block, int j) -> float& { return x[32 * block + j]; };
  // Eight blocks without NaN: zeros of both signs (whatever their signs,
  // Q8_0's scale is +0 and Q4_0's -0, +0 / -8), ...
  for (int j = 0; j < 32; ++j) {
    at(1, j) = 0.0f;
    at(2, j) = -0.0f;
    at(3, j) = j % 2 ? 0.0f : -0.0f;
  }
  // ... halves: Q8_0's d = 127 / 127 and Q4_0's d = -8 / -8 make every
  // code a tie, rounded away from zero (Q8_0) or up (Q4_0's + 8.5), ...
  for (int j = 0; j < 32; ++j) {
    at(4, j) = static_cast<float>(j) - 15.5f;
    at(5, j) = static_cast<float>(j % 16) - 7.5f;
  }
  at(4, 31) = 127.0f;
  at(5, 5) = -8.0f;
  // ... the largest magnitude twice: the first, with its sign, is Q4_0's
  // max, ...
  at(6, 5) = -30.0f;
  at(6, 9) = 30.0f;
  at(7, 2) = 30.0f;
  at(7, 20) = -30.0f;
  // ... and values near 10^38, whose f16 scales overflow.
  for (int j = 0; j < 32; ++j) at(0, j) *= 3e37f;
  // Infinities (Q8_0's reciprocal is 0, the products of Inf NaN); scales
  // in f16's subnormal range; scales at its overflow: 65520 rounds to Inf
  // (the tie goes to the even Inf), 65519 to 65504.
  at(8, 3) = inf;
  at(9, 3) = -inf;
  at(9, 7) = inf;
  for (int j = 0; j < 32; ++j) at(10, j) *= 1e-4f;
  at(11, 3) = -8.0f * 65520.0f;
  at(12, 3) = 127.0f * 65520.0f;
  at(13, 3) = 127.0f * 65519.0f;
  at(14, 3) = -8.0f * 65519.0f;
  // Subnormals: the reciprocals overflow. Then a Q8_0 scale that is
  // subnormal in f32 while its reciprocal is finite (amax 1e-36).
  for (int j = 0; j < 32; ++j) {
    at(16, j) *= 1e-40f;
    at(17, j) *= 2e-37f;
  }
  at(17, 11) = 1e-36f;
  // NaN: Q8_0's scan keeps one only in the last place.
  at(24, 31) = nan;
  at(25, 0) = nan;
  at(26, 10) = nan;
  at(26, 20) = nan;
  for (int j = 0; j < 32; ++j) at(27, j) = nan;
  // A NaN with payload bits F16C would keep, last: Q8_0's scale is then
  // that NaN, stored as ggml's 0x7E00.
  at(28, 31) = std::bit_cast<float>(0x7FE00000u);
  // The remainder: a NaN and a tie of magnitudes.
  at(65, 31) = nan;
  at(66, 1) = -4.0f;
  at(66, 30) = 4.0f;
  const Tensor values = from_vector(x, {kBlocks, 32});
  // Taken before SetSupportedTargetsForTest, which narrows the list to the
  // chosen target.
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  std::int64_t scalar_target = 0;
  for (const std::int64_t target : targets) {
    if (target > HWY_AVX2) scalar_target = target;  // no vector encoder
  }
  if (scalar_target == 0) {
    GTEST_SKIP() << "every compiled target has the vector encoders";
  }
  struct ResetTargets {
    ~ResetTargets() { hwy::SetSupportedTargetsForTest(0); }
  } reset;
  for (const DType type : {DType::Q4_0, DType::Q8_0}) {
    SCOPED_TRACE(dtype_name(type));
    const std::size_t block_bytes = storage_bytes(type, 32);
    hwy::SetSupportedTargetsForTest(scalar_target);
    std::vector<std::uint8_t> got(block_bytes * kBlocks);
    ASSERT_FALSE(
        cpu::simd::quantize_blocks_simd(type, x.data(), got.data(), kBlocks));
    const std::vector<std::uint8_t> want = bytes_of(values.to(type));
    const auto expect_block = [&](const std::uint8_t* block, int b) {
      const std::uint8_t* first = want.data() + block_bytes * b;
      EXPECT_TRUE(std::equal(block, block + block_bytes, first))
          << "block " << b;
    };
    for (const std::int64_t target : targets) {
      hwy::SetSupportedTargetsForTest(target);
      SCOPED_TRACE(hwy::TargetName(target));
      const bool vector = target <= HWY_AVX2;
      // All at once (eight at a time from block 0, then the remainder).
      ASSERT_EQ(
          cpu::simd::quantize_blocks_simd(type, x.data(), got.data(), kBlocks),
          vector);
      if (vector) {
        for (int b = 0; b < kBlocks; ++b) {
          expect_block(got.data() + block_bytes * b, b);
        }
        // Each alone.
        for (int b = 0; b < kBlocks; ++b) {
          ASSERT_TRUE(cpu::simd::quantize_blocks_simd(type, x.data() + 32 * b,
                                                      got.data(), 1));
          expect_block(got.data(), b);
        }
      }
      // Through the public conversion.
      EXPECT_EQ(bytes_of(values.to(type)), want);
    }
  }
}

// The K-quants' and IQ4's scale searches run their candidate scales a lane each
// (backends/cpu/simd/scale_search_simd.cpp): every Highway target must give
// the bytes of the widest, which tests/oracle/test_quant_ggml.py compares
// with ggml's. Heavy tails and coarse ties make many candidates improve
// the fit, so the re-runs after an improvement are exercised too.
TEST(BlockQuant, ScaleSearchesGiveTheSameBytesOnEveryTarget) {
  Generator g(21);
  const Tensor normal = randn({64, 256}, g);
  const Tensor tails =
      div(randn({64, 256}, g), add(abs(randn({64, 256}, g)), 0.05));
  const Tensor ties = mul(round(mul(randn({64, 256}, g), 4.0)), 0.25);
  // NaN and infinities in some sub-blocks (IQ4's code for a NaN value is
  // settled apart from the comparisons).
  std::vector<float> odd = values_of(randn({64, 256}, g));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < odd.size(); i += 301) odd[i] = nan;
  for (std::size_t i = 7; i < odd.size(); i += 997) odd[i] = inf;
  for (std::size_t i = 500; i < odd.size(); i += 1499) odd[i] = -inf;
  const Tensor special = from_vector(odd, {64, 256});
  for (const DType type : {DType::Q2_K, DType::Q4_K, DType::Q5_K, DType::Q6_K,
                           DType::IQ4_NL, DType::IQ4_XS}) {
    for (const Tensor& x : {normal, tails, ties, special}) {
      hwy::SetSupportedTargetsForTest(0);
      const std::vector<std::uint8_t> want = bytes_of(x.to(type));
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        SCOPED_TRACE(hwy::TargetName(target));
        EXPECT_EQ(bytes_of(x.to(type)), want) << dtype_name(type);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace
}  // namespace tessel

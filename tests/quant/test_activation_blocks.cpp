// The 8-bit activation rows the quantised dot kernels and GEMM read
// (backends/cpu/simd/quant_dot_simd.hpp's quantize_activations), on every
// SIMD target this build has:
// - Q8_K blocks byte for byte as the Q8_K dtype's quantiser writes them
//   (itself held to ggml's quantize_row_q8_K_ref by the oracle tests),
//   ties of magnitude included;
// - Q8_0 blocks as ggml's x86 quantize_row_q8_0 writes them, by hand: scale
//   amax / 127 as f16, codes round(x * 127 / amax) with ties to even;
// - a NaN or Inf anywhere in a block makes its scale NaN.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using cpu::simd::ActivationBlocks;

std::vector<std::uint8_t> activation_row(ActivationBlocks kind,
                                         const std::vector<float>& x) {
  const auto k = static_cast<std::int64_t>(x.size());
  // Not zeros: the kernels' buffers are reused, so every byte they read
  // (padding included) must be written.
  std::vector<std::uint8_t> row(cpu::simd::activation_row_bytes(kind, k), 0xFF);
  cpu::simd::quantize_activations(kind, x.data(), k, 1, k, row.data());
  return row;
}

// The sum of n i8 codes.
std::int32_t code_sum(const std::uint8_t* codes, int n) {
  std::int32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<std::int8_t>(codes[i]);
  return sum;
}

float f32_at(const std::uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// Runs `body` once per SIMD target, naming the target on failure.
template <class F>
void on_every_target(F body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(ActivationBlocks, Q8KMatchesTheDTypesQuantiser) {
  // Block 0: normal values. Block 1: its largest magnitude twice, -3 then
  // +3 (the first sets the sign of the scale). Block 2: all zero. Block 3:
  // values that land on .5 after scaling (ties) and a value at +max.
  Generator g(5);
  std::vector<float> x = testing::values<float>(randn({1024}, g));
  for (int j = 256; j < 512; ++j) x[j] = 0.01f * static_cast<float>(j % 7);
  x[256 + 5] = -3.f;
  x[256 + 100] = 3.f;
  for (int j = 512; j < 768; ++j) x[j] = 0.f;
  for (int j = 768; j < 1024; ++j) {
    x[j] = static_cast<float>((j % 255) - 127) + (j % 2 ? 0.5f : 0.f);
  }
  x[768] = 127.f;
  const Tensor reference = from_vector(x, {1024}).to(DType::Q8_K);
  const auto* want = static_cast<const std::uint8_t*>(reference.raw_data());
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_K, x);
    ASSERT_EQ(row.size(), static_cast<std::size_t>(reference.nbytes()));
    for (std::size_t i = 0; i < row.size(); ++i) {
      ASSERT_EQ(row[i], want[i])
          << "byte " << i << " (block " << i / 292 << ")";
    }
  });
}

TEST(ActivationBlocks, Q8_0ByHand) {
  // amax 127: the multiplier 127 / amax is 1, so each code is x rounded
  // ties to even, and the f16 scale is exactly 1.
  std::vector<float> x(128, 0.f);
  const float values[] = {127.f, 2.5f, 3.5f, -0.5f, -126.5f, 1.25f, -2.5f};
  const int want[] = {127, 2, 4, 0, -126, 1, -2};
  for (int i = 0; i < 7; ++i) x[static_cast<std::size_t>(i)] = values[i];
  // Block 1: amax 2, so codes are x * 63.5: 1 -> 63.5 -> 64 (even),
  // -1 -> -64, 0.5 -> 31.75 -> 32, 2 -> 127.
  x[32] = 1.f;
  x[33] = -1.f;
  x[34] = 0.5f;
  x[35] = 2.f;
  // Blocks 2 and 3 stay zero: scale 0, codes 0.
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_0, x);
    std::uint16_t d0, d1, d2;
    std::memcpy(&d0, row.data(), 2);
    std::memcpy(&d1, row.data() + 34, 2);
    std::memcpy(&d2, row.data() + 68, 2);
    EXPECT_EQ(d0, 0x3C00);  // f16 1.0
    EXPECT_EQ(d1, 0x2408);  // f16 of 2 / 127 (0.015747...)
    EXPECT_EQ(d2, 0);
    const auto* q0 = reinterpret_cast<const std::int8_t*>(row.data() + 2);
    for (int i = 0; i < 7; ++i) EXPECT_EQ(q0[i], want[i]) << "code " << i;
    const auto* q1 = reinterpret_cast<const std::int8_t*>(row.data() + 36);
    EXPECT_EQ(q1[0], 64);
    EXPECT_EQ(q1[1], -64);
    EXPECT_EQ(q1[2], 32);
    EXPECT_EQ(q1[3], 127);
    for (int i = 4; i < 32; ++i) EXPECT_EQ(q1[i], 0);
    // The per-block f32 scales after the blocks: the f16 scale widened.
    EXPECT_EQ(f32_at(row.data() + 4 * 34), 1.f);
    EXPECT_EQ(f32_at(row.data() + 4 * 34 + 8), 0.f);
  });
}

TEST(ActivationBlocks, NonFiniteValuesMakeTheBlockScaleNaN) {
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> x(512, 0.25f);
    x[300] = bad;  // Q8_K block 1; Q8_0 block 9
    on_every_target([&] {
      const std::vector<std::uint8_t> k =
          activation_row(ActivationBlocks::Q8_K, x);
      EXPECT_EQ(f32_at(k.data()), 1.f / (-127.f / 0.25f))
          << "the finite block keeps its scale";
      EXPECT_TRUE(std::isnan(f32_at(k.data() + 292)));
      const std::vector<std::uint8_t> q =
          activation_row(ActivationBlocks::Q8_0, x);
      std::uint16_t d9;
      std::memcpy(&d9, q.data() + 9 * 34, 2);
      EXPECT_EQ(d9 & 0x7C00, 0x7C00);  // f16 exponent all ones...
      EXPECT_NE(d9 & 0x03FF, 0);       // ...and a mantissa: NaN
      EXPECT_TRUE(std::isnan(f32_at(q.data() + 16 * 34 + 4 * 9)));
    });
  }
}

// The AVX-512 targets have forms of their own (quant_activations_simd.cpp);
// every target must write the same bytes for every kind, edge cases
// included. 2048 values, eight Q8_K blocks (64 Q8_0 blocks):
// - values 0-255, Q8_0 blocks 0-7: plain; largest magnitudes below 3.7e-37
//   (127 / amax overflows); an f16-subnormal scale; an f16 scale that
//   overflows to Inf; -0 and zeros; NaN, +Inf, -Inf, NaN in alternating
//   halves of blocks 4-7 (so this Q8_K block is non-finite);
// - Q8_K block 1: all tiny (its multiplier overflows), mixed signs;
// - block 2: ties after scaling (largest magnitude 127, scale -1);
// - blocks 3-5: huge, small, mostly -0; blocks 6-7: plain.
TEST(ActivationBlocks, EveryTargetWritesTheSameBytes) {
  Generator g(17);
  std::vector<float> x = testing::values<float>(randn({2048}, g));
  const auto block = [&](int b, int j) -> float& {
    return x[static_cast<std::size_t>(32 * b + j)];
  };
  for (int j = 0; j < 32; ++j) {
    block(1, j) = (j % 3 - 1) * 1e-38f;  // 127 / amax overflows
    block(2, j) = (j - 16) * 1e-4f;      // amax / 127 subnormal in f16
    block(3, j) = (j - 16) * 1e7f;       // amax / 127 past f16's range
    block(4, j) = j % 2 ? -0.f : 0.f;    // -0 and zeros, then one value
  }
  block(4, 31) = 0.75f;
  block(4, 3) = std::nanf("");
  block(5, 20) = INFINITY;
  block(6, 9) = -INFINITY;
  block(7, 30) = std::nanf("");
  for (int j = 256; j < 512; ++j) {
    x[static_cast<std::size_t>(j)] = (j % 5 - 2) * 2e-38f;
  }
  for (int j = 512; j < 768; ++j) {
    x[static_cast<std::size_t>(j)] =
        static_cast<float>(j % 255 - 127) + (j % 2 ? 0.5f : 0.f);
  }
  x[512] = -127.f;
  for (int j = 768; j < 1024; ++j) x[static_cast<std::size_t>(j)] *= 1e30f;
  for (int j = 1024; j < 1280; ++j) x[static_cast<std::size_t>(j)] *= 1e-30f;
  for (int j = 1280; j < 1536; ++j) {
    x[static_cast<std::size_t>(j)] = j % 17 == 0 ? 0.125f * (j % 3) : -0.f;
  }
  for (const ActivationBlocks kind :
       {ActivationBlocks::Q8_0, ActivationBlocks::Q8_0WithQ4_0Sums,
        ActivationBlocks::Q8_0WithQ8_0Lanes, ActivationBlocks::Q8_K,
        ActivationBlocks::Q8_KWithK4Groups,
        ActivationBlocks::Q8_KWithIq4Lanes}) {
    SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind));
    std::vector<std::uint8_t> first;
    on_every_target([&] {
      const std::vector<std::uint8_t> row = activation_row(kind, x);
      if (first.empty()) {
        first = row;
        return;
      }
      ASSERT_EQ(row.size(), first.size());
      for (std::size_t i = 0; i < row.size(); ++i) {
        ASSERT_EQ(row[i], first[i]) << "byte " << i;
      }
    });
  }
  // What they agree on, where the multiplier overflowed: zero codes.
  const std::vector<std::uint8_t> q8_0 =
      activation_row(ActivationBlocks::Q8_0, x);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(q8_0[static_cast<std::size_t>(34 + 2 + j)], 0) << "code " << j;
  }
  const std::vector<std::uint8_t> q8_k =
      activation_row(ActivationBlocks::Q8_K, x);
  for (int j = 0; j < 256 + 32; ++j) {  // codes and sums of block 1
    EXPECT_EQ(q8_k[static_cast<std::size_t>(292 + 4 + j)], 0) << "byte " << j;
  }
}

TEST(ActivationBlocks, Iq4LanesRepeatTheCodesInNibbleOrder) {
  // Two Q8_K blocks, then from a 64-byte boundary each block's codes again:
  // for sub-blocks 4h..4h+3, codes 0-15 of each, then codes 16-31 of each.
  Generator g(9);
  const std::vector<float> x = testing::values<float>(randn({512}, g));
  on_every_target([&] {
    const std::vector<std::uint8_t> plain =
        activation_row(ActivationBlocks::Q8_K, x);
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_KWithIq4Lanes, x);
    // 584 rounded up to 640, the lanes, then one pair's surpluses.
    ASSERT_EQ(row.size(), 640u + 2 * 256u + 64u);
    for (std::size_t i = 0; i < plain.size(); ++i) {
      ASSERT_EQ(row[i], plain[i]) << "byte " << i << " of the Q8_K blocks";
    }
    for (int b = 0; b < 2; ++b) {
      const std::uint8_t* codes = plain.data() + 292 * b + 4;
      const std::uint8_t* lanes = row.data() + 640 + 256 * b;
      for (int h = 0; h < 2; ++h) {
        for (int j = 0; j < 4; ++j) {
          for (int i = 0; i < 16; ++i) {
            const int sub = 32 * (4 * h + j);
            EXPECT_EQ(lanes[128 * h + 16 * j + i], codes[sub + i])
                << "block " << b << " sub-block " << 4 * h + j << " code " << i;
            EXPECT_EQ(lanes[128 * h + 64 + 16 * j + i], codes[sub + 16 + i])
                << "block " << b << " sub-block " << 4 * h + j << " code "
                << 16 + i;
          }
        }
      }
    }
  });
}

TEST(ActivationBlocks, Q4_0GroupsHoldEveryQuadInItsLane) {
  // k = 928: 29 blocks, seven quads (a whole group of four, a group of
  // three), one block past them. Blocks (2030 bytes with their scales and
  // offsets) to 2048, quads of 128 to 2944, groups of 128 to 3200. Block b
  // of quad b / 4 is lane 4 (b % 4) + b / 4 % 4 of group b / 16.
  Generator g(11);
  const std::vector<float> x = testing::values<float>(randn({928}, g));
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_0WithQ4_0Sums, x);
    ASSERT_EQ(row.size(), 3200u);
    // Every block's eight offsets (29 blocks of 34 bytes, 29 scales of 4,
    // then offsets of 32 each): lane l < 4 is 8 x the sum of codes 4l..4l+3
    // and 16+4l..16+4l+3, lanes 4-7 zero.
    for (std::size_t b = 0; b < 29; ++b) {
      const std::uint8_t* codes = row.data() + 34 * b + 2;
      for (std::size_t lane = 0; lane < 8; ++lane) {
        std::int32_t offset = 0;
        std::memcpy(&offset, row.data() + 29 * 38 + 32 * b + 4 * lane, 4);
        const std::int32_t expected =
            lane < 4 ? 8 * (code_sum(codes + 4 * lane, 4) +
                            code_sum(codes + 16 + 4 * lane, 4))
                     : 0;
        EXPECT_EQ(offset, expected) << "block " << b << " lane " << lane;
      }
    }
    for (std::size_t b = 0; b < 28; ++b) {
      SCOPED_TRACE(::testing::Message() << "block " << b);
      const std::uint8_t* codes = row.data() + 34 * b + 2;
      const std::uint8_t* quad = row.data() + 2048 + 128 * (b / 4);
      EXPECT_EQ(std::memcmp(quad + 16 * (b % 4), codes, 16), 0);
      EXPECT_EQ(std::memcmp(quad + 64 + 16 * (b % 4), codes + 16, 16), 0);
      const std::int32_t sum = code_sum(codes, 32);
      const std::uint8_t* group = row.data() + 2944 + 128 * (b / 16);
      const std::size_t lane = 4 * (b % 4) + b / 4 % 4;
      EXPECT_EQ(f32_at(group + 4 * lane), f32_at(row.data() + 29 * 34 + 4 * b));
      std::int32_t offset = 0;
      std::memcpy(&offset, group + 64 + 4 * lane, 4);
      EXPECT_EQ(offset, 8 * sum);
    }
    // The second group has no fourth quad: its lanes are zero.
    for (std::size_t i = 0; i < 4; ++i) {
      const std::uint8_t* group = row.data() + 2944 + 128;
      std::int32_t offset = 1;
      std::memcpy(&offset, group + 64 + 4 * (4 * i + 3), 4);
      EXPECT_EQ(f32_at(group + 4 * (4 * i + 3)), 0.f);
      EXPECT_EQ(offset, 0);
    }
  });
}

TEST(ActivationBlocks, Q8_0LanesRepeatTheCodesAndStartEachBlock) {
  // k = 224: seven Q8_0 blocks (238 bytes, then 28 of scales: 266, to
  // 320), their codes back to back (224 bytes, to 544, to 576), then each
  // block's i32 start, -128 x the sum of its codes (28 bytes, to 604, to
  // 640).
  Generator g(14);
  const std::vector<float> x = testing::values<float>(randn({224}, g));
  on_every_target([&] {
    const std::vector<std::uint8_t> plain =
        activation_row(ActivationBlocks::Q8_0, x);
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_0WithQ8_0Lanes, x);
    ASSERT_EQ(row.size(), 640u);
    ASSERT_EQ(plain.size(), 266u);
    EXPECT_EQ(std::memcmp(row.data(), plain.data(), plain.size()), 0)
        << "the Q8_0 blocks and their scales come first, unchanged";
    for (std::size_t i = 266; i < 320; ++i) {
      EXPECT_EQ(row[i], 0) << "padding byte " << i;
    }
    for (const std::size_t i : {544u, 575u, 604u, 639u}) {
      EXPECT_EQ(row[i], 0) << "padding byte " << i;
    }
    for (std::size_t b = 0; b < 7; ++b) {
      SCOPED_TRACE(::testing::Message() << "block " << b);
      const std::uint8_t* codes = plain.data() + 34 * b + 2;
      EXPECT_EQ(std::memcmp(row.data() + 320 + 32 * b, codes, 32), 0);
      std::int32_t start = 0;
      std::memcpy(&start, row.data() + 576 + 4 * b, 4);
      EXPECT_EQ(start, -128 * code_sum(codes, 32));
    }
  });
}

TEST(ActivationBlocks, Iq4PairsHold128TimesEachSubBlocksSum) {
  // Five Q8_K blocks (1460 bytes, to 1472), their lanes (1280 bytes), then
  // two pairs of 64; the fifth block has no pair.
  Generator g(12);
  const std::vector<float> x = testing::values<float>(randn({1280}, g));
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_KWithIq4Lanes, x);
    ASSERT_EQ(row.size(), 1472u + 1280u + 128u);
    for (int p = 0; p < 2; ++p) {
      for (int lane = 0; lane < 16; ++lane) {
        // Lane 4j + k: sub-block j (k = 0) or 4 + j (k = 1) of block 2p,
        // j or 4 + j (k = 2, 3) of block 2p + 1.
        const int block = 2 * p + lane % 4 / 2;
        const int sub = lane / 4 + 4 * (lane % 2);
        const std::int32_t sum =
            code_sum(row.data() + 292 * block + 4 + 32 * sub, 32);
        std::int32_t stored = 0;
        std::memcpy(&stored, row.data() + 2752 + 64 * p + 4 * lane, 4);
        EXPECT_EQ(stored, 128 * sum) << "pair " << p << " lane " << lane;
      }
    }
  });
}

TEST(ActivationBlocks, K4GroupsHoldEachBlocksScaleAndSumsOfThirtyTwo) {
  // Seven Q8_K blocks (2044 bytes), then two groups of 96: a whole one and
  // one of three, whose fourth block's lanes are zero. Group g: the f32
  // scales of its blocks 0-3 twice over, then block i's eight i16 sums of
  // 32 codes at 32 + 16i. Then, from 2240, each block's codes again with
  // their sub-blocks of 32 in the order 0, 2, 1, 3, 4, 6, 5, 7.
  Generator g(13);
  const std::vector<float> x = testing::values<float>(randn({1792}, g));
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_KWithK4Groups, x);
    ASSERT_EQ(row.size(), 2240u + 7u * 256u);
    for (std::size_t i = 2044 + 2 * 96; i < 2240; ++i) {
      EXPECT_EQ(row[i], 0) << "padding byte " << i;
    }
    const int order[8] = {0, 2, 1, 3, 4, 6, 5, 7};
    for (std::size_t b = 0; b < 7; ++b) {
      for (int chunk = 0; chunk < 8; ++chunk) {
        EXPECT_EQ(std::memcmp(row.data() + 2240 + 256 * b + 32 * chunk,
                              row.data() + 292 * b + 4 + 32 * order[chunk], 32),
                  0)
            << "block " << b << " chunk " << chunk;
      }
    }
    for (std::size_t b = 0; b < 8; ++b) {
      SCOPED_TRACE(::testing::Message() << "block " << b);
      const std::uint8_t* group = row.data() + 2044 + 96 * (b / 4);
      const std::size_t i = b % 4;
      const float scale = b < 7 ? f32_at(row.data() + 292 * b) : 0.f;
      EXPECT_EQ(f32_at(group + 4 * i), scale);
      EXPECT_EQ(f32_at(group + 16 + 4 * i), scale);
      for (int j = 0; j < 8; ++j) {
        std::int16_t stored = 1;
        std::memcpy(&stored, group + 32 + 16 * i + 2 * j, 2);
        EXPECT_EQ(stored,
                  b < 7 ? code_sum(row.data() + 292 * b + 4 + 32 * j, 32) : 0)
            << "sum " << j;
      }
    }
  });
}

TEST(ActivationBlocks, PaddedKindsKeepRowsOnCacheLines) {
  // The 512-bit kernels' regions start on a 64-byte boundary of the row,
  // and rows are whole cache lines, so row m of an aligned buffer is too.
  for (const std::int64_t k : {256, 768, 1024, 1280, 2816, 4096}) {
    SCOPED_TRACE(k);
    EXPECT_EQ(
        cpu::simd::activation_row_bytes(ActivationBlocks::Q8_0WithQ4_0Sums, k) %
            64,
        0u);
    EXPECT_EQ(
        cpu::simd::activation_row_bytes(ActivationBlocks::Q8_KWithIq4Lanes, k) %
            64,
        0u);
    EXPECT_EQ(cpu::simd::activation_row_bytes(
                  ActivationBlocks::Q8_0WithQ8_0Lanes, k) %
                  64,
              0u);
    EXPECT_EQ(
        cpu::simd::activation_row_bytes(ActivationBlocks::Q8_KWithK4Groups, k) %
            64,
        0u);
  }
  // k = 160: five Q8_0 blocks (350 bytes of blocks, scales and offsets),
  // the one quad of four blocks from byte 384, its group from 512.
  std::vector<float> x(160);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 23) - 11);
  }
  on_every_target([&] {
    const std::vector<std::uint8_t> row =
        activation_row(ActivationBlocks::Q8_0WithQ4_0Sums, x);
    ASSERT_EQ(row.size(), 384u + 128u + 128u);  // the quad, its group
    for (int i = 0; i < 4; ++i) {  // codes 0-15 of block i at 384 + 16i
      for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(row[static_cast<std::size_t>(384 + 16 * i + j)],
                  row[static_cast<std::size_t>(34 * i + 2 + j)])
            << "block " << i << " code " << j;
      }
    }
  });
  // Two rows: the second starts a whole row later and holds its own codes.
  std::vector<float> two(2 * 256);
  for (std::size_t i = 0; i < two.size(); ++i) {
    two[i] = i < 256 ? 1.f : -0.5f * static_cast<float>(i % 7);
  }
  const std::size_t bytes =
      cpu::simd::activation_row_bytes(ActivationBlocks::Q8_KWithIq4Lanes, 256);
  std::vector<std::uint8_t> rows(2 * bytes);
  cpu::simd::quantize_activations(ActivationBlocks::Q8_KWithIq4Lanes,
                                  two.data(), 256, 2, 256, rows.data());
  const std::vector<float> second(two.begin() + 256, two.end());
  const std::vector<std::uint8_t> alone =
      activation_row(ActivationBlocks::Q8_KWithIq4Lanes, second);
  ASSERT_EQ(alone.size(), bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    if (i >= 292 && i < 320) continue;  // padding, never written
    ASSERT_EQ(rows[bytes + i], alone[i]) << "byte " << i << " of row 1";
  }
}

}  // namespace
}  // namespace tessel

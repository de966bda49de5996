// linear / matmul with block-quantised weights against dequantise-then-f32,
// within a bound derived from how the activations are rounded:
//
// The integer kernels (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS) multiply the
// weights as stored with an 8-bit copy x^ of the activation, so
//   |y - sum_j w_j x_j| <= sum_j |w_j| |x_j - x^_j| + (f32 accumulation).
// Per block of x with largest magnitude a, the code is round(x * 127 / a)
// (error <= a / 254) times a scale a / 127 held as f16 (relative error
// <= 2^-11, times |code| <= 127): |x_j - x^_j| <= a (1/254 + 2^-11). The
// f32 part (exact integer block sums, then about K / 32 scaled f32 terms)
// is covered by 2^-16 * sum_j |w_j x_j|, far above its worst case.
// That holds for every M: few rows run the dot kernels, more the packed
// integer GEMM, on the same 8-bit activations. Types without an integer
// kernel dequantise tiles exactly and use an f32 GEMM: only the f32 term
// applies.
//
// Agreement with ggml's own kernels (to 1e-5 of the result's scale) is
// tests/oracle/test_quant_ggml.py's job.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/quant_gemm_simd.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

struct Case {
  DType type;
  bool integer_kernel;  // has an 8-bit activation path
  int act_block;        // its activation block (32: Q8_0, 256: Q8_K)
};

const Case kCases[] = {
    {DType::Q4_0, true, 32},   {DType::Q8_0, true, 32},
    {DType::Q4_K, true, 256},  {DType::Q5_K, true, 256},
    {DType::Q6_K, true, 256},  {DType::IQ4_XS, true, 256},
    {DType::Q4_1, false, 0},   {DType::Q5_0, false, 0},
    {DType::Q2_K, false, 0},   {DType::Q3_K, false, 0},
    {DType::IQ4_NL, false, 0}, {DType::TQ2_0, false, 0},
    {DType::MXFP4, false, 0},
};

std::vector<float> host(const Tensor& t) {
  const Tensor f = t.to(DType::F32).contiguous();
  return {f.data<float>(), f.data<float>() + f.numel()};
}

// Checks y (M, N) against W (N, K) dequantised and x (M, K) in f64.
void expect_within_bound(const Tensor& y, const Tensor& x, const Tensor& w_q,
                         const Case& c, bool integer_path,
                         const std::vector<float>& bias = {}) {
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = w_q.shape()[0];
  const std::vector<float> xs = host(x), ws = host(w_q), ys = host(y);
  ASSERT_EQ(static_cast<std::int64_t>(ys.size()), m * n);
  for (std::int64_t i = 0; i < m; ++i) {
    std::vector<double> rounding(static_cast<std::size_t>(k), 0.0);
    if (integer_path) {
      for (std::int64_t b = 0; b < k; b += c.act_block) {
        double amax = 0;
        for (std::int64_t j = b; j < b + c.act_block; ++j)
          amax = std::max(amax, std::fabs(double{xs[i * k + j]}));
        for (std::int64_t j = b; j < b + c.act_block; ++j)
          rounding[j] = amax * (1.0 / 254 + std::ldexp(1.0, -11));
      }
    }
    for (std::int64_t r = 0; r < n; ++r) {
      double ref = bias.empty() ? 0.0 : bias[r], bound = 0, magnitude = 0;
      for (std::int64_t j = 0; j < k; ++j) {
        const double wv = ws[r * k + j], xv = xs[i * k + j];
        ref += wv * xv;
        bound += std::fabs(wv) * rounding[j];
        magnitude += std::fabs(wv * xv);
      }
      bound += std::ldexp(magnitude, -16) + 1e-30;
      EXPECT_LE(std::fabs(ys[i * n + r] - ref), bound)
          << dtype_name(c.type) << " row " << i << " col " << r << ": got "
          << ys[i * n + r] << ", dequantised product " << ref;
    }
  }
}

Tensor weights(DType type, std::int64_t n, std::int64_t k, std::uint64_t seed) {
  Generator g(seed);
  return randn({n, k}, g).to(type);
}

TEST(QuantMatmul, EveryTypeMatchesDequantisedWeightsWithinTheRoundingBound) {
  // N = 37 leaves 5 rows after every tile height (8, 16 rows); the M
  // values take the dot kernels (1) and the packed GEMM (5, 23, 64: 23
  // leaves a remainder after steps of 4 or 8 activation rows, 64 takes two
  // 8-row tiles at once in the 256-bit kernel, but for IQ4_XS).
  for (const Case& c : kCases) {
    const Tensor w = weights(c.type, 37, 512, 7);
    for (const std::int64_t m : {1, 5, 23, 64}) {
      Generator g(11 + m);
      const Tensor x = randn({m, 512}, g);
      const Tensor y = linear(x, w);
      ASSERT_EQ(y.shape(), (Shape{m, 37}));
      expect_within_bound(y, x, w, c, c.integer_kernel);
    }
  }
}

TEST(QuantMatmul, DotKernelsTakeEveryBlockCount) {
  // The dot kernels step through a row's blocks two or four at a time, and
  // the 512-bit Q4_0 kernel with VBMI sixteen (four of four, a partial
  // last group of one to three fours, then single blocks), so every
  // remainder of the block count is a path of its own.
  const std::vector<std::int64_t> every_remainder{
      1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 20, 24, 28, 31, 33, 47};
  for (const Case& c : kCases) {
    if (!c.integer_kernel) continue;
    for (const std::int64_t blocks : every_remainder) {
      if (blocks > 13 && c.type != DType::Q4_0) continue;
      const std::int64_t k = blocks * c.act_block;
      const Tensor w = weights(c.type, 5, k, 17 + blocks);
      Generator g(blocks);
      const Tensor x = randn({1, k}, g);
      SCOPED_TRACE(::testing::Message() << dtype_name(c.type) << " K " << k);
      expect_within_bound(linear(x, w), x, w, c, true);
    }
  }
}

TEST(QuantMatmul, EverySimdTargetGivesTheSameBoundedResult) {
  // 1 row runs every type's dot kernels (Q4_0's and Q8_0's take no more),
  // 3 rows those of the others, 19 and 35 the packed GEMM (each target's
  // kernels and packers; the 256-bit kernel takes one 8-row tile at a time
  // for 19, two for 35). 29 weight rows leave 13 after 16 (two tiles, the
  // second short) and 5 after 8.
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const Case& c : kCases) {
      if (!c.integer_kernel) continue;
      const Tensor w = weights(c.type, 29, 768, 3);
      for (const std::int64_t m : {1, 3, 19, 35}) {
        const Tensor x = randn({m, 768});
        expect_within_bound(linear(x, w), x, w, c, true);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The 512-bit kernels have forms for CPUs with fewer features, chosen at
// run time: Cascade Lake has VNNI without VBMI, GFNI or AMX (Q4_0's
// two-block kernel, the one-block Q4_K/Q5_K kernel, IQ4_XS's vpshufb
// lookup, the GEMM's VNNI kernel for every activation row), Skylake-SP
// none of them (AVX3 without VNNI, and the GEMM's 256-bit kernel).
// Withholding the features runs those forms here too, where the CPU has
// them; every block count's remainder path, and the packed GEMM at 19 and
// 35 activation rows and 29 weight rows.
TEST(QuantMatmul, KernelsForCpusWithFewerFeaturesGiveTheSameBoundedResult) {
  using namespace cpu::simd;
  for (const unsigned withheld :
       {kFeatureAvx512Vbmi | kFeatureGfni | kFeatureAmxInt8,
        kFeatureAvx512Vnni | kFeatureAvx512Vbmi | kFeatureGfni |
            kFeatureAmxInt8}) {
    const WithholdCpuFeaturesForTest guard(withheld);
    ASSERT_FALSE(cpu_has_avx512_vbmi());
    ASSERT_FALSE(cpu_has_gfni());
    ASSERT_FALSE(cpu_has_amx_int8());
    if ((withheld & kFeatureAvx512Vnni) != 0) {
      ASSERT_FALSE(cpu_has_avx512_vnni());
    }
    for (const Case& c : kCases) {
      if (!c.integer_kernel) continue;
      for (const std::int64_t blocks : {1, 2, 3, 4, 5, 7, 9, 13, 17}) {
        const std::int64_t k = blocks * c.act_block;
        const Tensor w = weights(c.type, 29, k, 29 + blocks);
        Generator g(blocks);
        for (const std::int64_t m : {1, 3, 19, 35}) {
          const Tensor x = randn({m, k}, g);
          SCOPED_TRACE(::testing::Message()
                       << dtype_name(c.type) << " K " << k << " M " << m
                       << " withheld " << withheld);
          expect_within_bound(linear(x, w), x, w, c, true);
        }
      }
    }
  }
  EXPECT_EQ(withheld_cpu_features.load(), 0u);
}

// AMX's tile products (cpu_has_amx_int8: Sapphire Rapids on, and an OS
// that grants the tile state) take whole blocks of 16 activation rows for
// the types with 32-weight groups, the VNNI kernel the rest, and both
// scale the same integer sums in the same order: the bits must agree. M =
// 16, 35 (two blocks, then 3 rows of the VNNI kernel) and 48; 37 weight
// rows (a short last tile); Q4_0's and Q8_0's K with no round of four
// groups, whole rounds, and one to three groups after them. Also held to
// the rounding bound.
TEST(QuantMatmul, AmxTilesGiveTheBitsOfTheVnniKernel) {
  using namespace cpu::simd;
  if (!cpu_has_amx_int8()) {
    GTEST_SKIP() << "this CPU or OS has no AMX-INT8 tile state";
  }
  // Q6_K's 16-weight groups keep the VNNI kernel; types without an integer
  // GEMM have no tiles at all.
  EXPECT_FALSE(quant_gemm_takes_amx(DType::Q6_K, 64));
  EXPECT_FALSE(quant_gemm_takes_amx(DType::Q4_1, 64));
  EXPECT_FALSE(quant_gemm_takes_amx(DType::F32, 64));
  for (const Case& c : kCases) {
    if (!c.integer_kernel || c.type == DType::Q6_K) continue;
    const std::vector<std::int64_t> ks =
        c.act_block == 32
            ? std::vector<std::int64_t>{32, 64, 96, 128, 160, 224, 544}
            : std::vector<std::int64_t>{256, 768};
    for (const std::int64_t k : ks) {
      const Tensor w = weights(c.type, 37, k, 41 + k);
      Generator g(k);
      for (const std::int64_t m : {16, 35, 48}) {
        const Tensor x = randn({m, k}, g);
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(c.type) << " K " << k << " M " << m);
        ASSERT_TRUE(quant_gemm_takes_amx(c.type, m));
        const std::vector<float> amx = host(linear(x, w));
        std::vector<float> vnni;
        {
          const WithholdCpuFeaturesForTest guard(kFeatureAmxInt8);
          ASSERT_FALSE(quant_gemm_takes_amx(c.type, m));
          vnni = host(linear(x, w));
        }
        ASSERT_EQ(amx.size(), vnni.size());
        for (std::size_t i = 0; i < amx.size(); ++i) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(amx[i]),
                    std::bit_cast<std::uint32_t>(vnni[i]))
              << "output " << i / static_cast<std::size_t>(w.shape()[0]) << ", "
              << i % static_cast<std::size_t>(w.shape()[0]) << ": " << amx[i]
              << " with the tiles, " << vnni[i] << " without";
        }
        expect_within_bound(from_vector(amx, {m, 37}), x, w, c, true);
      }
    }
  }
}

// The vector decoders (Q4_0, Q4_K, Q5_K, Q6_K, IQ4_XS on AVX2 and up) and
// the scalar codecs other targets run give the same bits (the oracle test
// holds the best target's to ggml's).
TEST(QuantMatmul, EverySimdTargetDecodesToTheSameBits) {
  for (const DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K,
                           DType::Q6_K, DType::IQ4_XS}) {
    const Tensor w = weights(type, 3, 512, 4);
    std::vector<std::uint32_t> first;
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      const std::vector<float> v = host(w);
      std::vector<std::uint32_t> bits(v.size());
      std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
      if (first.empty()) first = bits;
      EXPECT_EQ(bits, first)
          << dtype_name(type) << " on " << hwy::TargetName(target);
    }
    hwy::SetSupportedTargetsForTest(0);
  }
}

TEST(QuantMatmul, BiasBatchesAndHalfActivations) {
  const Tensor w = weights(DType::Q4_K, 8, 256, 5);
  Generator g(9);
  const Tensor bias = randn({8}, g);
  const Tensor x = randn({2, 3, 256}, g);
  const Tensor y = linear(x, w, bias);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 8}));
  ASSERT_EQ(y.dtype(), DType::F32);
  expect_within_bound(y.reshape({6, 8}), x.reshape({6, 256}), w, kCases[2],
                      true, host(bias));
  // bf16 activations are widened exactly, so the same bound holds.
  const Tensor xh = x.to(DType::BF16);
  expect_within_bound(linear(xh, w).reshape({6, 8}),
                      xh.reshape({6, 256}).to(DType::F32), w, kCases[2], true);
}

TEST(QuantMatmul, ViewsOfWholeRowsAreMultipliedInPlace) {
  const Tensor w = weights(DType::Q8_0, 16, 128, 1);
  const Tensor rows = w.slice(0, 4, 12);  // rows 4..11, zero-copy
  const Tensor x = randn({2, 128});
  expect_within_bound(linear(x, rows), x, rows, kCases[1], true);
}

// NaN in an activation block makes the rows it meets NaN, as in f32.
TEST(QuantMatmul, NonFiniteActivationsPropagate) {
  // K = 1280: the third block sits in the 512-bit kernel's group of four.
  for (const auto& [k, at] :
       {std::pair<std::int64_t, std::size_t>{256, 17}, {1280, 2 * 256 + 17}}) {
    const Tensor wk = weights(DType::Q4_K, 4, k, 2);
    std::vector<float> xs(static_cast<std::size_t>(k), 0.5f);
    for (const float bad : {std::nanf(""), INFINITY}) {
      xs[at] = bad;
      for (const float v : host(linear(from_vector(xs, {1, k}), wk)))
        EXPECT_TRUE(std::isnan(v)) << "K " << k << ", " << bad;
    }
  }
  const Tensor w = weights(DType::Q4_K, 4, 256, 2);
  // In the packed GEMM (20 rows) only the row holding the NaN is NaN.
  std::vector<float> batch(20 * 256, 0.5f);
  batch[7 * 256 + 3] = std::nanf("");
  const std::vector<float> yb = host(linear(from_vector(batch, {20, 256}), w));
  for (std::size_t i = 0; i < yb.size(); ++i) {
    EXPECT_EQ(std::isnan(yb[i]), i / 4 == 7) << i;
  }
}

// A known case by hand: Q8_0 weights with scale 1 (codes = values) and
// activations whose block scale is 1 too: the product is exact. Five
// blocks: the 512-bit kernel's four at a time and a last one alone.
TEST(QuantMatmul, ExactIntegersByHand) {
  constexpr int kK = 160;
  std::vector<float> wv(kK), xv(kK);
  for (int j = 0; j < kK; ++j) {
    wv[j] = static_cast<float>(j % 2 ? 127 : -(j % 7));
    xv[j] = static_cast<float>(j % 3 ? 127 : -(j % 5));
  }
  double expect = 0;
  for (int j = 0; j < kK; ++j) expect += double{wv[j]} * xv[j];
  const Tensor w = from_vector(wv, {1, kK}).to(DType::Q8_0);
  const Tensor y = linear(from_vector(xv, {1, kK}), w);
  EXPECT_EQ(host(y)[0], static_cast<float>(expect));
  // The same row 24 times takes the packed GEMM: still exact.
  const Tensor x24 = from_vector(xv, {1, kK}).expand({24, kK}).contiguous();
  for (const float v : host(linear(x24, w))) {
    EXPECT_EQ(v, static_cast<float>(expect));
  }
}

// Q8_0 codes of -128 (which ggml's quantiser never writes, but a file may
// hold) meet activation codes of both signs: the packed GEMM's sign
// handling (8-row tiles) and its biased activations (16-row) stay exact.
TEST(QuantMatmul, ExtremeCodesInThePackedGemm) {
  std::vector<std::uint8_t> block(34, 0);
  const std::uint16_t one = 0x3C00;  // f16 1.0
  std::memcpy(block.data(), &one, 2);
  std::vector<float> xv(32);
  double expect = 0;
  for (int j = 0; j < 32; ++j) {
    block[2 + j] = j % 3 ? 0x80 : 0x7F;  // -128 or 127
    xv[j] = j % 2 ? 127.0f : -127.0f;
    expect += (j % 3 ? -128.0 : 127.0) * xv[j];
  }
  const Tensor w = testing::from_bytes(block, {1, 32}, DType::Q8_0);
  const Tensor x = from_vector(xv, {1, 32}).expand({20, 32}).contiguous();
  for (const float v : host(linear(x, w))) {
    EXPECT_EQ(v, static_cast<float>(expect));
  }
}

// Every code at its largest (all bits set) and the widest scales meet
// activations of one sign, then of alternating signs: the dot kernels'
// largest partial sums. The 512-bit K-quant kernels pack sums of four
// products into i16 lanes (|4 x 63 x 127| < 2^15 for Q6_K's 6-bit codes),
// which this would overflow if the bound were wrong.
TEST(QuantMatmul, ExtremeCodesInTheDotKernels) {
  const std::uint16_t one = 0x3C00, half = 0x3800;  // f16 1.0 and 0.5
  struct Extreme {
    const Case* c;
    std::vector<std::pair<int, std::uint16_t>> f16_fields;  // offset, value
    std::vector<std::pair<int, std::uint8_t>> bytes;        // offset, value
  };
  std::vector<Extreme> extremes;
  for (const Case& c : kCases) {
    if (!c.integer_kernel) continue;
    Extreme e{&c, {}, {}};
    switch (c.type) {
      case DType::Q4_0: e.f16_fields = {{0, one}}; break;
      case DType::Q8_0:
        // -128 and 127: the 512-bit kernel's codes + 128 are 0 and 255.
        e.f16_fields = {{0, one}};
        for (int i = 0; i < 32; ++i) {
          e.bytes.emplace_back(2 + i, i % 2 ? 0x80 : 0x7F);
        }
        break;
      case DType::Q4_K:
      case DType::Q5_K: e.f16_fields = {{0, one}, {2, half}}; break;
      case DType::Q6_K:
        e.f16_fields = {{208, one}};
        for (int i = 0; i < 16; ++i) {
          e.bytes.emplace_back(192 + i, i % 2 ? 0x80 : 0x7F);  // -128, 127
        }
        break;
      case DType::IQ4_XS: e.f16_fields = {{0, one}}; break;
      default: continue;
    }
    extremes.push_back(e);
  }
  ASSERT_EQ(extremes.size(), 6u);
  for (const Extreme& e : extremes) {
    const auto& tr = dtype_traits(e.c->type);
    // Five blocks of 256: the 512-bit Q4_K/Q5_K kernel's group of four
    // and its remainder.
    const std::int64_t k = 5 * 256, blocks = k / tr.block_size;
    std::vector<std::uint8_t> row(
        static_cast<std::size_t>(blocks * tr.block_bytes), 0xFF);
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::uint8_t* block = row.data() + b * tr.block_bytes;
      for (const auto& [offset, value] : e.f16_fields) {
        std::memcpy(block + offset, &value, 2);
      }
      for (const auto& [offset, value] : e.bytes) block[offset] = value;
    }
    const Tensor w = testing::from_bytes(row, {1, k}, e.c->type);
    for (const bool alternate : {false, true}) {
      std::vector<float> xv(static_cast<std::size_t>(k));
      for (std::int64_t j = 0; j < k; ++j) {
        xv[static_cast<std::size_t>(j)] = alternate && j % 2 ? -127.f : 127.f;
      }
      const Tensor x = from_vector(xv, {1, k});
      SCOPED_TRACE(::testing::Message() << dtype_name(e.c->type)
                                        << (alternate ? " alternating" : ""));
      expect_within_bound(linear(x, w), x, w, *e.c, true);
    }
  }
}

}  // namespace
}  // namespace tessel

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// Known-answer vectors of Philox4x32-10 (Random123's kat_vectors, confirmed
// with the randomgen package).
TEST(Random, PhiloxKnownAnswers) {
  using W = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (W{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (W{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (W{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // The generator keys Philox with the seed and counts blocks in word 0-1.
  EXPECT_EQ(Generator(7).block(42),
            (W{0xa474bfc9, 0xb87d21d8, 0x3c29e871, 0x79949a51}));
}

TEST(Random, UniformValuesComeFromTheDocumentedWords) {
  Generator gen(0);
  Tensor u = rand({5}, gen);
  // Block 0 of seed 0 is the first known answer; f32 takes the top 24 bits.
  EXPECT_EQ(u.at<float>({0}),
            std::ldexp(static_cast<float>(0x6627e8d5u >> 8), -24));
  EXPECT_EQ(u.at<float>({3}),
            std::ldexp(static_cast<float>(0x9b00dbd8u >> 8), -24));
  EXPECT_EQ(gen.offset(), 2u);  // 5 values, 4 per block
  // The next draw starts at block 2, not where the last one stopped.
  Generator again(0);
  again.set_offset(2);
  EXPECT_EQ(rand({1}, gen).item<float>(), rand({1}, again).item<float>());
  Tensor d = rand({3}, gen, DType::F64);  // two values per block
  EXPECT_EQ(gen.offset(), 5u);
}

TEST(Random, NormalValuesAreBoxMullerOfWordPairs) {
  Generator gen(0);
  Tensor z = randn({2}, gen, DType::F64);
  // f64: one block per pair; words 0-1 and 2-3 as 64-bit uniforms.
  const std::uint64_t a = (std::uint64_t{0x6627e8d5} << 32) | 0xe169c58d;
  const std::uint64_t b = (std::uint64_t{0xbc57ac4c} << 32) | 0x9b00dbd8;
  const double u1 = std::ldexp(static_cast<double>((a >> 11) + 1), -53);
  const double u2 = std::ldexp(static_cast<double>(b >> 11), -53);
  const double r = std::sqrt(-2.0 * std::log(u1));
  EXPECT_DOUBLE_EQ(z.at<double>({0}), r * std::cos(2 * std::numbers::pi * u2));
  EXPECT_DOUBLE_EQ(z.at<double>({1}), r * std::sin(2 * std::numbers::pi * u2));
}

TEST(Random, SameSeedSameTensorOnAnyThreadCount) {
  const int threads = get_num_threads();
  set_num_threads(1);
  Generator g1(1234);
  Tensor a = randn({300001}, g1);
  Tensor ai = randint(-5, 5, {300001}, g1);
  set_num_threads(2);
  Generator g2(1234);
  Tensor b = randn({300001}, g2);
  Tensor bi = randint(-5, 5, {300001}, g2);
  set_num_threads(threads);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
  EXPECT_EQ(std::memcmp(ai.raw_data(), bi.raw_data(), ai.nbytes()), 0);
  Generator g3(1235);
  EXPECT_NE(randn({4}, g3).at<float>({0}), a.at<float>({0}));
}

// Fixed seeds make these deterministic; the bounds are > 5 standard errors.
TEST(Random, Moments) {
  Generator gen(42);
  const std::int64_t n = 200000;
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    Tensor u = rand({n}, gen, d).to(DType::F64);
    Tensor z = randn({n}, gen, d).to(DType::F64);
    double su = 0, sz = 0, szz = 0, umin = 1, umax = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = u.data<double>()[i];
      const double y = z.data<double>()[i];
      su += x;
      sz += y;
      szz += y * y;
      umin = std::min(umin, x);
      umax = std::max(umax, x);
    }
    EXPECT_NEAR(su / n, 0.5, 0.004) << dtype_name(d);
    EXPECT_GE(umin, 0.0);
    EXPECT_LT(umax, 1.0) << "uniform values must stay below 1 in "
                         << dtype_name(d);
    EXPECT_NEAR(sz / n, 0.0, 0.012) << dtype_name(d);
    EXPECT_NEAR(szz / n, 1.0, 0.02) << dtype_name(d);
  }
}

TEST(Random, RandintCoversTheRangeUniformly) {
  Generator gen(3);
  Tensor t = randint(-3, 4, {70000}, gen);
  EXPECT_EQ(t.dtype(), DType::I64);
  std::int64_t counts[7] = {};
  for (std::int64_t i = 0; i < 70000; ++i) {
    const auto v = t.data<std::int64_t>()[i];
    ASSERT_GE(v, -3);
    ASSERT_LT(v, 4);
    ++counts[v + 3];
  }
  for (auto c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_TESSEL_ERROR(randint(2, 2, {1}), "E2102", "[randint]", "[2, 2)");
}

TEST(Random, FloatOnlyForRandAndRandn) {
  EXPECT_TESSEL_ERROR(rand({2}, DType::I32), "E2201", "[rand]", "i32");
  EXPECT_TESSEL_ERROR(randn({2}, DType::Bool), "E2201", "[randn]");
}

TEST(Random, DefaultGeneratorIsSeedable) {
  manual_seed(99);
  Tensor a = rand({8});
  manual_seed(99);
  Tensor b = rand({8});
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
}

}  // namespace
}  // namespace tessel

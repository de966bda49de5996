// hadamard_transform: hand values, Sylvester's matrix on every SIMD
// target, dtypes, layouts and errors.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <vector>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::expect_near_all;
using testing::sylvester_hadamard;
using testing::values;

TEST(HadamardTransform, HandValues) {
  // [1 2 3 4] H4 = [10, -2, -4, 0]; over sqrt(4) = 2.
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {4});
  EXPECT_EQ(values<float>(hadamard_transform(x)),
            (std::vector<float>{5, -1, -2, 0}));
  // Runs of two: [1 2] -> [3 -1] / sqrt(2), [3 4] -> [7 -1] / sqrt(2).
  const double r = 1 / std::sqrt(2.0);
  expect_near_all(hadamard_transform(x, 2), {3 * r, -r, 7 * r, -r}, 1e-6);
  // A run of one is the identity.
  EXPECT_EQ(values<float>(hadamard_transform(x, 1)), values<float>(x));
  EXPECT_EQ(values<double>(hadamard_transform(x.to(DType::F64))),
            (std::vector<double>{5, -1, -2, 0}));
}

TEST(HadamardTransform, SylvesterOrderOnEveryTarget) {
  Generator g(11);
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const std::int64_t n : {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024}) {
      SCOPED_TRACE(n);
      const Tensor h = sylvester_hadamard(n);
      // The rows of the identity come out as the rows of H / sqrt(n):
      // every entry ±2^(-k/2) rounded once, equal in f32.
      EXPECT_TRUE(equal(hadamard_transform(eye(n, std::nullopt, DType::F32)),
                        h.to(DType::F32)));
      EXPECT_TRUE(
          equal(hadamard_transform(eye(n, std::nullopt, DType::F64)), h));
      // Three rows of four runs each against the f64 product. Each of
      // the log2(n) stages rounds once, relative to the run's sum of
      // magnitudes: bound log2(n) 2^-24 sum|x| / sqrt(n), doubled.
      const Tensor x = randn({3, 4 * n}, g);
      const Tensor want =
          matmul(x.to(DType::F64).reshape({3, 4, n}), h).reshape({3, 4 * n});
      const Tensor got = hadamard_transform(x, n).to(DType::F64);
      const double stages = std::max(1.0, std::log2(static_cast<double>(n)));
      const Tensor bound =
          mul(sum(abs(x.to(DType::F64).reshape({3, 4, n})), {-1}, true),
              2 * stages * std::ldexp(1.0, -24) /
                  std::sqrt(static_cast<double>(n)));
      EXPECT_TRUE(
          all(le(abs(sub(got.reshape({3, 4, n}), want.reshape({3, 4, n}))),
                 add(bound, 1e-30)))
              .item<bool>());
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(HadamardTransform, AppliedTwiceGivesTheInputBack) {
  Generator g(12);
  const Tensor x = randn({5, 2, 128}, g);
  EXPECT_TRUE(allclose(hadamard_transform(hadamard_transform(x, 64), 64), x,
                       1e-6, 1e-6));
  const Tensor y = randn({7, 32}, g).to(DType::F64);
  EXPECT_TRUE(
      allclose(hadamard_transform(hadamard_transform(y)), y, 1e-14, 1e-14));
}

TEST(HadamardTransform, NarrowFloatsRoundOnceAndLayoutsAgree) {
  Generator g(13);
  const Tensor x = randn({6, 64}, g);
  for (const DType d : {DType::BF16, DType::F16, DType::F8E4M3FN}) {
    SCOPED_TRACE(dtype_name(d));
    const Tensor narrow = x.to(d);
    const Tensor got = hadamard_transform(narrow, 16);
    EXPECT_EQ(got.dtype(), d);
    EXPECT_TRUE(
        equal(got, hadamard_transform(narrow.to(DType::F32), 16).to(d)));
  }
  // A transposed (strided) view transforms as its contiguous copy.
  const Tensor t = randn({64, 6}, g).transpose(0, 1);
  EXPECT_TRUE(equal(hadamard_transform(t), hadamard_transform(t.contiguous())));
  // Empty leading axes give an empty result.
  EXPECT_EQ(hadamard_transform(zeros({0, 8})).shape(), (Shape{0, 8}));
  EXPECT_EQ(hadamard_transform(zeros({2, 0})).shape(), (Shape{2, 0}));
  EXPECT_EQ(hadamard_transform(zeros({2, 0}), 4).shape(), (Shape{2, 0}));
}

TEST(HadamardTransform, NanAndInfStayInTheirRun) {
  Tensor x = ones({2, 32});
  x.select(0, 0).select(0, 5).fill_(std::nan(""));
  x.select(0, 1).select(0, 17).fill_(INFINITY);
  const auto y = values<float>(hadamard_transform(x, 16));
  for (std::size_t i = 0; i < 16; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  // The other run of row 0 is the transform of ones: sqrt(16) at 0.
  EXPECT_EQ(y[16], 4.0f);
  for (std::size_t i = 17; i < 32; ++i) EXPECT_EQ(y[i], 0.0f) << i;
  // Row 1's second run holds +inf at its element 1: +inf where
  // H[i][1] = +1 (i even) and -inf where it is -1; its first run is finite.
  EXPECT_EQ(y[32], 4.0f);
  EXPECT_EQ(y[48], INFINITY);
  EXPECT_EQ(y[49], -INFINITY);
}

TEST(HadamardTransform, Errors) {
  EXPECT_TESSEL_ERROR(hadamard_transform(full({}, 1.0)), "E2102", "scalar");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({2, 8}), 3), "E2102",
                      "power of two", "3");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({2, 12}), 8), "E2102",
                      "do not divide", "(2, 12)");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({2, 12})), "E2102",
                      "power of two", "12");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({4}, DType::I32)), "E2201",
                      "i32");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({4}, DType::C64)), "E2201");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({4}, DType::Bool)), "E2201");
  EXPECT_TESSEL_ERROR(hadamard_transform(ones({32}).to(DType::Q8_0)), "E2201");
}

}  // namespace
}  // namespace tessel

// Hand-worked normalisations; ONNX's corpus and PyTorch cover the rest.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::expect_near_all;
using testing::values;

TEST(LayerNorm, HandWorked) {
  // [1, 2, 3, 4]: mean 2.5, biased variance 1.25, rstd 1/sqrt(1.25).
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 4});
  const double r = 1.0 / std::sqrt(1.25);
  const NormResult n = layer_norm_with_stats(x, {}, {}, 0.0);
  expect_near_all(n.y, {-1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r}, 1e-6);
  EXPECT_EQ(n.mean.shape(), (Shape{1, 1}));
  EXPECT_FLOAT_EQ(n.mean.item<float>(), 2.5f);
  EXPECT_FLOAT_EQ(n.rstd.item<float>(), static_cast<float>(r));
  // Weight and bias per element.
  const Tensor w = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor b = from_vector<float>({0, 0, 0, 10}, {4});
  expect_near_all(layer_norm(x, w, b, 0.0),
                  {-1.5 * r, -1.0 * r, 1.5 * r, 6 * r + 10}, 1e-5);
}

TEST(LayerNorm, OverSeveralTrailingAxes) {
  // axis 1 of (2, 2, 2): each sample normalised over its 4 values.
  const Tensor x = from_vector<float>({1, 2, 3, 4, 10, 10, 10, 14}, {2, 2, 2});
  const NormResult n = layer_norm_with_stats(x, {}, {}, 0.0, 1);
  EXPECT_EQ(n.mean.shape(), (Shape{2, 1, 1}));
  expect_near_all(n.mean, {2.5, 11}, 1e-6);
  // Second sample: deviations -1, -1, -1, 3; variance 3.
  const double r = 1.0 / std::sqrt(3.0);
  expect_near_all(n.y.slice(0, 1, 2), {-r, -r, -r, 3 * r}, 1e-6);
}

TEST(LayerNorm, StableForLargeOffsets) {
  // 1e4 + small values: a one-pass E[x^2] - E[x]^2 in f32 would lose
  // every digit of the variance (1e8 vs 2.9).
  const Tensor x = add(arange(6, DType::F32), 1e4).reshape({1, 6});
  const Tensor ref = layer_norm(x.to(DType::F64), {}, {}, 0.0);
  EXPECT_TRUE(
      allclose(layer_norm(x, {}, {}, 0.0).to(DType::F64), ref, 1e-5, 1e-5));
}

TEST(LayerNorm, NarrowFloatsRoundOnce) {
  // bf16 and f16 compute in f32: the same as the f32 result rounded once.
  Generator g(1);
  const Tensor x = randn({8, 96}, g);
  for (DType d : {DType::BF16, DType::F16}) {
    const Tensor xd = x.to(d);
    const Tensor want = layer_norm(xd.to(DType::F32)).to(d);
    EXPECT_TRUE(equal(layer_norm(xd), want)) << dtype_name(d);
    EXPECT_TRUE(equal(rms_norm(xd), rms_norm(xd.to(DType::F32)).to(d)))
        << dtype_name(d);
  }
}

TEST(RmsNorm, HandWorked) {
  // [3, 4]: mean square 12.5.
  const Tensor x = from_vector<float>({3, 4}, {1, 2});
  const double r = 1.0 / std::sqrt(12.5);
  expect_near_all(rms_norm(x, {}, 0.0), {3 * r, 4 * r}, 1e-6);
  const Tensor w = from_vector<float>({2, -1}, {2});
  expect_near_all(rms_norm(x, w, 0.0), {6 * r, -4 * r}, 1e-6);
  // eps inside the root: [0, 0] stays finite.
  expect_near_all(rms_norm(zeros({1, 2}), {}, 1e-6), {0, 0}, 0);
  const NormResult n = rms_norm_with_stats(x, {}, 0.0);
  EXPECT_FALSE(n.mean.defined());
  EXPECT_FLOAT_EQ(n.rstd.item<float>(), static_cast<float>(r));
}

TEST(GroupNorm, GroupsShareStatistics) {
  // (1, 4, 2): groups {c0, c1} and {c2, c3}, per-channel weights.
  const Tensor x = from_vector<float>({0, 2, 4, 6, 1, 1, 1, 5}, {1, 4, 2});
  const Tensor w = from_vector<float>({1, 1, 2, 2}, {4});
  const Tensor b = from_vector<float>({0, 0, 0, 1}, {4});
  const NormResult n = group_norm_with_stats(x, 2, w, b, 0.0);
  EXPECT_EQ(n.mean.shape(), (Shape{1, 2}));
  expect_near_all(n.mean, {3, 2}, 1e-6);
  // Group 0: deviations -3, -1, 1, 3, variance 5. Group 1: -1, -1, -1, 3,
  // variance 3.
  const double r0 = 1 / std::sqrt(5.0), r1 = 1 / std::sqrt(3.0);
  expect_near_all(
      n.y,
      {-3 * r0, -r0, r0, 3 * r0, -2 * r1, -2 * r1, -2 * r1 + 1, 6 * r1 + 1},
      1e-6);
  // Instance norm: one group per channel (a constant channel needs eps).
  expect_near_all(instance_norm(x, {}, {}, 1e-12), {-1, 1, -1, 1, 0, 0, -1, 1},
                  1e-6);
}

TEST(BatchNorm, InferenceForm) {
  // Two channels with running statistics (1, 4) and (0, 1).
  const Tensor x = from_vector<float>({3, 5, 2, -2}, {1, 2, 2});
  const Tensor y = batch_norm(
      x, from_vector<float>({1, 0}, {2}), from_vector<float>({4, 1}, {2}),
      from_vector<float>({1, 3}, {2}), from_vector<float>({0, 1}, {2}), 0.0);
  expect_near_all(y, {1, 2, 7, -5}, 1e-6);
  EXPECT_EQ(batch_norm(x.to(DType::BF16), zeros({2}), ones({2})).dtype(),
            DType::BF16);
}

TEST(NormErrors, Checked) {
  const Tensor x = zeros({2, 4});
  EXPECT_TESSEL_ERROR(layer_norm(x, zeros({3})), "E2102", "weight (3,)",
                      "(4,)");
  EXPECT_TESSEL_ERROR(layer_norm(x, {}, {}, 1e-5, 2), "E2102");
  EXPECT_TESSEL_ERROR(group_norm(zeros({1, 6, 2}), 4), "E2102", "groups");
  EXPECT_TESSEL_ERROR(batch_norm(x, zeros({3}), ones({4})), "E2102",
                      "running_mean");
  EXPECT_TESSEL_ERROR(layer_norm(zeros({2, 4}, DType::I32)), "E2201", "float");
}

TEST(NormNumerics, CheckCatchesInfinities) {
  CheckNumericsGuard on(true);
  const Tensor x = from_vector<float>({1, INFINITY}, {1, 2});
  EXPECT_TESSEL_ERROR(layer_norm(x), "E2401", "layer_norm");
  EXPECT_TESSEL_ERROR(rms_norm(x), "E2401", "rms_norm");
  EXPECT_NO_THROW(layer_norm(from_vector<float>({1, 2}, {1, 2})));
}

TEST(Swiglu, GateTimesUp) {
  // silu(g) * u with silu(g) = g * sigmoid(g).
  const Tensor gate = from_vector<float>({-2, 0, 1, 3}, {4});
  const Tensor up = from_vector<float>({1, 5, 2, -1}, {4});
  std::vector<double> want;
  const double g[] = {-2, 0, 1, 3}, u[] = {1, 5, 2, -1};
  for (int i = 0; i < 4; ++i)
    want.push_back(g[i] / (1 + std::exp(-g[i])) * u[i]);
  expect_near_all(swiglu(gate, up), want, 1e-6);
  // Long runs take the SIMD path; it agrees with silu(g) * u.
  Generator gen(2);
  const Tensor a = randn({1000}, gen), b = randn({1000}, gen);
  EXPECT_TRUE(allclose(swiglu(a, b), mul(silu(a), b), 1e-6, 1e-6));
  EXPECT_TRUE(
      allclose(swiglu(a.to(DType::BF16), b.to(DType::BF16)).to(DType::F32),
               mul(silu(a), b), 1e-2, 1e-2));
}

}  // namespace
}  // namespace tessel

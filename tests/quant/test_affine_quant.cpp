// Affine quantisation: hand-worked codes for each granularity, the round
// trip bound, and the refusals (wrong scale or zero-point shapes, bad
// dtypes, non-positive scales). PyTorch and NumPy check many random cases
// in tests/oracle/test_torch_ops.py.
#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

std::vector<int> codes(const Tensor& q) {
  const Tensor i = q.to(DType::I32).contiguous();
  const auto* p = i.data<std::int32_t>();
  return {p, p + i.numel()};
}

// scale 0.5, zero point 3: x / 0.5 = -5, -1, 0.5, 1.5, 2.5, 300 rounds half
// to even to -5, -1, 0, 2, 2, 300; + 3 and clamped to i8: -2 2 3 5 5 127.
TEST(AffineQuant, PerTensorRoundsHalfToEvenAndClamps) {
  const Tensor x =
      from_vector<float>({-2.5f, -0.5f, 0.25f, 0.75f, 1.25f, 150.f}, {6});
  AffineQuantization p;
  p.scale = full({}, 0.5);
  p.zero_point = full({}, 3, DType::I32);
  const Tensor q = quantize_affine(x, DType::I8, p);
  EXPECT_EQ(q.dtype(), DType::I8);
  EXPECT_EQ(codes(q), (std::vector<int>{-2, 2, 3, 5, 5, 127}));
  // Back: (q - 3) * 0.5.
  EXPECT_TRUE(
      equal(dequantize_affine(q, p),
            from_vector<float>({-2.5f, -0.5f, 0.f, 1.f, 1.f, 62.f}, {6})));
}

// Per channel along axis 1: column c has scale c + 1.
TEST(AffineQuant, PerChannelUsesOneScalePerIndexOfTheAxis) {
  const Tensor x = from_vector<float>({2, 2, 2, 6, 6, 6}, {2, 3});
  AffineQuantization p;
  p.scale = from_vector<float>({1, 2, 3}, {3});
  p.axis = 1;
  EXPECT_EQ(codes(quantize_affine(x, DType::U8, p)),
            (std::vector<int>{2, 1, 1, 6, 3, 2}));
}

// Groups of 2 along the last axis, packed int4: x = 1..4 with scales
// 1 and 0.5: 1, 2, 6, 8 -> clamped to 7 (int4's max).
TEST(AffineQuant, PerGroupPacksIntoInt4) {
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 4});
  AffineQuantization p;
  p.scale = from_vector<float>({1, 0.5f}, {1, 2});
  p.group_size = 2;
  const Tensor q = quantize_affine(x, DType::I4, p);
  EXPECT_EQ(q.dtype(), DType::I4);
  EXPECT_EQ(q.nbytes(), 2);
  EXPECT_EQ(codes(q), (std::vector<int>{1, 2, 6, 7}));
}

// A group that does not fill the axis (ONNX's ceil) shares the last scale.
TEST(AffineQuant, ALastPartialGroupUsesItsScale) {
  const Tensor x = from_vector<float>({4, 4, 4}, {3});
  AffineQuantization p;
  p.scale = from_vector<float>({1, 2}, {2});
  p.group_size = 2;
  p.axis = 0;
  EXPECT_EQ(codes(quantize_affine(x, DType::I8, p)),
            (std::vector<int>{4, 4, 2}));
}

// Symmetric i8 per channel: scale = max|x| / 127.5 (PyTorch's observer),
// so every round trip error is at most half a step.
TEST(AffineQuant, ChosenParametersRoundTripWithinHalfAStep) {
  Generator gen(7);
  const Tensor x = randn({8, 64}, gen);
  AffineChoice c;
  c.per_channel = true;
  c.axis = 0;
  const AffineQuantization p = choose_affine_quantization(x, DType::I8, c);
  EXPECT_EQ(p.scale.shape(), (Shape{8}));
  EXPECT_FALSE(p.zero_point.defined());
  const Tensor back = dequantize_affine(quantize_affine(x, DType::I8, p), p);
  const Tensor err = abs(sub(back, x));
  const Tensor half_step = div(p.scale.reshape({8, 1}), 2.0);
  // The largest value may clip by up to half a step too (127.5 -> 127).
  EXPECT_TRUE(all(le(err, add(half_step, 1e-6))).item<bool>());
  // Asymmetric u4 in groups of 16.
  AffineChoice g;
  g.symmetric = false;
  g.group_size = 16;
  const AffineQuantization pg = choose_affine_quantization(x, DType::U4, g);
  EXPECT_EQ(pg.scale.shape(), (Shape{8, 4}));
  EXPECT_EQ(pg.zero_point.dtype(), DType::I32);
  const Tensor qg = quantize_affine(x, DType::U4, pg);
  const Tensor eg = abs(sub(dequantize_affine(qg, pg), x));
  const Tensor hg = div(repeat(pg.scale, 16, 1), 2.0);
  EXPECT_TRUE(all(le(eg, add(hg, 1e-6))).item<bool>());
}

TEST(AffineQuant, WrongParametersAreRefusedWithTheExpectedShape) {
  const Tensor x = zeros({4, 6});
  AffineQuantization p;
  p.scale = ones({4});
  p.axis = 1;  // axis 1 has 6 channels
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::I8, p), "E2102",
                      "scale of shape (4,)", "expected (6,)");
  p.scale = ones({4, 2});
  p.group_size = 4;  // ceil(6 / 4) = 2 groups along axis 1: (4, 2) fits
  p.zero_point = zeros({2}, DType::I32);
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::I8, p), "E2102", "zero_point",
                      "(2,)");
  p.zero_point = zeros({4, 2});
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::I8, p), "E2201", "zero_point",
                      "f32");
  p.zero_point = Tensor();
  p.group_size = 3;  // 2 groups of 3: (4, 2) still fits
  EXPECT_NO_THROW((void)quantize_affine(x, DType::I8, p));
  p.group_size = 2;  // 3 groups expected
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::I8, p), "E2102", "groups of 2",
                      "expected (4, 3)");
  AffineQuantization t;
  t.scale = full({}, 0.0);
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::I8, t), "E2102",
                      "positive and finite");
  t.scale = full({}, 1.0);
  EXPECT_TESSEL_ERROR(quantize_affine(x, DType::F16, t), "E2201", "f16");
  EXPECT_TESSEL_ERROR(dequantize_affine(x, t), "E2201", "integer");
  AffineChoice c;
  c.group_size = 4;
  EXPECT_TESSEL_ERROR(choose_affine_quantization(x, DType::I8, c), "E2102",
                      "extent 6", "groups of 4");
}

TEST(AffineQuant, RunsOnMetaWithoutData) {
  const Tensor x = empty({4, 64}, DType::F32, Device::meta());
  AffineQuantization p;
  p.scale = empty({4, 4}, DType::F32, Device::meta());
  p.group_size = 16;
  const Tensor q = quantize_affine(x, DType::I4, p);
  EXPECT_EQ(q.dtype(), DType::I4);
  EXPECT_EQ(dequantize_affine(q, p).shape(), (Shape{4, 64}));
}

}  // namespace
}  // namespace tessel

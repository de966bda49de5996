// Hand-worked convolutions and pooling; the random layouts, groups and
// dilations are compared with PyTorch in tests/oracle/test_torch_ops.py.
#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// x = 0..8 as (1, 1, 3, 3); a 2x2 kernel of ones sums each 2x2 window.
Tensor x33() { return arange(9, DType::F32).reshape({1, 1, 3, 3}); }
Tensor ones22() { return ones({1, 1, 2, 2}, DType::F32); }

TEST(Conv, WindowSums) {
  const Tensor y = conv2d(x33(), ones22());
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{8, 12, 20, 24}));
}

TEST(Conv, PaddingStrideAndBias) {
  // Padding 1, stride 2 over the 5x5 padded input: windows at (-1,-1),
  // (-1,1), (1,-1), (1,1) in input coordinates.
  ConvOptions o;
  o.padding = {1};
  o.stride = {2};
  const Tensor y = conv2d(x33(), ones22(), from_vector<float>({100}, {1}), o);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  // 0 | 1+2 | 3+6 | 4+5+7+8, plus the bias.
  EXPECT_EQ(values<float>(y), (std::vector<float>{100, 103, 109, 124}));
}

TEST(Conv, SamePaddingKeepsTheSize) {
  ConvOptions o;
  o.auto_pad = AutoPad::SameUpper;
  // 2x2 kernel: total padding 1 per axis, at the end for SAME_UPPER.
  const Tensor upper = conv2d(x33(), ones22(), {}, o);
  EXPECT_EQ(values<float>(upper),
            (std::vector<float>{8, 12, 7, 20, 24, 13, 13, 15, 8}));
  o.auto_pad = AutoPad::SameLower;
  const Tensor lower = conv2d(x33(), ones22(), {}, o);
  EXPECT_EQ(values<float>(lower),
            (std::vector<float>{0, 1, 3, 3, 8, 12, 9, 20, 24}));
}

TEST(Conv, Dilation) {
  // A dilated 2x2 kernel touches the four corners of the 3x3 input.
  ConvOptions o;
  o.dilation = {2, 2};
  EXPECT_EQ(values<float>(conv2d(x33(), ones22(), {}, o)),
            (std::vector<float>{0 + 2 + 6 + 8}));
}

TEST(Conv, DepthwiseGroups) {
  // Two channels, one filter each: channel 0 is scaled by 1, channel 1 by -2.
  const Tensor x = arange(8, DType::F32).reshape({1, 2, 2, 2});
  const Tensor w = from_vector<float>({1, -2}, {2, 1, 1, 1});
  ConvOptions o;
  o.groups = 2;
  EXPECT_EQ(values<float>(conv2d(x, w, {}, o)),
            (std::vector<float>{0, 1, 2, 3, -8, -10, -12, -14}));
}

TEST(Conv, Conv1dAndChannelsMixing) {
  // (1, 2, 4) input, two output channels: out0 = in0 + in1, out1 = in0 - in1
  // with a length-1 kernel.
  const Tensor x = from_vector<float>({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 4});
  const Tensor w = from_vector<float>({1, 1, 1, -1}, {2, 2, 1});
  EXPECT_EQ(values<float>(conv1d(x, w)),
            (std::vector<float>{11, 22, 33, 44, -9, -18, -27, -36}));
}

TEST(Conv, ChannelsLastMatchesChannelsFirst) {
  Generator g(7);
  const Tensor x = randn({2, 6, 9, 7}, g, DType::F32);
  const Tensor w = randn({4, 3, 3, 2}, g, DType::F32);  // groups 2
  const Tensor b = randn({4}, g, DType::F32);
  ConvOptions o;
  o.groups = 2;
  o.stride = {2, 1};
  o.padding = {1, 0, 2, 1};
  o.dilation = {1, 2};
  const Tensor first = conv2d(x, w, b, o);
  o.layout = DataLayout::ChannelsLast;
  const Tensor last = conv2d(x.permute({0, 2, 3, 1}).contiguous(),
                             w.permute({2, 3, 1, 0}).contiguous(), b, o);
  ASSERT_EQ(last.shape(), (Shape{2, first.shape()[2], first.shape()[3], 4}));
  EXPECT_TRUE(allclose(last.permute({0, 3, 1, 2}), first, 1e-5, 1e-5));
}

TEST(Conv, EveryFloatDTypeAgreesWithF64) {
  // The f64 path is a direct loop; f32/bf16/f16 run on oneDNN.
  Generator g(11);
  const Tensor x = randn({2, 4, 6, 5}, g, DType::F64);
  const Tensor w = randn({6, 2, 3, 3}, g, DType::F64);
  ConvOptions o;
  o.groups = 2;
  o.padding = {1};
  const Tensor ref = conv2d(x, w, {}, o);
  // Tolerances: f32 products summed over 18 terms (rounding ~1e-6 relative);
  // bf16/f16 inputs are rounded first (8 / 11 significant bits).
  const std::pair<DType, double> cases[] = {
      {DType::F32, 1e-5}, {DType::F16, 2e-2}, {DType::BF16, 1.5e-1}};
  for (auto [d, tol] : cases) {
    const Tensor y = conv2d(x.to(d), w.to(d), {}, o);
    EXPECT_EQ(y.dtype(), d);
    EXPECT_TRUE(allclose(y.to(DType::F64), ref, tol, tol)) << dtype_name(d);
  }
}

TEST(Conv, NonContiguousInputs) {
  Generator g(3);
  const Tensor x = randn({1, 3, 8, 8}, g, DType::F32);
  const Tensor w = randn({2, 3, 3, 3}, g, DType::F32);
  const Tensor xs = x.slice(3, 0, 8, 2);  // every other column
  EXPECT_TRUE(allclose(conv2d(xs, w), conv2d(xs.contiguous(), w), 1e-6, 1e-6));
}

TEST(ConvTranspose, SpreadsEachInput) {
  // Each input value adds a 2x2 block of itself at its position.
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_EQ(values<float>(conv_transpose2d(x, ones22())),
            (std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
  ConvOptions o;
  o.stride = {2};
  const Tensor s = conv_transpose2d(x, ones22(), {}, o);
  EXPECT_EQ(s.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(values<float>(s), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3,
                                                  4, 4, 3, 3, 4, 4}));
  o.padding = {1};
  o.output_padding = {1};
  // Padding crops 1 from each side; output_padding adds one at the end.
  EXPECT_EQ(values<float>(conv_transpose2d(x, ones22(), {}, o)),
            (std::vector<float>{1, 2, 2, 3, 4, 4, 3, 4, 4}));
}

TEST(ConvTranspose, IsTheAdjointOfConv) {
  // <conv(x, w), y> == <x, conv_transpose(y, w)> for any x, y.
  Generator g(5);
  const Tensor x = randn({2, 4, 7, 6}, g, DType::F64);
  const Tensor w = randn({6, 2, 3, 2}, g, DType::F64);
  ConvOptions o;
  o.groups = 2;
  o.stride = {2, 1};
  o.padding = {1, 1};
  o.dilation = {1, 2};
  const Tensor cx = conv2d(x.to(DType::F32), w.to(DType::F32), {}, o);
  const Tensor y = randn(cx.shape(), g, DType::F32);
  o.output_padding = {0, 0};
  // For stride 2 the transposed output can be one short; ask for x's size.
  o.output_shape = {7, 6};
  const Tensor ty = conv_transpose2d(y, w.to(DType::F32), {}, o);
  ASSERT_EQ(ty.shape(), x.shape());
  const double lhs = sum(mul(cx, y).to(DType::F64)).item<double>();
  const double rhs = sum(mul(x, ty.to(DType::F64))).item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-4 * std::abs(lhs) + 1e-4);
}

TEST(ConvTranspose, DirectKernelMatchesOneDnn) {
  // f64 runs the direct kernel, f32 oneDNN's deconvolution.
  Generator g(12);
  const Tensor x = randn({2, 4, 5, 6}, g, DType::F64);
  const Tensor w = randn({4, 3, 3, 2}, g, DType::F64);
  const Tensor b = randn({6}, g, DType::F64);
  ConvOptions o;
  o.groups = 2;
  o.stride = {2, 3};
  o.dilation = {2, 1};
  o.padding = {1, 0};
  o.output_padding = {1, 2};
  const Tensor y64 = conv_transpose2d(x, w, b, o);
  const Tensor y32 =
      conv_transpose2d(x.to(DType::F32), w.to(DType::F32), b.to(DType::F32), o);
  EXPECT_EQ(y64.shape(), (Shape{2, 6, 12, 19}));
  EXPECT_TRUE(allclose(y32.to(DType::F64), y64, 1e-5, 1e-5));
  // output_padding past the padding on a kernel of extent 1 (which oneDNN
  // refuses) falls back to the direct kernel in f32 too: the extra column
  // holds only the bias.
  ConvOptions e;
  e.dilation = {1, 2};
  e.output_padding = {0, 1};
  const Tensor w1 = randn({4, 2, 3, 1}, g, DType::F64);
  const Tensor z = conv_transpose2d(x.to(DType::F32), w1.to(DType::F32), {}, e);
  EXPECT_EQ(z.shape(), (Shape{2, 2, 7, 7}));
  EXPECT_TRUE(
      allclose(z.to(DType::F64), conv_transpose2d(x, w1, {}, e), 1e-5, 1e-5));
  EXPECT_TRUE(equal(z.slice(3, 6, 7), zeros({2, 2, 7, 1})));
}

TEST(ConvErrors, ShapesAreChecked) {
  const Tensor x = zeros({1, 4, 5, 5});
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 3, 3, 3})), "E2102", "input channels",
                      "(1, 4, 5, 5)");
  ConvOptions o;
  o.groups = 3;
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({3, 1, 3, 3}), {}, o), "E2102", "groups");
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 7, 7})), "E2102",
                      "larger than the padded input");
  EXPECT_TESSEL_ERROR(conv2d(x.reshape({4, 5, 5}), zeros({2, 4, 3, 3})),
                      "E2102", "4-D");
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 3})), "E2102", "rank");
  ConvOptions p;
  p.padding = {1, 1, 1};
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 3, 3}), {}, p), "E2102",
                      "padding has 3 values");
  p.stride = {1, 1, 1};
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 3, 3}), {}, p), "E2102",
                      "stride has 3 values");
  p.stride = {};
  p.padding = {-1};
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 3, 3}), {}, p), "E2102",
                      "negative padding");
  EXPECT_TESSEL_ERROR(conv2d(x, zeros({2, 4, 3, 3}), zeros({3})), "E2102",
                      "bias");
  EXPECT_TESSEL_ERROR(conv2d(x.to(DType::I32), zeros({2, 4, 3, 3}, DType::I32)),
                      "E2201", "floating-point");
}

TEST(Pool, MaxAndAverage) {
  const Tensor x = arange(16, DType::F32).reshape({1, 1, 4, 4});
  PoolOptions o;
  o.kernel = {2, 2};
  const MaxPoolResult m = max_pool_with_indices(x, o);
  EXPECT_EQ(values<float>(m.values), (std::vector<float>{5, 7, 13, 15}));
  EXPECT_EQ(m.indices.dtype(), DType::I64);
  EXPECT_EQ(values<std::int64_t>(m.indices),
            (std::vector<std::int64_t>{5, 7, 13, 15}));
  EXPECT_EQ(values<float>(avg_pool2d(x, o)),
            (std::vector<float>{2.5, 4.5, 10.5, 12.5}));
}

TEST(Pool, PaddingCountsAndCeilMode) {
  const Tensor x = arange(9, DType::F32).reshape({1, 1, 3, 3});
  PoolOptions o;
  o.kernel = {2, 2};
  o.stride = {2, 2};
  o.padding = {1};
  // Windows over the padded 5x5 grid: {0}, {1,2}, {3,6}, {4,5,7,8}.
  EXPECT_EQ(values<float>(avg_pool2d(x, o)),
            (std::vector<float>{0, 1.5, 4.5, 6}));
  o.count_include_pad = true;
  EXPECT_EQ(values<float>(avg_pool2d(x, o)),
            (std::vector<float>{0, 0.75, 2.25, 6}));
  EXPECT_EQ(values<float>(max_pool2d(x, o)), (std::vector<float>{0, 2, 6, 8}));
  PoolOptions c;
  c.kernel = {2, 2};
  c.stride = {2, 2};
  EXPECT_EQ(max_pool2d(x, c).shape(), (Shape{1, 1, 1, 1}));
  c.ceil_mode = true;  // a partial window on the end
  EXPECT_EQ(values<float>(max_pool2d(x, c)), (std::vector<float>{4, 5, 7, 8}));
  EXPECT_EQ(values<float>(avg_pool2d(x, c)),
            (std::vector<float>{2, 3.5, 6.5, 8}));
}

TEST(Pool, ChannelsLastAndIntegers) {
  Generator g(9);
  const Tensor x = randn({2, 3, 6, 5}, g, DType::F32);
  PoolOptions o;
  o.kernel = {3, 2};
  o.stride = {1, 2};
  const Tensor first = max_pool2d(x, o);
  o.layout = DataLayout::ChannelsLast;
  const Tensor last = max_pool2d(x.permute({0, 2, 3, 1}), o);
  EXPECT_TRUE(equal(last.permute({0, 3, 1, 2}), first));
  // Max pooling keeps integer dtypes exactly.
  const Tensor u = from_vector<std::uint8_t>({1, 255, 3, 4}, {1, 1, 2, 2});
  PoolOptions k;
  k.kernel = {2, 2};
  const Tensor mu = max_pool2d(u, k);
  EXPECT_EQ(mu.dtype(), DType::U8);
  EXPECT_EQ(mu.item<int>(), 255);
  EXPECT_TESSEL_ERROR(avg_pool2d(u, k), "E2201", "float");
}

TEST(Pool, GlobalAverage) {
  const Tensor x = arange(8, DType::F32).reshape({1, 2, 2, 2});
  const Tensor y = global_avg_pool(x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1.5, 5.5}));
  const Tensor yl =
      global_avg_pool(x.permute({0, 2, 3, 1}), DataLayout::ChannelsLast);
  EXPECT_EQ(yl.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(values<float>(yl), (std::vector<float>{1.5, 5.5}));
}

TEST(PoolErrors, ShapesAreChecked) {
  const Tensor x = zeros({1, 1, 3, 3});
  PoolOptions o;
  o.kernel = {4, 4};
  EXPECT_TESSEL_ERROR(max_pool2d(x, o), "E2102",
                      "larger than the padded input");
  o.kernel = {2};
  EXPECT_TESSEL_ERROR(max_pool2d(x, o), "E2102", "kernel has 1 values");
  o.kernel = {2, 2};
  o.padding = {2};
  EXPECT_TESSEL_ERROR(max_pool2d(x, o), "E2102", "smaller than the window");
}

}  // namespace
}  // namespace tessel

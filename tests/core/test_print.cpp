// Expected strings are NumPy 1.24's array2string(a, separator=", ",
// prefix="tensor(", suffix=",") followed by tessel's shape/dtype tail, so
// layout, padding, wrapping and summarising are NumPy's.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "tessel/tessel.hpp"

namespace tessel {
namespace {

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

TEST(Print, Matrix) {
  EXPECT_EQ(str(arange(6, DType::F32).reshape({2, 3})),
            "tensor([[0., 1., 2.],\n        [3., 4., 5.]], shape=(2, 3), "
            "dtype=f32)");
}

TEST(Print, FloatsPadToACommonDecimalPoint) {
  EXPECT_EQ(str(from_vector<float>({1, 2.5}, {2})),
            "tensor([1. , 2.5], shape=(2,), dtype=f32)");
  EXPECT_EQ(str(from_vector<float>({0.1f, 1.25f, -10.5f}, {3})),
            "tensor([  0.1 ,   1.25, -10.5 ], shape=(3,), dtype=f32)");
  EXPECT_EQ(str(from_vector<float>({-0.0f, 2.0f}, {2})),
            "tensor([-0.,  2.], shape=(2,), dtype=f32)");
}

TEST(Print, ScientificWhenTheRangeIsWide) {
  EXPECT_EQ(str(from_vector<float>({1e-5f, 1.0f}, {2})),
            "tensor([1.e-05, 1.e+00], shape=(2,), dtype=f32)");
  EXPECT_EQ(str(from_vector<float>({1.5e-5f, 1.0f, 123456789.0f}, {3})),
            "tensor([1.5000000e-05, 1.0000000e+00, 1.2345679e+08],\n       "
            "shape=(3,), dtype=f32)");
}

TEST(Print, NonFiniteValues) {
  EXPECT_EQ(str(from_vector<float>({NAN, 1.5f, -INFINITY}, {3})),
            "tensor([ nan,  1.5, -inf], shape=(3,), dtype=f32)");
}

TEST(Print, ShortestDigitsOfTheDType) {
  EXPECT_EQ(str(from_vector<double>({1.0 / 3.0}, {1})),
            "tensor([0.33333333], shape=(1,), dtype=f64)");
  // 0.1 in f16 is 0.0999755859375; its shortest f16 repr is 0.1.
  EXPECT_EQ(str(full({1}, 0.1, DType::F16)),
            "tensor([0.1], shape=(1,), dtype=f16)");
}

TEST(Print, WrapsLongRows) {
  Tensor t = arange(30, DType::F32);
  // arange / 7 in f32, as NumPy computes it.
  for (int i = 0; i < 30; ++i) t.at<float>({i}) = static_cast<float>(i) / 7.0f;
  EXPECT_EQ(str(t),
            "tensor([0.        , 0.14285715, 0.2857143 , 0.42857143, "
            "0.5714286 ,\n        0.71428573, 0.85714287, 1.        , "
            "1.1428572 , 1.2857143 ,\n        1.4285715 , 1.5714285 , "
            "1.7142857 , 1.8571428 , 2.        ,\n        2.142857  , "
            "2.2857144 , 2.4285715 , 2.5714285 , 2.7142856 ,\n        "
            "2.857143  , 3.        , 3.142857  , 3.2857144 , 3.4285715 ,\n "
            "       3.5714285 , 3.7142856 , 3.857143  , 4.        , 4.142857  "
            "],\n       shape=(30,), dtype=f32)");
}

TEST(Print, SummarisesBeyondTheThreshold) {
  EXPECT_EQ(str(arange(2000)),
            "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,), "
            "dtype=i64)");
  EXPECT_EQ(
      str(arange(3000, DType::F32).reshape({30, 100})),
      "tensor([[0.000e+00, 1.000e+00, 2.000e+00, ..., 9.700e+01, 9.800e+01,\n"
      "         9.900e+01],\n"
      "        [1.000e+02, 1.010e+02, 1.020e+02, ..., 1.970e+02, 1.980e+02,\n"
      "         1.990e+02],\n"
      "        [2.000e+02, 2.010e+02, 2.020e+02, ..., 2.970e+02, 2.980e+02,\n"
      "         2.990e+02],\n"
      "        ...,\n"
      "        [2.700e+03, 2.701e+03, 2.702e+03, ..., 2.797e+03, 2.798e+03,\n"
      "         2.799e+03],\n"
      "        [2.800e+03, 2.801e+03, 2.802e+03, ..., 2.897e+03, 2.898e+03,\n"
      "         2.899e+03],\n"
      "        [2.900e+03, 2.901e+03, 2.902e+03, ..., 2.997e+03, 2.998e+03,\n"
      "         2.999e+03]], shape=(30, 100), dtype=f32)");
}

TEST(Print, IntegersBoolsAndHigherRanks) {
  EXPECT_EQ(str(arange(24).reshape({2, 3, 4})),
            "tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n        "
            " [ 8,  9, 10, 11]],\n\n        [[12, 13, 14, 15],\n         [16, "
            "17, 18, 19],\n         [20, 21, 22, 23]]], shape=(2, 3, 4), "
            "dtype=i64)");
  EXPECT_EQ(str(from_vector<std::int8_t>({-5, 100, 7}, {3})),
            "tensor([ -5, 100,   7], shape=(3,), dtype=i8)");
  EXPECT_EQ(str(from_vector(std::vector<bool>{true, false})),
            "tensor([ True, False], shape=(2,), dtype=bool)");
  EXPECT_EQ(str(full({}, true)), "tensor(True, shape=(), dtype=bool)");
}

TEST(Print, ScalarsEmptyAndNamed) {
  EXPECT_EQ(str(full({}, 3.5f)), "tensor(3.5, shape=(), dtype=f32)");
  EXPECT_EQ(str(zeros({0, 3})), "tensor([], shape=(0, 3), dtype=f32)");
  Tensor w = ones({2}, DType::BF16);
  w.set_name("model.norm.weight");
  EXPECT_EQ(
      str(w),
      "tensor([1., 1.], shape=(2,), dtype=bf16, name='model.norm.weight')");
  EXPECT_EQ(str(arange(4, DType::I4)),
            "tensor([0, 1, 2, 3], shape=(4,), dtype=i4)");
  EXPECT_EQ(str(zeros({2, 64}, DType::Q4_0)),
            "tensor(<4 q4_0 blocks of 32>, shape=(2, 64), dtype=q4_0)");
  EXPECT_EQ(str(Tensor()), "tensor(undefined)");
}

TEST(Print, OptionsControlSummary) {
  PrintOptions options;
  options.threshold = 4;
  options.edge_items = 1;
  EXPECT_EQ(to_string(arange(6), options),
            "tensor([0, ..., 5], shape=(6,), dtype=i64)");
}

}  // namespace
}  // namespace tessel

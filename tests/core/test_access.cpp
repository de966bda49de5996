#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Access, AtReadsAndWritesThroughStrides) {
  Tensor t = arange(6, DType::I32).reshape({2, 3});
  EXPECT_EQ(t.at<std::int32_t>({1, 2}), 5);
  EXPECT_EQ(t.at<std::int32_t>({-1, -3}), 3);  // negative indices count back
  t.at<std::int32_t>({0, 1}) = 42;
  EXPECT_EQ(t.transpose(0, 1).at<std::int32_t>({1, 0}), 42);
}

TEST(Access, WrongIndexCountIsE2102) {
  Tensor t = zeros({2, 3});
  EXPECT_TESSEL_ERROR(t.at<float>({1}), "E2102", "[at]", "1 indices", "(2, 3)");
  EXPECT_TESSEL_ERROR(t.at<float>({0, 0, 0}), "E2102");
}

TEST(Access, OutOfRangeIsE2302) {
  Tensor t = zeros({2, 3});
  EXPECT_TESSEL_ERROR(t.at<float>({2, 0}), "E2302", "[at]", "index 2", "axis 0",
                      "extent 2");
  EXPECT_TESSEL_ERROR(t.at<float>({0, -4}), "E2302", "index -4");
  EXPECT_TESSEL_ERROR(t.get({0, 3}), "E2302", "[get]");
}

TEST(Access, WrongElementTypeIsE2201) {
  Tensor t = zeros({2}, DType::F16);
  EXPECT_TESSEL_ERROR(t.at<float>({0}), "E2201", "f32", "f16");
  EXPECT_TESSEL_ERROR(t.data<double>(), "E2201", "[data]");
  EXPECT_EQ(t.at<Half>({1}).bits, 0);
  EXPECT_TESSEL_ERROR(zeros({4}, DType::I4).at<std::int8_t>({0}), "E2201");
}

TEST(Access, FlatIsCheckedAndFollowsTheShapeNotTheMemory) {
  Tensor t = arange(6, DType::I32).reshape({2, 3});
  EXPECT_EQ(t.flat<std::int32_t>(4), 4);
  EXPECT_EQ(t.flat<std::int32_t>(-1), 5);
  // The transposed view's row-major order is 0 3 1 4 2 5: its element 1
  // is the memory's element 3, which raw data()[1] would not give.
  const Tensor tt = t.transpose();
  EXPECT_EQ(tt.flat<std::int32_t>(1), 3);
  EXPECT_EQ(tt.data<std::int32_t>()[1], 1);
  t.transpose().flat<std::int32_t>(5) = 50;
  EXPECT_EQ(t.at<std::int32_t>({1, 2}), 50);
  EXPECT_EQ(full({}, 2.5f).flat<float>(0), 2.5f);
  EXPECT_TESSEL_ERROR(t.flat<std::int32_t>(6), "E2302", "[flat]", "6",
                      "(2, 3)");
  EXPECT_TESSEL_ERROR(t.flat<std::int32_t>(-7), "E2302");
  EXPECT_TESSEL_ERROR(zeros({0}).flat<float>(0), "E2302");
  EXPECT_TESSEL_ERROR(t.flat<float>(0), "E2201", "f32", "i32");
  EXPECT_TESSEL_ERROR(empty({2}, DType::F32, Device::meta()).flat<float>(0),
                      "E2501");
}

TEST(Access, DataPointsAtTheFirstElementOfAView) {
  Tensor t = arange(10, DType::F64);
  Tensor tail = t.slice(0, 7, 10);
  EXPECT_EQ(tail.data<double>()[0], 7.0);
  EXPECT_EQ(tail.const_data<double>(), t.const_data<double>() + 7);
}

TEST(Access, ItemConvertsTheOnlyElement) {
  EXPECT_EQ(full({1, 1}, 3.75f).item<float>(), 3.75f);
  EXPECT_EQ(full({}, 3.75f).item<int>(), 3);
  EXPECT_EQ(full({}, true).item<double>(), 1.0);
  EXPECT_EQ(full({}, 200, DType::U8).item<std::int8_t>(), -56);
  EXPECT_EQ(full({1}, -3, DType::I4).item<int>(), -3);
  EXPECT_EQ(full({}, 1.5f, DType::BF16).item<float>(), 1.5f);
  EXPECT_TESSEL_ERROR(zeros({2}).item<float>(), "E2102", "[item]", "(2,)");
  EXPECT_TESSEL_ERROR(zeros({0}).item<float>(), "E2102");
}

TEST(Access, GetAndSetWorkForEveryDType) {
  for (DType d : testing::kElementDTypes) {
    Tensor t = zeros({3}, d);
    t.set({2}, 1);
    EXPECT_EQ(t.get({2}).to<int>(), 1) << dtype_name(d);
    EXPECT_EQ(t.get({1}).to<int>(), 0) << dtype_name(d);
  }
}

TEST(Access, ScalarKinds) {
  EXPECT_TRUE(Scalar(1.5).is_floating_point());
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_TRUE(Scalar(std::uint64_t{7}).is_integral());
  EXPECT_EQ(Scalar(2.5f).default_dtype(), DType::F32);
  EXPECT_EQ(Scalar(2).default_dtype(), DType::I64);
  EXPECT_EQ(Scalar(false).default_dtype(), DType::Bool);
  EXPECT_EQ(Scalar(-1).to<std::uint8_t>(), 255);
  EXPECT_EQ(Scalar(Half(0.5f)).to<double>(), 0.5);
}

}  // namespace
}  // namespace tessel

#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Factories, EmptyZerosOnesFull) {
  Tensor e = empty({2, 3}, DType::I16);
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.dtype(), DType::I16);
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.device(), Device::cpu());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(e.raw_data()) % 64, 0u);
  Tensor z = zeros({4}, DType::BF16);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(z.at<BFloat16>({i}).bits, 0);
  Tensor o = ones({2, 2}, DType::F8E5M2);
  EXPECT_EQ(o.at<Float8E5M2>({1, 1}).bits, 0x3C);
  Tensor f = full({3}, 2.5);  // a float value defaults to f32
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.at<float>({2}), 2.5f);
  EXPECT_EQ(full({2}, 7).dtype(), DType::I64);
  EXPECT_EQ(full({2}, true).dtype(), DType::Bool);
  EXPECT_EQ(full({2}, 7, DType::U8).at<std::uint8_t>({1}), 7);
  EXPECT_EQ(zeros({}).rank(), 0);
  EXPECT_TESSEL_ERROR(zeros({2, -3}), "E2102", "negative extent");
}

TEST(Factories, Arange) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), DType::I64);
  EXPECT_EQ(a.shape(), (Shape{5}));
  EXPECT_EQ(a.at<std::int64_t>({4}), 4);
  Tensor b = arange(10, 0, -3);  // 10, 7, 4, 1
  EXPECT_EQ(b.shape(), (Shape{4}));
  EXPECT_EQ(b.at<std::int64_t>({3}), 1);
  Tensor c = arange(0.0, 1.0, 0.25);  // 0, .25, .5, .75
  EXPECT_EQ(c.dtype(), DType::F32);
  EXPECT_EQ(c.shape(), (Shape{4}));
  EXPECT_EQ(c.at<float>({3}), 0.75f);
  EXPECT_EQ(arange(1, 2, 0.3).shape(), (Shape{4}));  // ceil(1 / 0.3)
  EXPECT_EQ(arange(5, 1).numel(), 0);
  EXPECT_EQ(arange(4, DType::I4).get({3}).to<int>(), 3);
  EXPECT_TESSEL_ERROR(arange(0, 5, 0), "E2102", "[arange]", "zero");
  EXPECT_TESSEL_ERROR(arange(0.0, INFINITY, 1.0), "E2102", "finite");
}

TEST(Factories, LinspaceHitsBothEnds) {
  Tensor t = linspace(-1.0, 1.0, 5);  // -1, -.5, 0, .5, 1
  EXPECT_EQ(t.at<float>({0}), -1.0f);
  EXPECT_EQ(t.at<float>({1}), -0.5f);
  EXPECT_EQ(t.at<float>({2}), 0.0f);
  EXPECT_EQ(t.at<float>({4}), 1.0f);
  Tensor d = linspace(0.0, 0.3, 4, DType::F64);
  EXPECT_EQ(d.at<double>({3}), 0.3);  // exactly the end, not 3 * 0.1
  EXPECT_EQ(linspace(2.0, 3.0, 1).at<float>({0}), 2.0f);
  EXPECT_EQ(linspace(2.0, 3.0, 0).numel(), 0);
  EXPECT_TESSEL_ERROR(linspace(0, 1, -1), "E2102");
}

TEST(Factories, Eye) {
  Tensor i = eye(3);
  EXPECT_EQ(i.shape(), (Shape{3, 3}));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(i.at<float>({r, c}), r == c ? 1.0f : 0.0f);
  Tensor rect = eye(2, 4, DType::I32);
  EXPECT_EQ(rect.at<std::int32_t>({1, 1}), 1);
  EXPECT_EQ(rect.at<std::int32_t>({1, 3}), 0);
  EXPECT_EQ(eye(0).numel(), 0);
}

TEST(Factories, FromVectorCopies) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  Tensor t = from_vector(values, {2, 3});
  values[0] = 100;
  EXPECT_EQ(t.at<float>({0, 0}), 1.0f);
  EXPECT_EQ(t.at<float>({1, 2}), 6.0f);
  Tensor b = from_vector(std::vector<bool>{true, false, true});
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_TRUE(b.at<bool>({2}));
  EXPECT_FALSE(b.at<bool>({1}));
  Tensor h = from_vector<Half>({Half(1.5f), Half(-2.0f)}, {2});
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_TESSEL_ERROR(from_vector(values, {4, 2}), "E2102", "6 values",
                      "(4, 2)");
}

TEST(Factories, FromBlobIsZeroCopyWithDeleter) {
  auto* buffer = new double[6]{0, 1, 2, 3, 4, 5};
  bool deleted = false;
  {
    Tensor t = from_blob(buffer, {2, 3}, DType::F64, {}, [&](void* p) {
      delete[] static_cast<double*>(p);
      deleted = true;
    });
    EXPECT_EQ(t.storage().origin(), StorageOrigin::Borrowed);
    EXPECT_EQ(t.const_data<double>(), buffer);
    t.at<double>({1, 1}) = 40;
    EXPECT_EQ(buffer[4], 40);
    // Column view with explicit strides over the same memory.
    Tensor col = from_blob(buffer, {2}, DType::F64, {3});
    EXPECT_EQ(col.at<double>({1}), 3.0);
  }
  EXPECT_TRUE(deleted);
  EXPECT_TESSEL_ERROR(from_blob(nullptr, {2}, DType::F32), "E2102", "null");
  float one = 1;
  EXPECT_TESSEL_ERROR(from_blob(&one, {2}, DType::F32, {-1}), "E2102");
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

TEST(Factories, PinnedTensorsAreAnAllocationOption) {
  Tensor p =
      empty_pinned({4, 1024}, DType::F32, /*fall_back_to_pageable=*/true);
  EXPECT_EQ(p.shape(), (Shape{4, 1024}));
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_TRUE(p.storage().origin() == StorageOrigin::Pinned ||
              p.storage().origin() == StorageOrigin::Owned);
  const Tensor x = arange(6, DType::I32).reshape({2, 3}).transpose(0, 1);
  const Tensor pinned = pin_memory(x, /*fall_back_to_pageable=*/true);
  EXPECT_TRUE(pinned.is_contiguous());
  EXPECT_EQ(pinned.shape(), (Shape{3, 2}));
  EXPECT_EQ(pinned.at<std::int32_t>({2, 1}), 5);
  EXPECT_FALSE(pinned.storage().is_same(x.storage()));
  EXPECT_TESSEL_ERROR(pin_memory(Tensor()), "E2102", "undefined");
}

}  // namespace
}  // namespace tessel

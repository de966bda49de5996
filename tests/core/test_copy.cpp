#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Copy, ContiguousIsANoOpWhenAlreadyContiguous) {
  Tensor t = arange(6, DType::F32).reshape({2, 3});
  EXPECT_TRUE(t.contiguous().shares_storage_with(t));
  Tensor tr = t.transpose(0, 1);
  Tensor c = tr.contiguous();
  EXPECT_FALSE(c.shares_storage_with(t));
  EXPECT_TRUE(c.is_contiguous());
  // [[0, 3], [1, 4], [2, 5]] in row-major order.
  const float expected[] = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data<float>()[i], expected[i]);
}

TEST(Copy, CloneIsIndependent) {
  Tensor t = full({3}, 1.0f);
  Tensor c = t.clone();
  EXPECT_FALSE(c.shares_storage_with(t));
  c.at<float>({0}) = 5.0f;
  EXPECT_EQ(t.at<float>({0}), 1.0f);
}

TEST(Copy, CloneOfStridedAndBroadcastViews) {
  Tensor base = arange(24, DType::I32).reshape({2, 3, 4});
  // Every other element of the last axis of a permuted view.
  Tensor v = base.permute({1, 0, 2}).slice(2, 1, 4, 2);  // (3, 2, 2)
  Tensor c = v.clone();
  EXPECT_EQ(c.shape(), (Shape{3, 2, 2}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t k = 0; k < 2; ++k)
        EXPECT_EQ(c.at<std::int32_t>({i, j, k}), 12 * j + 4 * i + 1 + 2 * k);
  Tensor b = arange(3, DType::F64).reshape({3, 1}).expand({3, 4}).clone();
  EXPECT_EQ(b.strides(), (Strides{4, 1}));
  EXPECT_EQ(b.at<double>({2, 3}), 2.0);
}

TEST(Copy, CopyBroadcastsAndCasts) {
  Tensor dst = zeros({2, 3}, DType::F64);
  dst.copy_(from_vector<std::int8_t>({1, -2, 3}, {3}));
  EXPECT_EQ(dst.at<double>({1, 1}), -2.0);
  EXPECT_EQ(dst.at<double>({0, 2}), 3.0);
  // Into a strided view: only the viewed elements change.
  Tensor grid = zeros({3, 3}, DType::I16);
  grid.select(1, 1).copy_(full({}, 7));
  EXPECT_EQ(grid.at<std::int16_t>({2, 1}), 7);
  EXPECT_EQ(grid.at<std::int16_t>({2, 0}), 0);
  EXPECT_TESSEL_ERROR(dst.copy_(zeros({2})), "E2101", "(2,)", "(2, 3)");
}

TEST(Copy, CopyBetweenOverlappingViewsReadsFirst) {
  Tensor t = arange(5, DType::F32);
  t.slice(0, 1, 5).copy_(t.slice(0, 0, 4));  // shift right by one
  const float expected[] = {0, 0, 1, 2, 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t.at<float>({i}), expected[i]);
}

TEST(Copy, FillThroughViews) {
  Tensor t = zeros({4, 4}, DType::U8);
  t.slice(0, 0, 4, 2).slice(1, 1, 4, 2).fill_(9);
  EXPECT_EQ(t.at<std::uint8_t>({0, 1}), 9);
  EXPECT_EQ(t.at<std::uint8_t>({2, 3}), 9);
  EXPECT_EQ(t.at<std::uint8_t>({1, 1}), 0);
  EXPECT_EQ(t.at<std::uint8_t>({0, 0}), 0);
}

TEST(Copy, ToConvertsEveryDTypeRoundTrip) {
  // Small non-negative integers are exact in every dtype but bool.
  Tensor src = from_vector<std::int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4});
  for (DType a : testing::kElementDTypes) {
    if (a == DType::Bool) continue;
    Tensor ta = src.to(a);
    EXPECT_EQ(ta.dtype(), a);
    for (DType b : testing::kElementDTypes) {
      if (b == DType::Bool) continue;
      Tensor back = ta.to(b).to(DType::I64);
      for (std::int64_t i = 0; i < 8; ++i) {
        EXPECT_EQ(back.at<std::int64_t>({i / 4, i % 4}), i)
            << dtype_name(a) << " -> " << dtype_name(b);
      }
    }
  }
}

TEST(Copy, ToOfANonContiguousView) {
  Tensor t = arange(6, DType::F32).reshape({2, 3}).transpose(0, 1);
  Tensor h = t.to(DType::F16);
  EXPECT_TRUE(h.is_contiguous());
  EXPECT_EQ(h.at<Half>({2, 1}).bits, Half(5.0f).bits);
  EXPECT_TRUE(t.to(DType::F32).shares_storage_with(t));  // same dtype
}

TEST(Copy, SaturatingCastToFloat8) {
  Tensor t = from_vector<float>({1000.0f, -1e9f, INFINITY, NAN}, {4});
  Tensor plain = t.to(DType::F8E4M3FN);
  Tensor sat = t.to(DType::F8E4M3FN, {.saturate = true});
  EXPECT_EQ(plain.at<Float8E4M3FN>({0}).bits, 0x7F);  // NaN: no Inf in e4m3fn
  EXPECT_EQ(sat.at<Float8E4M3FN>({0}).bits, 0x7E);    // 448
  EXPECT_EQ(sat.at<Float8E4M3FN>({1}).bits, 0xFE);    // -448
  EXPECT_EQ(sat.at<Float8E4M3FN>({2}).bits, 0x7E);
  EXPECT_EQ(sat.at<Float8E4M3FN>({3}).bits, 0x7F);  // NaN stays NaN
}

TEST(Copy, Int4PacksLowNibbleFirst) {
  Tensor t = from_vector<std::int8_t>({1, -2, 7, -8, 3}, {5}).to(DType::I4);
  EXPECT_EQ(t.nbytes(), 3);
  const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
  EXPECT_EQ(bytes[0], 0xE1);  // element 0 = 1 low, element 1 = -2 = 0xE high
  EXPECT_EQ(bytes[1], 0x87);  // 7 low, -8 = 0x8 high
  EXPECT_EQ(bytes[2] & 0x0F, 0x3);
  EXPECT_EQ(t.get({1}).to<int>(), -2);
  EXPECT_EQ(t.get({3}).to<int>(), -8);
  // Out-of-range values wrap modulo 16 (ONNX Cast to INT4 does the same).
  Tensor w = from_vector<float>({8.0f, -9.0f, 15.0f}, {3}).to(DType::I4);
  EXPECT_EQ(w.get({0}).to<int>(), -8);
  EXPECT_EQ(w.get({1}).to<int>(), 7);
  EXPECT_EQ(w.get({2}).to<int>(), -1);
  Tensor u = from_vector<std::uint8_t>({15, 16, 1}, {3}).to(DType::U4);
  EXPECT_EQ(u.get({0}).to<int>(), 15);
  EXPECT_EQ(u.get({1}).to<int>(), 0);
}

TEST(Copy, Int4ViewsAddressNibbles) {
  Tensor t = arange(0, 8, 1, DType::I8).to(DType::U4).reshape({2, 4});
  Tensor col = t.select(1, 1);  // elements 1 and 5: odd nibbles
  EXPECT_EQ(col.get({0}).to<int>(), 1);
  EXPECT_EQ(col.get({1}).to<int>(), 5);
  Tensor c = t.transpose(0, 1).clone();  // 0,4,1,5,2,6,3,7
  EXPECT_EQ(c.get({1, 0}).to<int>(), 1);
  EXPECT_EQ(c.get({0, 1}).to<int>(), 4);
  col.fill_(9);
  EXPECT_EQ(t.get({1, 1}).to<int>(), 9);
  EXPECT_EQ(t.get({1, 0}).to<int>(), 4);  // neighbour nibble untouched
  t.set({0, 3}, 12);
  EXPECT_EQ(t.to(DType::I32).at<std::int32_t>({0, 3}), 12);
}

TEST(Copy, QuantisedTensorsCopyWholeBlocks) {
  Tensor q = zeros({2, 32}, DType::Q8_0);
  auto* bytes = static_cast<std::uint8_t*>(q.mutable_raw_data());
  for (int i = 0; i < 68; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  Tensor c = q.clone();
  EXPECT_EQ(std::memcmp(c.raw_data(), q.raw_data(), 68), 0);
  Tensor row = q.select(0, 1).clone();
  EXPECT_EQ(static_cast<const std::uint8_t*>(row.raw_data())[0], 34);
  Tensor dst = zeros({2, 32}, DType::Q8_0);
  dst.copy_(q);
  EXPECT_EQ(static_cast<const std::uint8_t*>(dst.raw_data())[67], 67);
}

// Conversions go through f32 (issue 13; codecs in tests/quant and
// tests/oracle/test_quant_ggml.py). Block 0 above has d = f16 0x0100 =
// 256 * 2^-24 = 2^-16 and codes 2..33, so element j decodes to
// (j + 2) * 2^-16.
TEST(Copy, QuantisedTensorsConvertThroughF32) {
  Tensor q = zeros({2, 32}, DType::Q8_0);
  auto* bytes = static_cast<std::uint8_t*>(q.mutable_raw_data());
  for (int i = 0; i < 68; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  const Tensor f = q.to(DType::F32);
  EXPECT_EQ(f.dtype(), DType::F32);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(f.at<float>({0, j}), std::ldexp(static_cast<float>(j + 2), -16));
  }
  // Q4_0 of zeros: d = max / -8 = -0 (f16 0x8000) and every code
  // 0 * (1 / d = 0) + 8 = 8, two per byte: 0x88.
  const Tensor z = zeros({32}).to(DType::Q4_0);
  const auto* zb = static_cast<const std::uint8_t*>(z.raw_data());
  EXPECT_EQ(zb[0], 0x00);
  EXPECT_EQ(zb[1], 0x80);
  for (int i = 2; i < 18; ++i) EXPECT_EQ(zb[i], 0x88) << i;
  Tensor dst = q.clone();
  dst.copy_(zeros({2, 32}));
  EXPECT_TRUE(equal(dst.to(DType::F32), zeros({2, 32})));
}

}  // namespace
}  // namespace tessel

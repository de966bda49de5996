// Views are O(1) and share storage: checked by storage identity and by
// writing through the view and reading the base.
#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

// [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] as f32.
Tensor grid() { return arange(12, DType::F32).reshape({3, 4}); }

float at2(const Tensor& t, std::int64_t i, std::int64_t j) {
  return t.at<float>({i, j});
}

TEST(Views, ReshapeOfContiguousIsAView) {
  Tensor base = arange(0, 12, 1, DType::F32);
  Tensor v = base.reshape({3, 4});
  EXPECT_TRUE(v.shares_storage_with(base));
  EXPECT_EQ(v.shape(), (Shape{3, 4}));
  EXPECT_EQ(v.strides(), (Strides{4, 1}));
  v.at<float>({2, 1}) = 100.0f;
  EXPECT_EQ(base.at<float>({9}), 100.0f);
}

TEST(Views, ReshapeInfersOneExtent) {
  Tensor t = grid();
  EXPECT_EQ(t.reshape({2, -1}).shape(), (Shape{2, 6}));
  EXPECT_EQ(t.reshape({-1}).shape(), (Shape{12}));
  EXPECT_TESSEL_ERROR(t.reshape({-1, -1}), "E2102", "only one");
  EXPECT_TESSEL_ERROR(t.reshape({5, -1}), "E2102", "(3, 4)", "(5, -1)");
  EXPECT_TESSEL_ERROR(t.reshape({5, 2}), "E2102", "12 elements", "(5, 2)");
}

TEST(Views, ReshapeRefusesOverflowBehindAZeroExtent) {
  const std::int64_t big = std::int64_t{1} << 40;
  EXPECT_TESSEL_ERROR(empty({0}).reshape({0, big, big}), "E2303");
  EXPECT_TESSEL_ERROR(empty({1}).reshape(Shape(65, 1)), "E2102", "rank");
}

TEST(Views, TransposeThenViewNeedsACopy) {
  Tensor t = grid().transpose(0, 1);  // (4, 3), strides (1, 4)
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TESSEL_ERROR(t.view({12}), "E2301", "[view]", "(4, 3)", "(1, 4)",
                      "use reshape");
  Tensor flat = t.reshape({12});  // copies
  EXPECT_FALSE(flat.shares_storage_with(t));
  // Column-major order of the original grid: 0, 4, 8, 1, 5, 9, ...
  EXPECT_EQ(flat.at<float>({1}), 4.0f);
  EXPECT_EQ(flat.at<float>({3}), 1.0f);
}

TEST(Views, ViewSplitsAndMergesCompatibleAxes) {
  // A (3, 4) slice of columns 0..1 keeps rows apart: (3, 2) strides (4, 1).
  Tensor cols = grid().slice(1, 0, 2);
  Tensor v = cols.view({3, 2, 1});
  EXPECT_TRUE(v.shares_storage_with(cols));
  EXPECT_EQ(v.strides(), (Strides{4, 1, 1}));
  EXPECT_TESSEL_ERROR(cols.view({6}), "E2301");
  // Splitting a strided axis is fine: (4, 3) transposed -> (2, 2, 3).
  Tensor t = grid().transpose(0, 1);
  Tensor split = t.view({2, 2, 3});
  EXPECT_EQ(split.strides(), (Strides{2, 1, 4}));
  EXPECT_EQ(split.at<float>({1, 0, 2}), at2(t, 2, 2));
}

TEST(Views, PermuteAndTranspose) {
  Tensor base = arange(0, 24, 1, DType::F32).reshape({2, 3, 4});
  Tensor p = base.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (Strides{1, 12, 4}));
  EXPECT_TRUE(p.shares_storage_with(base));
  EXPECT_EQ(p.at<float>({3, 1, 2}), base.at<float>({1, 2, 3}));
  p.at<float>({0, 0, 0}) = -1.0f;
  EXPECT_EQ(base.at<float>({0, 0, 0}), -1.0f);
  EXPECT_TESSEL_ERROR(base.permute({0, 0, 1}), "E2102", "repeated");
  EXPECT_TESSEL_ERROR(base.permute({0, 1}), "E2102", "rank 3");
  EXPECT_TESSEL_ERROR(base.permute({0, 1, 3}), "E2102", "axis 3");
  Tensor t = base.transpose(-1, 0);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.at<float>({3, 2, 1}), 23.0f);
}

TEST(Views, SliceWithStepAndNegativeIndices) {
  Tensor base = arange(10, DType::F32);
  Tensor s = base.slice(0, 1, 8, 3);  // 1, 4, 7
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_EQ(s.strides(), (Strides{3}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(s.at<float>({2}), 7.0f);
  Tensor tail = base.slice(0, -3, 10);  // 7, 8, 9
  EXPECT_EQ(tail.shape(), (Shape{3}));
  EXPECT_EQ(tail.at<float>({0}), 7.0f);
  Tensor neg = base.slice(0, -4, -1, 2);  // 6, 8
  EXPECT_EQ(neg.shape(), (Shape{2}));
  EXPECT_EQ(neg.at<float>({1}), 8.0f);
  // Bounds clamp like Python slices; an empty slice is legal.
  EXPECT_EQ(base.slice(0, 5, 100).shape(), (Shape{5}));
  EXPECT_EQ(base.slice(0, 8, 2).shape(), (Shape{0}));
  EXPECT_EQ(base.slice(0, -100, 2).shape(), (Shape{2}));
  s.at<float>({1}) = 40.0f;
  EXPECT_EQ(base.at<float>({4}), 40.0f);
  EXPECT_TESSEL_ERROR(base.slice(0, 0, 5, 0), "E2102", "step");
  EXPECT_TESSEL_ERROR(base.slice(0, 0, 5, -1), "E2102", "flip");
  EXPECT_TESSEL_ERROR(base.slice(1, 0, 1), "E2102", "axis 1");
}

TEST(Views, SelectRemovesAnAxis) {
  Tensor g = grid();
  Tensor row = g.select(0, -1);  // 8, 9, 10, 11
  EXPECT_EQ(row.shape(), (Shape{4}));
  EXPECT_EQ(row.at<float>({0}), 8.0f);
  Tensor col = g.select(1, 2);  // 2, 6, 10
  EXPECT_EQ(col.strides(), (Strides{4}));
  col.at<float>({1}) = 60.0f;
  EXPECT_EQ(at2(g, 1, 2), 60.0f);
  EXPECT_TESSEL_ERROR(g.select(0, 3), "E2302", "[select]", "index 3",
                      "extent 3");
  EXPECT_TESSEL_ERROR(g.select(1, -5), "E2302");
  EXPECT_EQ(g.select(0, 1).select(0, 1).rank(), 0);
}

TEST(Views, ExpandUsesStrideZero) {
  Tensor col = arange(3, DType::F32).reshape({3, 1});
  Tensor e = col.expand({2, 3, 4});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(e.strides(), (Strides{0, 1, 0}));
  EXPECT_TRUE(e.shares_storage_with(col));
  EXPECT_EQ(e.at<float>({1, 2, 3}), 2.0f);
  EXPECT_EQ(col.expand({-1, 5}).shape(), (Shape{3, 5}));
  EXPECT_TESSEL_ERROR(col.expand({4, 4}), "E2101", "(3, 1)", "(4, 4)");
  EXPECT_TESSEL_ERROR(col.expand({3}), "E2102", "lower rank");
  // A scalar expands to anything.
  EXPECT_EQ(full({}, 7.0f).expand({2, 2}).at<float>({1, 1}), 7.0f);
}

TEST(Views, TransposeWithoutAxesReversesThemAll) {
  Tensor t = arange(24, DType::F32).reshape({2, 3, 4});
  const Tensor r = t.transpose();
  EXPECT_EQ(r.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(r.strides(), (Strides{1, 4, 12}));
  EXPECT_TRUE(r.shares_storage_with(t));
  EXPECT_EQ(r.at<float>({3, 1, 1}), t.at<float>({1, 1, 3}));
  // Rank 2 is the matrix transpose; ranks 0 and 1 are unchanged.
  EXPECT_EQ(grid().transpose().strides(), grid().transpose(0, 1).strides());
  EXPECT_EQ(full({}, 1.0f).transpose().rank(), 0);
  EXPECT_EQ(arange(5, DType::F32).transpose().shape(), (Shape{5}));
}

TEST(Views, SqueezeAndUnsqueeze) {
  Tensor t = zeros({1, 3, 1, 2});
  EXPECT_EQ(t.squeeze().shape(), (Shape{3, 2}));
  EXPECT_EQ(t.squeeze(2).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(t.squeeze(-4).shape(), (Shape{3, 1, 2}));
  EXPECT_TESSEL_ERROR(t.squeeze(1), "E2102", "extent 3");
  // A list of axes (the seed's squeeze): exactly those, any order, negative
  // ones counted back; a listed axis of extent 3, or one listed twice, is
  // E2102; an empty list removes nothing.
  EXPECT_EQ(t.squeeze({2, 0}).shape(), (Shape{3, 2}));
  EXPECT_EQ(t.squeeze({-2}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(t.squeeze({}).shape(), t.shape());
  EXPECT_TRUE(t.squeeze({0, 2}).shares_storage_with(t));
  EXPECT_TESSEL_ERROR(t.squeeze({0, 1}), "E2102", "extent 3");
  EXPECT_TESSEL_ERROR(t.squeeze({0, -4}), "E2102", "twice");
  EXPECT_TESSEL_ERROR(t.squeeze({4}), "E2102");
  Tensor g = grid();
  EXPECT_EQ(g.unsqueeze(0).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(g.unsqueeze(-1).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(g.unsqueeze(1).strides(), (Strides{4, 4, 1}));
  EXPECT_TRUE(g.unsqueeze(2).shares_storage_with(g));
  EXPECT_TESSEL_ERROR(g.unsqueeze(3), "E2102");
  EXPECT_EQ(full({}, 1).unsqueeze(0).shape(), (Shape{1}));
}

TEST(Views, Flatten) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_EQ(t.flatten().shape(), (Shape{24}));
  EXPECT_EQ(t.flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(t.flatten(0, 1).shape(), (Shape{6, 4}));
  EXPECT_TRUE(t.flatten().shares_storage_with(t));
  EXPECT_EQ(full({}, 5).flatten().shape(), (Shape{1}));
  EXPECT_TESSEL_ERROR(t.flatten(2, 1), "E2102", "start_dim");
  Tensor tr = grid().transpose(0, 1).flatten();
  EXPECT_EQ(tr.at<float>({1}), 4.0f);
}

TEST(Views, ZeroSizeTensorsWork) {
  Tensor e = zeros({0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.nbytes(), 0);
  EXPECT_TRUE(e.is_contiguous());
  EXPECT_EQ(e.transpose(0, 1).shape(), (Shape{3, 0}));
  EXPECT_EQ(e.reshape({3, 0, 5}).shape(), (Shape{3, 0, 5}));
  EXPECT_EQ(e.slice(1, 1, 2).shape(), (Shape{0, 1}));
  EXPECT_EQ(e.expand({2, 0, 3}).numel(), 0);
  EXPECT_EQ(e.clone().shape(), (Shape{0, 3}));
  EXPECT_EQ(e.to(DType::I8).dtype(), DType::I8);
  EXPECT_TESSEL_ERROR(e.reshape({-1, 0}), "E2102");
  EXPECT_TESSEL_ERROR(e.select(0, 0), "E2302");
}

TEST(Views, RankZeroScalarsWork) {
  Tensor s = full({}, 2.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<float>(), 2.5f);
  EXPECT_EQ(s.at<float>({}), 2.5f);
  EXPECT_EQ(s.reshape({1, 1}).shape(), (Shape{1, 1}));
  EXPECT_EQ(s.reshape({1, 1}).reshape({}).rank(), 0);
  EXPECT_EQ(s.permute(std::span<const std::int64_t>{}).item<double>(), 2.5);
  EXPECT_EQ(s.squeeze().rank(), 0);
  EXPECT_EQ(s.contiguous().item<float>(), 2.5f);
  EXPECT_TESSEL_ERROR(s.transpose(0, 1), "E2102");
}

TEST(Views, QuantisedViewsKeepWholeBlocks) {
  Tensor q = zeros({4, 64}, DType::Q4_0);  // 2 blocks per row
  EXPECT_EQ(q.nbytes(), 4 * 2 * 18);
  Tensor rows = q.slice(0, 1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 64}));
  EXPECT_EQ(static_cast<const char*>(rows.raw_data()) -
                static_cast<const char*>(q.raw_data()),
            36);
  Tensor blocks = q.slice(1, 32, 64);  // the second block of each row
  EXPECT_EQ(blocks.shape(), (Shape{4, 32}));
  EXPECT_EQ(q.reshape({2, 128}).shape(), (Shape{2, 128}));
  EXPECT_TESSEL_ERROR(q.transpose(0, 1), "E2301", "q4_0", "whole");
  EXPECT_TESSEL_ERROR(q.slice(1, 0, 16), "E2301");
  EXPECT_TESSEL_ERROR(q.slice(1, 16, 48), "E2301");
  EXPECT_TESSEL_ERROR(zeros({33}, DType::Q8_0), "E2102", "33");
}

// A move hands the handle over: the same storage, nothing copied, and the
// moved-from tensor is undefined (E2102 on use) rather than a silent alias.
TEST(Views, MoveHandsTheTensorOverWithoutACopy) {
  Tensor a = arange(0, 6, 1, DType::F32).reshape({2, 3});
  const void* data = a.raw_data();
  const Storage storage = a.storage();
  Tensor b = std::move(a);
  EXPECT_EQ(b.raw_data(), data);
  EXPECT_TRUE(b.storage().is_same(storage));
  EXPECT_FALSE(a.defined());  // NOLINT(bugprone-use-after-move): the point
  EXPECT_TESSEL_ERROR(a.shape(), "E2102");  // NOLINT(bugprone-use-after-move)
  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.raw_data(), data);
}

TEST(Views, NamesStayWithTheHandle) {
  Tensor t = zeros({2});
  t.set_name("model.norm.weight");
  Tensor same = t;
  EXPECT_EQ(same.name(), "model.norm.weight");
  EXPECT_EQ(t.reshape({1, 2}).name(), "");
  EXPECT_EQ(t.clone().name(), "model.norm.weight");
}

TEST(Views, UndefinedTensorIsAClearError) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_TESSEL_ERROR((void)t.shape(), "E2102", "undefined");
  EXPECT_TESSEL_ERROR(t.reshape({1}), "E2102", "undefined");
}

TEST(Views, ConstructorValidatesTheStorageRange) {
  Storage s = Storage::allocate(16);
  EXPECT_TESSEL_ERROR(Tensor(s, {5}, {}, 0, DType::F32), "E2302", "16 bytes");
  EXPECT_TESSEL_ERROR(Tensor(s, {2, 2}, {3, 1}, 0, DType::F32), "E2302");
  EXPECT_TESSEL_ERROR(Tensor(s, {2}, {-1}, 1, DType::F32), "E2102",
                      "negative stride");
  EXPECT_TESSEL_ERROR(Tensor(s, {2}, {1, 1}, 0, DType::F32), "E2102");
  EXPECT_EQ(Tensor(s, {2, 2}, {2, 1}, 0, DType::F32).numel(), 4);
  EXPECT_EQ(Tensor(s, {31}, {}, 0, DType::I4).nbytes(), 16);
  EXPECT_TESSEL_ERROR(Tensor(s, {33}, {}, 0, DType::I4), "E2302");
}

}  // namespace
}  // namespace tessel

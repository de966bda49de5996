// Hand-worked indexing, joining and layout cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// [[0, 1, 2], [3, 4, 5]]
Tensor grid() { return arange(6, DType::F32).reshape({2, 3}); }
Tensor ids(std::vector<std::int64_t> v, Shape shape) {
  return from_vector(v, std::move(shape));
}

TEST(Indexing, ConcatStackSplitChunk) {
  const Tensor c = concat({grid(), grid() + 10.0}, 0);
  EXPECT_EQ(c.shape(), (Shape{4, 3}));
  EXPECT_EQ(c.at<float>({3, 2}), 15.0f);
  const Tensor c1 = concat({grid(), ones({2, 1}, DType::I32)}, -1);
  EXPECT_EQ(c1.shape(), (Shape{2, 4}));
  EXPECT_EQ(c1.dtype(), DType::F32);
  EXPECT_EQ(values<float>(c1), (std::vector<float>{0, 1, 2, 1, 3, 4, 5, 1}));
  const Tensor s = stack({grid(), grid()}, 1);
  EXPECT_EQ(s.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(s.at<float>({1, 1, 2}), 5.0f);
  EXPECT_EQ(stack({grid(), grid()}, -1).shape(), (Shape{2, 3, 2}));
  const Tensor g = grid();
  const auto parts = split(g, {1, 2}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].shape(), (Shape{2, 2}));
  EXPECT_TRUE(parts[1].shares_storage_with(g));  // views, no copies
  EXPECT_EQ(parts[1].at<float>({1, 0}), 4.0f);
  const auto chunks = chunk(arange(5), 2);  // sizes 3 and 2
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].numel(), 3);
  EXPECT_EQ(chunks[1].numel(), 2);
  EXPECT_TESSEL_ERROR(concat({grid(), ones({3, 3})}, 1), "E2102", "[concat]",
                      "(2, 3)", "(3, 3)");
  EXPECT_TESSEL_ERROR(stack({grid(), ones({3, 2})}), "E2102", "[stack]");
  EXPECT_TESSEL_ERROR(split(grid(), {1, 1}, 1), "E2102", "[split]", "extent 3");
}

TEST(Indexing, GatherHasTakeSemantics) {
  // x (2, 3); index (2, 2) along axis 1 -> (2, 2, 2).
  const Tensor g = gather(grid(), ids({2, 0, -1, 1}, {2, 2}), 1);
  EXPECT_EQ(g.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(g), (std::vector<float>{2, 0, 2, 1, 5, 3, 5, 4}));
  EXPECT_EQ(values<float>(index_select(grid(), 0, ids({1, 1, 0}, {3}))),
            (std::vector<float>{3, 4, 5, 3, 4, 5, 0, 1, 2}));
  // A rank-0 index removes the axis, like select.
  EXPECT_EQ(gather(grid(), full({}, 1), 0).shape(), (Shape{3}));
  EXPECT_TESSEL_ERROR(gather(grid(), ids({3}, {1}), 1), "E2302", "[gather]",
                      "index 3", "extent 3");
  EXPECT_TESSEL_ERROR(gather(grid(), ids({-4}, {1}), 1), "E2302", "-4");
  EXPECT_TESSEL_ERROR(gather(grid(), ones({1}), 1), "E2201", "integers");
}

TEST(Indexing, GatherElementsAndScatter) {
  // out[i][j] = x[i][index[i][j]]
  const Tensor ge = gather_elements(grid(), ids({0, 0, 2, 1}, {2, 2}), 1);
  EXPECT_EQ(values<float>(ge), (std::vector<float>{0, 0, 5, 4}));
  const Tensor ta = take_along_axis(grid(), ids({1, 0, 1}, {1, 3}), 0);
  EXPECT_EQ(values<float>(ta), (std::vector<float>{3, 1, 5}));
  // scatter along axis 1: row 0 gets 10 at column 2, row 1 20 at column 0.
  const Tensor upd = from_vector<float>({10, 20}, {2, 1});
  const Tensor sc = scatter(grid(), 1, ids({2, 0}, {2, 1}), upd);
  EXPECT_EQ(values<float>(sc), (std::vector<float>{0, 1, 10, 20, 4, 5}));
  EXPECT_EQ(values<float>(grid()),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));  // untouched
  // Duplicates accumulate with add.
  const Tensor sa = scatter_add(zeros({3}), 0, ids({1, 1, 2}, {3}), ones({3}));
  EXPECT_EQ(values<float>(sa), (std::vector<float>{0, 2, 1}));
  const Tensor sm =
      scatter(full({3}, 5.0f), 0, ids({0, 0}, {2}),
              from_vector<float>({7, 3}, {2}), ScatterReduce::Max);
  EXPECT_EQ(values<float>(sm), (std::vector<float>{7, 5, 5}));
  EXPECT_TESSEL_ERROR(scatter(grid(), 1, ids({3, 0}, {2, 1}), upd), "E2302",
                      "[scatter]");
  EXPECT_TESSEL_ERROR(gather_elements(grid(), ids({0, 0, 0}, {3, 1}), 1),
                      "E2102", "[gather_elements]");
}

TEST(Indexing, GatherNd) {
  // data (2, 2), indices [[0, 0], [1, 1]] -> [x00, x11]
  const Tensor x = from_vector<std::int32_t>({0, 1, 2, 3}, {2, 2});
  EXPECT_EQ(values<std::int32_t>(gather_nd(x, ids({0, 0, 1, 1}, {2, 2}))),
            (std::vector<std::int32_t>{0, 3}));
  // Slices: indices [[1], [0]] -> rows 1 and 0.
  EXPECT_EQ(values<std::int32_t>(gather_nd(x, ids({1, 0}, {2, 1}))),
            (std::vector<std::int32_t>{2, 3, 0, 1}));
  // batch_dims = 1: data (2, 2, 2), indices (2, 1) -> data[b, idx[b]].
  const Tensor y = arange(8, DType::I32).reshape({2, 2, 2});
  EXPECT_EQ(values<std::int32_t>(gather_nd(y, ids({1, 0}, {2, 1}), 1)),
            (std::vector<std::int32_t>{2, 3, 4, 5}));
}

TEST(Indexing, MaskedFillAndOneHot) {
  const Tensor m = from_vector(std::vector<bool>{true, false, false});
  EXPECT_EQ(values<float>(masked_fill(grid(), m, -1.0)),
            (std::vector<float>{-1, 1, 2, -1, 4, 5}));
  EXPECT_EQ(masked_fill(grid(), m, -1).dtype(), DType::F32);
  const Tensor oh = one_hot(ids({0, 2, -1}, {3}), 3);
  EXPECT_EQ(oh.shape(), (Shape{3, 3}));
  EXPECT_EQ(values<std::int64_t>(oh),
            (std::vector<std::int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 1}));
  const Tensor oh0 = one_hot(ids({1, 0}, {2}), 2, 0, 5.0, 0.0, DType::F32);
  EXPECT_EQ(values<float>(oh0), (std::vector<float>{0, 5, 5, 0}));
  EXPECT_TESSEL_ERROR(one_hot(ids({3}, {1}), 3), "E2302", "[one_hot]");
}

TEST(Layout, TrilTriu) {
  const Tensor x = ones({3, 3});
  EXPECT_EQ(values<float>(tril(x)),
            (std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(values<float>(triu(x, 1)),
            (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(values<float>(tril(x, -1)),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(tril(ones({2, 3, 4}, DType::I8)).dtype(), DType::I8);
  EXPECT_TESSEL_ERROR(tril(ones({3})), "E2102", "[tril]");
}

TEST(Layout, PadModes) {
  const Tensor v = from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(values<float>(pad(v, {{2, 1}})),
            (std::vector<float>{0, 0, 1, 2, 3, 0}));
  EXPECT_EQ(values<float>(pad(v, {{2, 1}}, PadMode::Constant, 9)),
            (std::vector<float>{9, 9, 1, 2, 3, 9}));
  // NumPy reflect: ... 3 2 [1 2 3] 2 1 ...
  EXPECT_EQ(values<float>(pad(v, {{2, 2}}, PadMode::Reflect)),
            (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(values<float>(pad(v, {{2, 1}}, PadMode::Edge)),
            (std::vector<float>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values<float>(pad(v, {{1, 2}}, PadMode::Wrap)),
            (std::vector<float>{3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(values<float>(pad(v, {{-1, 1}})),
            (std::vector<float>{2, 3, 0}));  // crop
  EXPECT_EQ(pad(grid(), {{1, 0}, {0, 2}}).shape(), (Shape{3, 5}));
  EXPECT_EQ(pad(grid(), {{1, 0}, {0, 2}}).at<float>({2, 2}), 5.0f);
}

TEST(Layout, TileRepeatFlipRoll) {
  const Tensor v = from_vector<float>({1, 2}, {2});
  EXPECT_EQ(values<float>(tile(v, {3})),
            (std::vector<float>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(tile(v, {2, 2}).shape(), (Shape{2, 4}));
  EXPECT_EQ(values<float>(repeat(v, 2)), (std::vector<float>{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(repeat(grid(), 2, 0)),
            (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(values<float>(repeat(v, ids({0, 3}, {2}), 0)),
            (std::vector<float>{2, 2, 2}));
  EXPECT_EQ(values<float>(flip(grid())),
            (std::vector<float>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(values<float>(flip(grid(), {1})),
            (std::vector<float>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(values<float>(roll(arange(5, DType::F32), {2})),
            (std::vector<float>{3, 4, 0, 1, 2}));
  EXPECT_EQ(values<float>(roll(grid(), {-1}, {1})),
            (std::vector<float>{1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(values<float>(roll(grid(), {1})),
            (std::vector<float>{5, 0, 1, 2, 3, 4}));
}

TEST(Layout, NchwNhwc) {
  const Tensor x = arange(24, DType::F32).reshape({1, 2, 3, 4});  // N C H W
  const Tensor y = nchw_to_nhwc(x);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 4, 2}));
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_EQ(y.at<float>({0, 2, 3, 1}), x.at<float>({0, 1, 2, 3}));
  EXPECT_EQ(values<float>(nhwc_to_nchw(y)), values<float>(x));
}

TEST(Ordering, SortArgsortTopk) {
  const Tensor x = from_vector<float>({3, 1, NAN, 1, 2}, {5});
  const auto s = values<float>(sort(x));
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[3], 3.0f);
  EXPECT_TRUE(std::isnan(s[4]));  // NaN last
  // Stable: the two 1s keep their order (indices 1 then 3).
  EXPECT_EQ(values<std::int64_t>(argsort(x)),
            (std::vector<std::int64_t>{1, 3, 4, 0, 2}));
  EXPECT_EQ(values<std::int64_t>(argsort(x, -1, true)),
            (std::vector<std::int64_t>{2, 0, 4, 1, 3}));
  const auto t = topk(from_vector<float>({1, 5, 3, 5, 2}, {5}), 3);
  EXPECT_EQ(values<float>(t.values), (std::vector<float>{5, 5, 3}));
  EXPECT_EQ(values<std::int64_t>(t.indices),
            (std::vector<std::int64_t>{1, 3, 2}));
  const auto low = topk(grid(), 2, 1, false);
  EXPECT_EQ(values<float>(low.values), (std::vector<float>{0, 1, 3, 4}));
  EXPECT_EQ(values<float>(sort(grid(), 0, true)),
            (std::vector<float>{3, 4, 5, 0, 1, 2}));
  EXPECT_TESSEL_ERROR(topk(grid(), 4, 1), "E2302", "[topk]", "k = 4");
}

TEST(Indexing, NonzeroListsCoordinatesInRowMajorOrder) {
  // [[0, 1, 0], [2, 0, nan]]: (0, 1), (1, 0), (1, 2); NaN is non-zero.
  const Tensor x = from_vector<float>({0, 1, 0, 2, -0.0f, NAN}, {2, 3});
  EXPECT_EQ(nonzero(x).shape(), (Shape{3, 2}));
  EXPECT_EQ(values<std::int64_t>(nonzero(x)),
            (std::vector<std::int64_t>{0, 1, 1, 0, 1, 2}));
  // Through a transposed view, and bool and integer inputs.
  EXPECT_EQ(values<std::int64_t>(nonzero(x.transpose(0, 1))),
            (std::vector<std::int64_t>{0, 1, 1, 0, 2, 1}));
  EXPECT_EQ(
      values<std::int64_t>(nonzero(from_vector<bool>({false, true}, {2}))),
      (std::vector<std::int64_t>{1}));
  EXPECT_EQ(nonzero(zeros({4, 0}, DType::I32)).shape(), (Shape{0, 2}));
  EXPECT_EQ(nonzero(zeros({3})).shape(), (Shape{0, 1}));
  // A rank-0 input has one element and no coordinates.
  EXPECT_EQ(nonzero(full({}, 5)).shape(), (Shape{1, 0}));
  EXPECT_TESSEL_ERROR(nonzero(ones({2}, DType::F32, Device::meta())), "E2501",
                      "[nonzero]", "meta");
}

TEST(Indexing, SearchsortedFindsInsertionPoints) {
  const Tensor sorted = from_vector<double>({1, 2, 2, 3, NAN}, {5});
  const Tensor v = from_vector<double>({0, 2, 2.5, 3, 9, NAN}, {2, 3});
  EXPECT_EQ(values<std::int64_t>(searchsorted(sorted, v)),
            (std::vector<std::int64_t>{0, 1, 3, 3, 4, 4}));
  EXPECT_EQ(values<std::int64_t>(searchsorted(sorted, v, SearchSide::Right)),
            (std::vector<std::int64_t>{0, 3, 3, 4, 4, 5}));
  EXPECT_EQ(searchsorted(sorted, v).shape(), (Shape{2, 3}));
  // Mixed dtypes promote: int sorted, float values.
  EXPECT_EQ(values<std::int64_t>(searchsorted(
                from_vector<std::int32_t>({10, 20}, {2}),
                from_vector<float>({15.5f, 20.0f}, {2}), SearchSide::Left)),
            (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(values<std::int64_t>(searchsorted(zeros({0}), ones({2}))),
            (std::vector<std::int64_t>{0, 0}));
  EXPECT_TESSEL_ERROR(searchsorted(ones({2, 2}), ones({2})), "E2102",
                      "[searchsorted]", "1-D", "(2, 2)");
}

}  // namespace
}  // namespace tessel

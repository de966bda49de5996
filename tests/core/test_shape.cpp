#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "tessel/core/shape.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Shape, Numel) {
  EXPECT_EQ(checked_numel(Shape{}), 1);  // rank 0 is one element
  EXPECT_EQ(checked_numel(Shape{2, 3, 4}), 24);
  EXPECT_EQ(checked_numel(Shape{5, 0, 7}), 0);
}

TEST(Shape, NumelOverflowIsE2303) {
  const std::int64_t big = std::int64_t{1} << 32;
  EXPECT_TESSEL_ERROR(checked_numel(Shape{big, big}), "E2303", "[shape]",
                      "(4294967296, 4294967296)");
  // A zero extent does not excuse an overflowing product of the others.
  EXPECT_TESSEL_ERROR(checked_numel(Shape{0, big, big}), "E2303");
}

TEST(Shape, NegativeExtentOrHugeRankIsE2102) {
  EXPECT_TESSEL_ERROR(checked_numel(Shape{2, -1}), "E2102", "negative extent");
  EXPECT_TESSEL_ERROR(checked_numel(Shape(65, 1)), "E2102", "rank 65");
}

TEST(Shape, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(6, 7, "t"), 42);
  EXPECT_TESSEL_ERROR(
      checked_mul(std::numeric_limits<std::int64_t>::max(), 2, "t"), "E2303",
      "[t]");
  EXPECT_TESSEL_ERROR(
      checked_add(std::numeric_limits<std::int64_t>::max(), 1, "t"), "E2303");
}

TEST(Shape, RowMajorStrides) {
  EXPECT_EQ(contiguous_strides(Shape{2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Shape{}), Strides{});
  EXPECT_EQ(contiguous_strides(Shape{3, 0, 2}), (Strides{2, 2, 1}));
}

TEST(Shape, Contiguity) {
  EXPECT_TRUE(is_contiguous(Shape{2, 3}, Strides{3, 1}));
  EXPECT_FALSE(is_contiguous(Shape{2, 3}, Strides{1, 2}));
  // Extent-1 axes never move the address, so their stride is irrelevant.
  EXPECT_TRUE(is_contiguous(Shape{2, 1, 3}, Strides{3, 99, 1}));
  EXPECT_TRUE(is_contiguous(Shape{0, 3}, Strides{7, 7}));
  EXPECT_FALSE(is_contiguous(Shape{4}, Strides{0}));
}

TEST(Shape, BroadcastShapes) {
  EXPECT_EQ(broadcast_shapes(Shape{4, 1, 3}, Shape{5, 1}), (Shape{4, 5, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{}, Shape{2, 2}), (Shape{2, 2}));
  EXPECT_EQ(broadcast_shapes(Shape{0, 1}, Shape{1, 5}), (Shape{0, 5}));
  const Shape three[] = {Shape{8, 1, 6, 1}, Shape{7, 1, 5}, Shape{1}};
  EXPECT_EQ(broadcast_shapes(three), (Shape{8, 7, 6, 5}));
}

TEST(Shape, BroadcastMismatchNamesBothShapes) {
  EXPECT_TESSEL_ERROR(broadcast_shapes(Shape{2, 3}, Shape{4}), "E2101",
                      "[broadcast_shapes]", "(2, 3)", "(4,)");
  const Shape three[] = {Shape{2, 1}, Shape{1, 3}, Shape{2, 4}};
  EXPECT_TESSEL_ERROR(broadcast_shapes(three), "E2101", "(1, 3)", "(2, 4)");
}

TEST(Shape, NormalizeAxis) {
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(0, 3, "op"), 0);
  EXPECT_TESSEL_ERROR(normalize_axis(3, 3, "sum"), "E2102", "[sum]", "axis 3",
                      "rank 3");
  EXPECT_TESSEL_ERROR(normalize_axis(-4, 3, "sum"), "E2102");
}

TEST(Shape, PrintsLikeAPythonTuple) {
  EXPECT_EQ(shape_string(Shape{}), "()");
  EXPECT_EQ(shape_string(Shape{3}), "(3,)");
  EXPECT_EQ(shape_string(Shape{2, 3}), "(2, 3)");
  std::ostringstream os;
  os << Shape{1, 2, 3};
  EXPECT_EQ(os.str(), "(1, 2, 3)");
}

TEST(SmallVector, GrowsPastInlineCapacity) {
  Shape s;
  for (int i = 0; i < 20; ++i) s.push_back(i);
  ASSERT_EQ(s.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s[i], i);
  Shape moved = std::move(s);
  EXPECT_EQ(moved.size(), 20u);
  EXPECT_EQ(moved[19], 19);
  Shape copy = moved;
  copy.insert(0, -1);
  copy.erase(5);
  EXPECT_EQ(copy[0], -1);
  EXPECT_EQ(copy[5], 5);
  EXPECT_EQ(copy.size(), 20u);
}

}  // namespace
}  // namespace tessel

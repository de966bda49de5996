// Hand-worked reductions, scans and softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
Tensor grid() { return arange(12, DType::F32).reshape({3, 4}); }

TEST(Reduce, SumOverAxes) {
  EXPECT_EQ(sum(grid()).item<float>(), 66.0f);
  EXPECT_EQ(sum(grid()).rank(), 0);
  EXPECT_EQ(values<float>(sum(grid(), {0})),
            (std::vector<float>{12, 15, 18, 21}));
  EXPECT_EQ(values<float>(sum(grid(), {1})), (std::vector<float>{6, 22, 38}));
  EXPECT_EQ(values<float>(sum(grid(), {-1})), (std::vector<float>{6, 22, 38}));
  EXPECT_EQ(sum(grid(), {1}, true).shape(), (Shape{3, 1}));
  EXPECT_EQ(sum(grid(), {0, 1}, true).shape(), (Shape{1, 1}));
  // Scattered axes of a 3-D tensor: (2, 3, 4) summed over 0 and 2.
  const Tensor t = arange(24, DType::F64).reshape({2, 3, 4});
  // For j: sum over i, k of 12i + 4j + k = 2*(6 + 16j) + 12*4 = 60 + 32j.
  EXPECT_EQ(values<double>(sum(t, {0, 2})), (std::vector<double>{60, 92, 124}));
  // A non-contiguous input.
  EXPECT_EQ(values<float>(sum(grid().transpose(0, 1), {1})),
            (std::vector<float>{12, 15, 18, 21}));
}

TEST(Reduce, ResultDTypes) {
  EXPECT_EQ(sum(ones({3}, DType::I8)).dtype(), DType::I64);
  EXPECT_EQ(sum(ones({3}, DType::U16)).dtype(), DType::U64);
  EXPECT_EQ(sum(ones({3}, DType::Bool)).item<int>(), 3);
  EXPECT_EQ(sum(ones({3}, DType::BF16)).dtype(), DType::BF16);
  EXPECT_EQ(mean(arange(4)).dtype(), DType::F32);
  EXPECT_EQ(mean(arange(4)).item<float>(), 1.5f);
  EXPECT_EQ(max(arange(4, DType::I16)).dtype(), DType::I16);
  EXPECT_EQ(argmax(grid()).dtype(), DType::I64);
  EXPECT_EQ(any(grid()).dtype(), DType::Bool);
  EXPECT_EQ(norm(arange(3)).dtype(), DType::F32);
}

TEST(Reduce, ProdMaxMinAnyAll) {
  EXPECT_EQ(values<float>(prod(grid() + 1.0, {1})),
            (std::vector<float>{24, 1680, 11880}));
  EXPECT_EQ(values<float>(max(grid(), {0})),
            (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(values<float>(min(grid(), {1})), (std::vector<float>{0, 4, 8}));
  const Tensor b = from_vector(std::vector<bool>{true, false, false, false});
  EXPECT_TRUE(any(b).item<bool>());
  EXPECT_FALSE(all(b).item<bool>());
  EXPECT_TRUE(all(grid() >= 0).item<bool>());
  EXPECT_EQ(values<bool>(any(grid() > 9, {1})),
            (std::vector<bool>{false, false, true}));
  EXPECT_EQ(prod(full({3}, 3, DType::I32)).item<std::int64_t>(), 27);
}

TEST(Reduce, NaNPropagatesThroughMaxAndIsTheArgmax) {
  const Tensor x = from_vector<float>({1, NAN, 3, NAN}, {4});
  EXPECT_TRUE(std::isnan(max(x).item<float>()));
  EXPECT_TRUE(std::isnan(min(x).item<float>()));
  EXPECT_EQ(argmax(x).item<std::int64_t>(), 1);  // the first NaN (NumPy)
  EXPECT_EQ(argmin(x).item<std::int64_t>(), 1);
}

TEST(Reduce, ArgmaxFirstOccurrence) {
  const Tensor x = from_vector<float>({3, 7, 7, 1, 7, 0}, {2, 3});
  EXPECT_EQ(values<std::int64_t>(argmax(x, 1)),
            (std::vector<std::int64_t>{1, 1}));
  // Column 1 holds 7 twice: the first (row 0) wins.
  EXPECT_EQ(values<std::int64_t>(argmax(x, 0)),
            (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(values<std::int64_t>(argmin(x, 1)),
            (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(argmax(x).item<std::int64_t>(), 1);  // flattened
  EXPECT_EQ(argmax(x, std::nullopt, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(argmax(x, 1, true).shape(), (Shape{2, 1}));
  // Long rows are split into chunks: the first maximum still wins.
  Tensor big = zeros({200000});
  big.set({70000}, 5.0f);
  big.set({150000}, 5.0f);
  EXPECT_EQ(argmax(big).item<std::int64_t>(), 70000);
  EXPECT_EQ(argmin(-big).item<std::int64_t>(), 70000);
}

TEST(Reduce, VarStdAndNorms) {
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {4});
  // Mean 2.5; squared deviations sum to 5.
  EXPECT_FLOAT_EQ(var(x).item<float>(), 5.0f / 3.0f);
  EXPECT_FLOAT_EQ(var(x, {}, 0.0).item<float>(), 1.25f);
  EXPECT_FLOAT_EQ(std(x, {}, 0.0).item<float>(), std::sqrt(1.25f));
  EXPECT_TRUE(std::isnan(var(full({1}, 1.0f)).item<float>()));  // N - 1 = 0
  EXPECT_FLOAT_EQ(norm(x).item<float>(), std::sqrt(30.0f));
  EXPECT_EQ(norm(-x, 1.0).item<float>(), 10.0f);
  EXPECT_EQ(norm(-x, std::numeric_limits<double>::infinity()).item<float>(),
            4.0f);
  EXPECT_EQ(sum_squares(x).item<float>(), 30.0f);
  EXPECT_EQ(sum_squares(arange(4)).item<std::int64_t>(), 14);
  EXPECT_TESSEL_ERROR(norm(x, 3.0), "E2102", "[norm]", "ord");
}

TEST(Reduce, LogSumExpIsStable) {
  const Tensor x = from_vector<float>({1000, 1000}, {2});
  EXPECT_FLOAT_EQ(logsumexp(x).item<float>(), 1000.0f + std::log(2.0f));
  const float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(logsumexp(full({3}, ninf)).item<float>(), ninf);
  EXPECT_FLOAT_EQ(logsumexp(from_vector<float>({0, 0, 0}, {3})).item<float>(),
                  std::log(3.0f));
}

TEST(Reduce, EmptyExtents) {
  const Tensor e = zeros({0, 3});
  EXPECT_EQ(values<float>(sum(e, {0})), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(prod(e).item<float>(), 1.0f);
  EXPECT_FALSE(any(e).item<bool>());
  EXPECT_TRUE(all(e).item<bool>());
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  EXPECT_EQ(sum(e, {1}).shape(), (Shape{0}));  // nothing to reduce into
  EXPECT_TESSEL_ERROR(max(e), "E2102", "[max]", "(0, 3)");
  EXPECT_TESSEL_ERROR(argmax(e, 0), "E2102", "[argmax]");
  EXPECT_EQ(max(e, {1}).shape(), (Shape{0}));  // no output, no error
}

TEST(Reduce, AxisErrors) {
  EXPECT_TESSEL_ERROR(sum(grid(), {2}), "E2102", "[sum]", "axis 2", "rank 2");
  EXPECT_TESSEL_ERROR(sum(grid(), {0, -2}), "E2102", "repeated");
  EXPECT_TESSEL_ERROR(argmax(grid(), 5), "E2102", "[argmax]");
  EXPECT_EQ(sum(full({}, 3.0f)).item<float>(), 3.0f);  // rank 0: all of nothing
}

// 10^8 copies of 0.1f sum to 1.0000000149e7; a naive f32 loop stalls near
// 2^21. Blocked f32 lanes with f64 block totals land on the nearest f32.
TEST(Reduce, SummationIsNumericallyRobust) {
  const Tensor x = full({100000000}, 0.1f);
  const double truth = 1e8 * static_cast<double>(0.1f);
  EXPECT_NEAR(sum(x).item<double>(), truth, truth * 1e-6);
  EXPECT_NEAR(mean(x).item<double>(), static_cast<double>(0.1f), 1e-7);
  EXPECT_NEAR(sum(x.reshape({10000, 10000}), {0}).at<float>({5}), 1000.0, 1e-3);
}

TEST(Reduce, SumsDoNotDependOnTheThreadCount) {
  const Tensor x = randn({3, 1000003});
  const int threads = get_num_threads();
  set_num_threads(1);
  const Tensor one = sum(x, {1});
  set_num_threads(2);
  const Tensor two = sum(x, {1});
  set_num_threads(threads);
  EXPECT_EQ(std::memcmp(one.raw_data(), two.raw_data(), one.nbytes()), 0);
}

TEST(Scan, CumsumAndCumprod) {
  EXPECT_EQ(values<float>(cumsum(grid(), 1)),
            (std::vector<float>{0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38}));
  EXPECT_EQ(values<float>(cumsum(grid(), 0)),
            (std::vector<float>{0, 1, 2, 3, 4, 6, 8, 10, 12, 15, 18, 21}));
  const Tensor v = from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(values<float>(cumsum(v, 0, true)), (std::vector<float>{0, 1, 3}));
  EXPECT_EQ(values<float>(cumsum(v, 0, false, true)),
            (std::vector<float>{6, 5, 3}));
  EXPECT_EQ(values<float>(cumsum(v, 0, true, true)),
            (std::vector<float>{5, 3, 0}));
  EXPECT_EQ(values<float>(cumprod(v, 0)), (std::vector<float>{1, 2, 6}));
  EXPECT_EQ(cumsum(ones({3}, DType::I32), 0).dtype(), DType::I64);
  EXPECT_TESSEL_ERROR(cumsum(v, 1), "E2102", "[cumsum]");
}

TEST(Softmax, RowsSumToOneAndAreStable) {
  const Tensor x = from_vector<float>({1, 2, 3, 1000, 1000, 1000}, {2, 3});
  const Tensor s = softmax(x, -1);
  // exp(0, 1, 2) / (1 + e + e^2) = 0.09003057, 0.24472847, 0.66524096
  EXPECT_FLOAT_EQ(s.at<float>({0, 0}), 0.090030573f);
  EXPECT_FLOAT_EQ(s.at<float>({0, 2}), 0.66524096f);
  EXPECT_FLOAT_EQ(s.at<float>({1, 1}), 1.0f / 3.0f);
  const Tensor l = log_softmax(x, 1);
  EXPECT_FLOAT_EQ(l.at<float>({0, 2}), std::log(0.66524096f));
  EXPECT_FLOAT_EQ(l.at<float>({1, 0}), -std::log(3.0f));
  // Along axis 0 (a strided reduction): columns of two equal values.
  EXPECT_FLOAT_EQ(softmax(ones({2, 5}), 0).at<float>({1, 4}), 0.5f);
  EXPECT_EQ(values<float>(hardmax(from_vector<float>({1, 3, 3, 0}, {2, 2}), 1)),
            (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(softmax(arange(3)).dtype(), DType::F32);
  EXPECT_EQ(softmax(ones({4}, DType::BF16)).dtype(), DType::BF16);
}

TEST(Numerics, CheckNamesTheOpAndTheFirstBadIndex) {
  const Tensor x = from_vector<float>({1, 2, NAN, 4}, {2, 2});
  EXPECT_NO_THROW(softmax(x));  // off by default
  CheckNumericsGuard on(true);
  EXPECT_TESSEL_ERROR(softmax(x), "E2401", "[softmax]", "(1, 0)", "(2, 2)");
  EXPECT_TESSEL_ERROR(log_softmax(x), "E2401", "[log_softmax]");
  EXPECT_TESSEL_ERROR(logsumexp(x, {1}), "E2401", "[logsumexp]", "(1,)");
  EXPECT_TESSEL_ERROR(norm(x), "E2401", "[norm]");
  EXPECT_NO_THROW(softmax(ones({3})));
}

}  // namespace
}  // namespace tessel

// Sparse COO and CSR tensors: hand-worked conversions, repeated entries,
// SpMM against the dense matmul, layouts, empty cases and every error code.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// [[0, 1, 0, 2],
//  [0, 0, 0, 0],
//  [3, 0, 4, 0]]
Tensor small() {
  return from_vector<float>({0, 1, 0, 2, 0, 0, 0, 0, 3, 0, 4, 0}, {3, 4});
}
Tensor i64s(std::vector<std::int64_t> v, Shape shape) {
  return from_vector(v, std::move(shape));
}
Tensor i32s(std::vector<std::int32_t> v, Shape shape) {
  return from_vector(v, std::move(shape));
}

// A rows x cols matrix with about `density` of its entries N(0, 1).
Tensor random_sparse(std::int64_t rows, std::int64_t cols, double density,
                     Generator& g) {
  const Tensor keep = lt(rand({rows, cols}, g), density);
  return where(keep, randn({rows, cols}, g), 0.0);
}

TEST(Sparse, HandWorkedSmallMatrix) {
  const CooTensor coo = to_sparse_coo(small());
  EXPECT_EQ(coo.nnz(), 4);
  EXPECT_EQ(coo.index_dtype(), DType::I64);
  EXPECT_TRUE(coo.is_coalesced());
  EXPECT_EQ(coo.indices().shape(), (Shape{2, 4}));
  EXPECT_EQ(values<std::int64_t>(coo.indices()),
            (std::vector<std::int64_t>{0, 0, 2, 2, 1, 3, 0, 2}));
  EXPECT_EQ(values<float>(coo.values()), (std::vector<float>{1, 2, 3, 4}));

  const CsrTensor csr = to_sparse_csr(small(), DType::I32);
  EXPECT_EQ(csr.index_dtype(), DType::I32);
  EXPECT_EQ(values<std::int32_t>(csr.crow_indices()),
            (std::vector<std::int32_t>{0, 2, 2, 4}));
  EXPECT_EQ(values<std::int32_t>(csr.col_indices()),
            (std::vector<std::int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(values<float>(csr.values()), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<float>(csr.to_dense()), values<float>(small()));

  // B = [[1, 2], [3, 4], [5, 6], [7, 8]]:
  // row 0 = 1 * [3, 4] + 2 * [7, 8] = [17, 20]; row 1 = 0;
  // row 2 = 3 * [1, 2] + 4 * [5, 6] = [23, 30].
  const Tensor b = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  const Tensor y = matmul(csr, b);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_EQ(values<float>(y), (std::vector<float>{17, 20, 0, 0, 23, 30}));
  EXPECT_EQ(values<float>(matmul(coo, b)), values<float>(y));

  const CooTensor back = csr.to_coo();
  EXPECT_EQ(back.index_dtype(), DType::I32);
  EXPECT_TRUE(back.is_coalesced());
  EXPECT_EQ(values<std::int32_t>(back.indices()),
            (std::vector<std::int32_t>{0, 0, 2, 2, 1, 3, 0, 2}));
}

TEST(Sparse, RoundTripsDenseCooCsr) {
  Generator g(7);
  for (DType index : {DType::I32, DType::I64}) {
    // Rank 3 through COO, with a NaN (an entry) and -0.0 (not one).
    Tensor d3 = random_sparse(6, 35, 0.2, g).reshape({6, 5, 7}).clone();
    d3.set({1, 2, 3}, std::nan(""));
    d3.set({0, 0, 0}, -0.0);
    const CooTensor coo = to_sparse_coo(d3, index);
    EXPECT_EQ(coo.index_dtype(), index);
    EXPECT_EQ(coo.rank(), 3);
    const auto want = values<float>(d3);
    const auto got = values<float>(coo.to_dense());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << i;
      } else {
        EXPECT_EQ(got[i], want[i]) << i;
      }
    }
    EXPECT_EQ(coo.nnz(), sum(ne(d3, 0)).item<std::int64_t>());

    // 2-D through CSR, from a transposed (strided) f64 operand.
    const Tensor d2 =
        random_sparse(9, 13, 0.3, g).to(DType::F64).transpose(0, 1);
    const CsrTensor csr = to_sparse_csr(d2, index);
    EXPECT_EQ(csr.shape(), (Shape{13, 9}));
    EXPECT_EQ(csr.dtype(), DType::F64);
    EXPECT_EQ(values<double>(csr.to_dense()), values<double>(d2));
    EXPECT_EQ(values<double>(csr.to_coo().to_dense()), values<double>(d2));
    EXPECT_EQ(values<double>(to_sparse_coo(d2, index).to_csr().to_dense()),
              values<double>(d2));
  }
}

TEST(Sparse, RepeatedEntriesSumWhenCoalesced) {
  // (2,0)=1, (0,3)=2, (2,0)=5, (0,1)=0.5, (0,3)=-2, unsorted: coalesced to
  // (0,1)=0.5, (0,3)=0 (an explicit zero, kept as PyTorch does), (2,0)=6.
  const Tensor idx = i64s({2, 0, 2, 0, 0, 0, 3, 0, 1, 3}, {2, 5});
  const Tensor val = from_vector<float>({1, 2, 5, 0.5f, -2}, {5});
  const CooTensor coo = CooTensor::from_parts(idx, val, {3, 4});
  EXPECT_FALSE(coo.is_coalesced());
  EXPECT_EQ(coo.nnz(), 5);
  EXPECT_EQ(values<float>(coo.to_dense()),
            (std::vector<float>{0, 0.5f, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0}));

  const CooTensor c = coo.coalesce();
  EXPECT_TRUE(c.is_coalesced());
  EXPECT_EQ(values<std::int64_t>(c.indices()),
            (std::vector<std::int64_t>{0, 0, 2, 1, 3, 0}));
  EXPECT_EQ(values<float>(c.values()), (std::vector<float>{0.5f, 0, 6}));

  const CsrTensor csr = coo.to_csr();
  EXPECT_EQ(values<std::int64_t>(csr.crow_indices()),
            (std::vector<std::int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(values<std::int64_t>(csr.col_indices()),
            (std::vector<std::int64_t>{1, 3, 0}));
  EXPECT_EQ(values<float>(csr.values()), (std::vector<float>{0.5f, 0, 6}));

  // Integers sum too; i32 indices stay i32; a sorted input is recognised.
  const CooTensor ints =
      CooTensor::from_parts(i32s({1, 1, 0, 2, 2, 1}, {2, 3}),
                            from_vector<std::int32_t>({4, 5, 6}, {3}), {2, 3});
  EXPECT_EQ(values<std::int32_t>(ints.to_dense()),
            (std::vector<std::int32_t>{0, 6, 0, 0, 0, 9}));
  EXPECT_EQ(ints.to_csr().index_dtype(), DType::I32);
  EXPECT_TRUE(
      CooTensor::from_parts(i64s({0, 1, 1, 0}, {2, 2}), ones({2}), {2, 2})
          .is_coalesced());

  // bf16 repeats sum in f32 and round once: 256 + 1 + 1 = 258 exactly,
  // where summing in bf16 would give 256 + 1 -> 256 twice.
  const CooTensor narrow = CooTensor::from_parts(
      i64s({0, 0, 0}, {1, 3}),
      from_vector<float>({256, 1, 1}, {3}).to(DType::BF16), {1});
  EXPECT_EQ(narrow.coalesce().values().to(DType::F32).item<float>(), 258.0f);
  EXPECT_EQ(narrow.to_dense().to(DType::F32).item<float>(), 258.0f);
}

// |spmm - exact| <= rel * (|A| @ |B|) + abs_tol * |exact|, elementwise,
// the exact product taken in f64 on the same (rounded) inputs.
void expect_spmm_matches(const Tensor& a, const Tensor& b, DType dtype,
                         double rel, double out_rounding) {
  const Tensor ad = a.to(dtype), bd = b.to(dtype);
  for (DType index : {DType::I32, DType::I64}) {
    const Tensor got = matmul(to_sparse_csr(ad, index), bd);
    ASSERT_EQ(got.dtype(), dtype);
    const Tensor exact = matmul(ad.to(DType::F64), bd.to(DType::F64));
    const Tensor scale = matmul(abs(ad.to(DType::F64)), abs(bd.to(DType::F64)));
    const auto g = values<double>(got.to(DType::F64));
    const auto e = values<double>(exact);
    const auto s = values<double>(scale);
    for (std::size_t i = 0; i < e.size(); ++i) {
      EXPECT_LE(std::abs(g[i] - e[i]),
                rel * s[i] + out_rounding * std::abs(e[i]))
          << dtype_name(dtype) << " element " << i;
    }
  }
}

TEST(Sparse, SpmmMatchesDenseMatmul) {
  Generator g(11);
  const Tensor a = random_sparse(37, 53, 0.1, g);
  const Tensor b = randn({53, 19}, g);
  // f32: a row of ~5 products rounds a few times by 2^-24 of |A| @ |B|.
  expect_spmm_matches(a, b, DType::F32, 1e-6, 0);
  expect_spmm_matches(a, b, DType::F64, 1e-15, 0);
  // bf16 inputs: exact products, f32 sums, then one rounding of the
  // result (half an ulp: at most 2^-8 relative for bf16, 2^-11 for f16).
  expect_spmm_matches(a, b, DType::BF16, 1e-6, std::ldexp(1.0, -8));
  expect_spmm_matches(a, b, DType::F16, 1e-6, std::ldexp(1.0, -11));
  // Mixed: bf16 values with f32 b promote to f32.
  EXPECT_EQ(matmul(to_sparse_csr(a.to(DType::BF16)), b).dtype(), DType::F32);
}

TEST(Sparse, SpmmStridedOperandAndThreads) {
  Generator g(5);
  // Big enough to split over threads, with one dense row among mostly
  // empty ones (skewed rows).
  Tensor a = random_sparse(300, 200, 0.05, g).to(DType::F64);
  a.select(0, 17).copy_(randn({200}, g));
  a.slice(0, 100, 200).fill_(0);
  const CsrTensor csr = to_sparse_csr(a);
  const Tensor bt = randn({64, 200}, g, DType::F64);  // b = bt^T, strided
  const Tensor want = matmul(a, bt.transpose(0, 1));
  const Tensor got = matmul(csr, bt.transpose(0, 1));
  testing::expect_near_all(got, values<double>(want), 1e-12);
  // Same sums in the same order whatever the layout or thread count.
  const Tensor packed = matmul(csr, bt.transpose(0, 1).contiguous());
  EXPECT_EQ(values<double>(got), values<double>(packed));
  const int threads = get_num_threads();
  set_num_threads(1);
  const Tensor one = matmul(csr, bt.transpose(0, 1));
  set_num_threads(3);
  const Tensor three = matmul(csr, bt.transpose(0, 1));
  set_num_threads(threads);
  EXPECT_EQ(values<double>(one), values<double>(got));
  EXPECT_EQ(values<double>(three), values<double>(got));
  // A stepped slice as b.
  const Tensor bs = randn({200, 40}, g, DType::F64).slice(1, 0, 40, 3);
  testing::expect_near_all(matmul(csr, bs), values<double>(matmul(a, bs)),
                           1e-12);
}

TEST(Sparse, EmptyRowsAndNoEntries) {
  const CsrTensor none = to_sparse_csr(zeros({3, 4}));
  EXPECT_EQ(none.nnz(), 0);
  EXPECT_EQ(values<std::int64_t>(none.crow_indices()),
            (std::vector<std::int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(values<float>(matmul(none, ones({4, 2}))),
            (std::vector<float>(6, 0.0f)));
  EXPECT_EQ(values<float>(none.to_dense()), (std::vector<float>(12, 0.0f)));
  const CooTensor coo =
      CooTensor::from_parts(empty({2, 0}, DType::I64), empty({0}), {3, 4});
  EXPECT_TRUE(coo.is_coalesced());
  EXPECT_EQ(coo.coalesce().nnz(), 0);
  EXPECT_EQ(coo.to_csr().nnz(), 0);
  EXPECT_EQ(values<float>(coo.to_dense()), (std::vector<float>(12, 0.0f)));
  // Zero rows, zero columns of b, zero inner extent.
  EXPECT_EQ(matmul(to_sparse_csr(zeros({0, 4})), ones({4, 2})).shape(),
            (Shape{0, 2}));
  EXPECT_EQ(matmul(to_sparse_csr(small()), ones({4, 0})).shape(),
            (Shape{3, 0}));
  EXPECT_EQ(values<float>(matmul(to_sparse_csr(zeros({2, 0})), ones({0, 3}))),
            (std::vector<float>(6, 0.0f)));
  EXPECT_EQ(to_sparse_coo(zeros({5})).to_dense().shape(), (Shape{5}));
  // A CSR whose later rows are empty, built from parts.
  const CsrTensor tail =
      CsrTensor::from_parts(i32s({0, 1, 1, 1}, {4}), i32s({2}, {1}),
                            from_vector<float>({5}, {1}), {3, 3});
  EXPECT_EQ(values<float>(tail.to_dense()),
            (std::vector<float>{0, 0, 5, 0, 0, 0, 0, 0, 0}));
}

TEST(Sparse, ValidationErrors) {
  const Tensor v2 = ones({2});
  // E2201: index and value dtypes.
  EXPECT_TESSEL_ERROR(CooTensor::from_parts(ones({2, 2}), v2, {2, 2}), "E2201",
                      "[sparse_coo]", "i32 or i64", "f32");
  EXPECT_TESSEL_ERROR(
      CooTensor::from_parts(i64s({0, 1}, {1, 2}), ones({2}, DType::Bool), {2}),
      "E2201", "values must be numbers", "bool");
  EXPECT_TESSEL_ERROR(CsrTensor::from_parts(i32s({0, 1}, {2}), i64s({0}, {1}),
                                            ones({1}), {1, 1}),
                      "E2201", "must share a dtype");
  EXPECT_TESSEL_ERROR(to_sparse_coo(small(), DType::I16), "E2201",
                      "[to_sparse_coo]", "i16");
  EXPECT_TESSEL_ERROR(
      matmul(to_sparse_csr(small().to(DType::I32)), ones({4, 2}, DType::I32)),
      "E2201", "[sparse_matmul]", "i32");
  // E2102: ranks and lengths.
  EXPECT_TESSEL_ERROR(CooTensor::from_parts(i64s({0, 1}, {2}), v2, {2, 2}),
                      "E2102", "[sparse_coo]", "[rank, nnz]");
  EXPECT_TESSEL_ERROR(
      CooTensor::from_parts(i64s({0, 1, 0, 1}, {2, 2}), ones({3}), {2, 2}),
      "E2102", "(3,)");
  EXPECT_TESSEL_ERROR(CooTensor::from_parts(i64s({0, 1}, {1, 2}), v2, {2, 2}),
                      "E2102", "(1, 2)");
  EXPECT_TESSEL_ERROR(CsrTensor::from_parts(i64s({0, 1}, {2}), i64s({0}, {1}),
                                            ones({1}), {2, 2}),
                      "E2102", "[sparse_csr]", "crow_indices", "[3]");
  EXPECT_TESSEL_ERROR(CsrTensor::from_parts(i64s({0, 1, 1}, {3}),
                                            i64s({0}, {1}), ones({2}), {2, 2}),
                      "E2102", "[nnz]");
  EXPECT_TESSEL_ERROR(to_sparse_csr(ones({2, 2, 2})), "E2102", "2-D");
  EXPECT_TESSEL_ERROR(to_sparse_coo(ones({})), "E2102", "rank >= 1");
  EXPECT_TESSEL_ERROR(to_sparse_coo(ones({2, 2, 2})).to_csr(), "E2102",
                      "[to_csr]");
  EXPECT_TESSEL_ERROR(matmul(to_sparse_csr(small()), ones({4})), "E2102",
                      "[sparse_matmul]", "matrix");
  // E2103: inner dimensions.
  EXPECT_TESSEL_ERROR(matmul(to_sparse_csr(small()), ones({3, 2})), "E2103",
                      "[sparse_matmul]", "(3, 4)", "(3, 2)");
  // E2302: indices outside the shape, naming the entry.
  EXPECT_TESSEL_ERROR(
      CooTensor::from_parts(i64s({0, 2, 1, 4}, {2, 2}), v2, {3, 4}), "E2302",
      "entry 1", "index 4 on axis 1", "[0, 4)");
  EXPECT_TESSEL_ERROR(
      CooTensor::from_parts(i32s({0, -1, 1, 1}, {2, 2}), v2, {3, 4}), "E2302",
      "entry 1", "index -1 on axis 0");
  EXPECT_TESSEL_ERROR(CsrTensor::from_parts(i64s({0, 1, 2}, {3}),
                                            i64s({1, 3}, {2}), v2, {2, 3}),
                      "E2302", "entry 1 (row 1)", "column 3");
  EXPECT_TESSEL_ERROR(CsrTensor::from_parts(i64s({0, 1, 2}, {3}),
                                            i64s({-1, 0}, {2}), v2, {2, 3}),
                      "E2302", "entry 0 (row 0)", "column -1");
  // E3001: malformed row pointers and column order.
  const Tensor col = i64s({0, 1}, {2});
  EXPECT_TESSEL_ERROR(
      CsrTensor::from_parts(i64s({1, 1, 2}, {3}), col, v2, {2, 3}), "E3001",
      "[sparse_csr]", "start at 0");
  EXPECT_TESSEL_ERROR(
      CsrTensor::from_parts(i64s({0, 2, 1, 2}, {4}), col, v2, {3, 3}), "E3001",
      "row 1 spans [2, 1)");
  EXPECT_TESSEL_ERROR(
      CsrTensor::from_parts(i64s({0, 1, 1}, {3}), col, v2, {2, 3}), "E3001",
      "end at 1", "2 entries");
  EXPECT_TESSEL_ERROR(
      CsrTensor::from_parts(i64s({0, 2}, {2}), i64s({2, 1}, {2}), v2, {1, 3}),
      "E3001", "row 0 must strictly increase", "column 1");
  EXPECT_TESSEL_ERROR(
      CsrTensor::from_parts(i64s({0, 2}, {2}), i64s({1, 1}, {2}), v2, {1, 3}),
      "E3001", "strictly increase");
}

TEST(Sparse, PartsAreCopied) {
  // Writing into the caller's index tensor after validation cannot move an
  // entry outside the shape.
  Tensor idx = i64s({0, 1}, {2, 1});
  const CooTensor coo = CooTensor::from_parts(idx, ones({1}), {2, 2});
  idx.at<std::int64_t>({1, 0}) = 99;
  EXPECT_EQ(values<float>(coo.to_dense()), (std::vector<float>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace tessel

// The decompositions on matrices worked by hand, the identities they must
// satisfy on random batches, and their errors.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

Tensor matrix(std::vector<double> v, Shape shape) {
  return from_vector(v, std::move(shape));
}

void expect_near(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  const auto g = values<double>(got.to(DType::F64));
  const auto w = values<double>(want.to(DType::F64));
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol) << i;
}

TEST(Decompositions, HandWorkedTwoByTwos) {
  // [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt 2]].
  expect_near(linalg::cholesky(matrix({4, 2, 2, 3}, {2, 2})),
              matrix({2, 0, 1, std::sqrt(2.0)}, {2, 2}), 1e-15);
  expect_near(linalg::cholesky(matrix({4, 2, 2, 3}, {2, 2}), true),
              matrix({2, 1, 0, std::sqrt(2.0)}, {2, 2}), 1e-15);
  // det [[1, 2], [3, 4]] = -2.
  const Tensor a = matrix({1, 2, 3, 4}, {2, 2});
  EXPECT_NEAR(linalg::det(a).item<double>(), -2.0, 1e-14);
  const auto sl = linalg::slogdet(a);
  EXPECT_EQ(sl.sign.item<double>(), -1.0);
  EXPECT_NEAR(sl.logabsdet.item<double>(), std::log(2.0), 1e-15);
  // 2x + y = 3, x + 3y = 5: x = 0.8, y = 1.4.
  expect_near(linalg::solve(matrix({2, 1, 1, 3}, {2, 2}), matrix({3, 5}, {2})),
              matrix({0.8, 1.4}, {2}), 1e-15);
  // inv [[4, 7], [2, 6]] = [[0.6, -0.7], [-0.2, 0.4]].
  expect_near(linalg::inv(matrix({4, 7, 2, 6}, {2, 2})),
              matrix({0.6, -0.7, -0.2, 0.4}, {2, 2}), 1e-15);
  // [[2, 1], [1, 2]]: eigenvalues 1 and 3, eigenvectors (1, -1) and (1, 1)
  // over sqrt 2 (up to sign).
  const auto e = linalg::eigh(matrix({2, 1, 1, 2}, {2, 2}));
  expect_near(e.values, matrix({1, 3}, {2}), 1e-15);
  const auto v = values<double>(e.vectors);
  EXPECT_NEAR(std::abs(v[0]), M_SQRT1_2, 1e-15);
  EXPECT_NEAR(v[0] * v[2], -0.5, 1e-15);  // first column is +-(1, -1)/sqrt 2
  // diag(3, -2): singular values 3, 2.
  expect_near(linalg::svdvals(matrix({3, 0, 0, -2}, {2, 2})),
              matrix({3, 2}, {2}), 1e-15);
  // A singular matrix: det 0, sign 0, log|det| -inf.
  const auto singular = linalg::slogdet(matrix({1, 2, 2, 4}, {2, 2}));
  EXPECT_EQ(singular.sign.item<double>(), 0.0);
  EXPECT_EQ(singular.logabsdet.item<double>(),
            -std::numeric_limits<double>::infinity());
}

// Complex matrices: the c/z LAPACK routines, conjugate transposes and
// real eigenvalues, singular values and log|det|.
Tensor complex_matrix(std::vector<double> re, std::vector<double> im,
                      DType dtype = DType::C128) {
  return make_complex(matrix(std::move(re), {2, 2}),
                      matrix(std::move(im), {2, 2}))
      .to(dtype);
}

TEST(Decompositions, HandWorkedComplexTwoByTwos) {
  using C = std::complex<double>;
  const double r2 = std::sqrt(2.0), r15 = std::sqrt(1.5);
  // Hermitian [[2, i], [-i, 2]] = L L^H with L = [[sqrt 2, 0],
  // [-i / sqrt 2, sqrt 1.5]]; U = L^H.
  const Tensor h = complex_matrix({2, 0, 0, 2}, {0, 1, -1, 0});
  testing::expect_near_complex(linalg::cholesky(h),
                               {C(r2), C(0), C(0, -1 / r2), C(r15)}, 1e-15);
  testing::expect_near_complex(linalg::cholesky(h, true),
                               {C(r2), C(0, 1 / r2), C(0), C(r15)}, 1e-15);
  // Its eigenvalues are 1 and 3 (real, f64 for c128 and f32 for c64);
  // eigenvector of 1 is (1, i) / sqrt 2 up to a phase.
  const auto e = linalg::eigh(h);
  EXPECT_EQ(e.values.dtype(), DType::F64);
  expect_near(e.values, matrix({1, 3}, {2}), 1e-15);
  const auto v = values<C>(e.vectors);
  EXPECT_NEAR(std::abs(v[0]), M_SQRT1_2, 1e-15);
  EXPECT_NEAR(std::abs(v[2] / v[0] - C(0, 1)), 0.0, 1e-15);
  EXPECT_EQ(linalg::eigvalsh(h.to(DType::C64)).dtype(), DType::F32);
  // det [[1, i], [i, 1]] = 1 - i^2 = 2.
  testing::expect_near_complex(
      linalg::det(complex_matrix({1, 0, 0, 1}, {0, 1, 1, 0})), {C(2)}, 1e-15);
  // det diag(1 + i, 1) = 1 + i: sign (1 + i) / sqrt 2, log|det| = ln 2 / 2.
  const auto sl = linalg::slogdet(complex_matrix({1, 0, 0, 1}, {1, 0, 0, 0}));
  EXPECT_EQ(sl.sign.dtype(), DType::C128);
  EXPECT_EQ(sl.logabsdet.dtype(), DType::F64);
  testing::expect_near_complex(sl.sign, {C(1 / r2, 1 / r2)}, 1e-15);
  EXPECT_NEAR(sl.logabsdet.item<double>(), std::log(2.0) / 2, 1e-15);
  // A row swap: [[0, i], [i, 0]] has det -i^2 = 1.
  testing::expect_near_complex(
      linalg::slogdet(complex_matrix({0, 0, 0, 0}, {0, 1, 1, 0})).sign, {C(1)},
      1e-15);
  // [[1, i], [0, 1]] x = (1, 1): x = (1 - i, 1).
  testing::expect_near_complex(
      linalg::solve(complex_matrix({1, 0, 0, 1}, {0, 1, 0, 0}),
                    from_vector(std::vector<double>{1, 1}, {2})),
      {C(1, -1), C(1)}, 1e-15);
  // inv [[i, 0], [0, 2]] = [[-i, 0], [0, 0.5]].
  testing::expect_near_complex(
      linalg::inv(complex_matrix({0, 0, 0, 2}, {1, 0, 0, 0})),
      {C(0, -1), C(0), C(0), C(0.5)}, 1e-15);
  // diag(3i, -4): singular values 4 and 3, real.
  const Tensor s = linalg::svdvals(complex_matrix({0, 0, 0, -4}, {3, 0, 0, 0}));
  EXPECT_EQ(s.dtype(), DType::F64);
  expect_near(s, matrix({4, 3}, {2}), 1e-15);
  // [[1, i], [i, -1]] is rank one: (1, i)^T (1, i).
  expect_near(
      linalg::svdvals(complex_matrix({1, 0, 0, -1}, {0, 1, 1, 0}, DType::C64)),
      matrix({2, 0}, {2}), 1e-6);
}

TEST(Decompositions, IdentitiesOnRandomBatches) {
  Generator g(7);
  const Tensor a = randn({3, 5, 4}, g, DType::F64);
  // QR: Q^T Q = I, R upper, Q R = a, in both modes.
  for (const char* mode : {"reduced", "complete"}) {
    const auto qr = linalg::qr(a, mode);
    const std::int64_t k = std::string(mode) == "reduced" ? 4 : 5;
    EXPECT_EQ(qr.q.shape(), (Shape{3, 5, k}));
    EXPECT_EQ(qr.r.shape(), (Shape{3, k, 4}));
    expect_near(matmul(qr.q, qr.r), a, 1e-13);
    expect_near(matmul(qr.q.transpose(-2, -1), qr.q),
                eye(k, std::nullopt, DType::F64).expand({3, k, k}), 1e-13);
    expect_near(tril(qr.r, -1), zeros(qr.r.shape(), DType::F64), 0);
  }
  // SVD: U diag(S) Vh = a, S descending.
  const auto s = linalg::svd(a, false);
  EXPECT_EQ(s.u.shape(), (Shape{3, 5, 4}));
  expect_near(matmul(mul(s.u, s.s.unsqueeze(-2)), s.vh), a, 1e-13);
  const auto sv = values<double>(s.s);
  for (std::size_t i = 0; i + 1 < sv.size(); ++i) {
    if ((i + 1) % 4 != 0) {
      EXPECT_GE(sv[i], sv[i + 1]);
    }
  }
  EXPECT_EQ(linalg::svd(a, true).u.shape(), (Shape{3, 5, 5}));
  // Symmetric positive definite: b = a^T a + I.
  const Tensor spd =
      add(matmul(a.transpose(-2, -1), a), eye(4, std::nullopt, DType::F64));
  const Tensor l = linalg::cholesky(spd);
  expect_near(matmul(l, l.transpose(-2, -1)), spd, 1e-12);
  const auto e = linalg::eigh(spd);
  expect_near(matmul(spd, e.vectors), mul(e.vectors, e.values.unsqueeze(-2)),
              1e-12);
  // Solve with broadcast batches: one matrix for three right-hand sides.
  const Tensor rhs = randn({3, 4, 2}, g, DType::F64);
  const Tensor x = linalg::solve(spd.select(0, 1), rhs);
  expect_near(matmul(spd.select(0, 1), x), rhs, 1e-12);
  expect_near(matmul(linalg::inv(spd), spd),
              eye(4, std::nullopt, DType::F64).expand({3, 4, 4}), 1e-12);
  // f32 and narrow floats compute in f32.
  EXPECT_EQ(linalg::det(spd.to(DType::BF16)).dtype(), DType::F32);
  EXPECT_EQ(linalg::det(spd.to(DType::F32)).dtype(), DType::F32);
}

TEST(Decompositions, EmptyAndBatchEdges) {
  EXPECT_EQ(linalg::det(zeros({0, 3, 3})).shape(), (Shape{0}));
  // A 0 x 0 matrix has determinant 1.
  EXPECT_EQ(linalg::det(zeros({0, 0}, DType::F64)).item<double>(), 1.0);
  const auto qr = linalg::qr(zeros({3, 0}, DType::F64), "complete");
  expect_near(qr.q, eye(3, std::nullopt, DType::F64), 0);
  EXPECT_EQ(qr.r.shape(), (Shape{3, 0}));
  EXPECT_EQ(linalg::svdvals(zeros({2, 0, 4})).shape(), (Shape{2, 0}));
  // The meta device computes shapes only.
  const Tensor meta = empty({2, 6, 3}, DType::F32, Device::meta());
  const auto m = linalg::svd(meta, false);
  EXPECT_EQ(m.u.shape(), (Shape{2, 6, 3}));
  EXPECT_EQ(m.vh.shape(), (Shape{2, 3, 3}));
  const auto mc = linalg::svd(meta.to(DType::C64), false);
  EXPECT_EQ(mc.u.dtype(), DType::C64);
  EXPECT_EQ(mc.s.dtype(), DType::F32);
  EXPECT_EQ(mc.s.shape(), (Shape{2, 3}));
}

TEST(Decompositions, ErrorsNameTheMatrix) {
  // The second matrix of the batch is singular.
  const Tensor batch = matrix({1, 0, 0, 1, 1, 2, 2, 4}, {2, 2, 2});
  EXPECT_TESSEL_ERROR(linalg::solve(batch, ones({2, 2}, DType::F64)), "E2401",
                      "[solve]", "(1,)", "singular");
  EXPECT_TESSEL_ERROR(linalg::inv(batch), "E2401", "[inv]", "singular");
  EXPECT_TESSEL_ERROR(linalg::cholesky(matrix({1, 2, 2, 1}, {2, 2})), "E2401",
                      "[cholesky]", "positive definite");
  // [[1, 2i], [-2i, 1]] is Hermitian with eigenvalues -1 and 3.
  EXPECT_TESSEL_ERROR(
      linalg::cholesky(complex_matrix({1, 0, 0, 1}, {0, 2, -2, 0})), "E2401",
      "[cholesky]", "positive definite");
  EXPECT_TESSEL_ERROR(
      linalg::inv(complex_matrix({1, 0, 2, 0}, {1, 0, 2, 0}, DType::C64)),
      "E2401", "[inv]", "singular");
  EXPECT_TESSEL_ERROR(linalg::det(ones({2, 2}, DType::I32)), "E2201", "[det]",
                      "i32");
  EXPECT_TESSEL_ERROR(linalg::inv(ones({2, 3})), "E2102", "[inv]", "square");
  EXPECT_TESSEL_ERROR(linalg::eigh(ones({3})), "E2102", "[eigh]", "rank");
  EXPECT_TESSEL_ERROR(linalg::solve(ones({2, 2}), ones({3})), "E2103",
                      "[solve]");
  EXPECT_TESSEL_ERROR(linalg::qr(ones({2, 2}), "full"), "E2102", "[qr]",
                      "reduced");
}

}  // namespace
}  // namespace tessel

// The decompositions' op layer: dtype rule, batch flattening, output
// allocation, and turning a matrix the engine could not handle into an
// error that names it. The factorisations are the backend's (LAPACK on
// the CPU).
#include "tessel/ops/decompositions.hpp"

#include <climits>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/complex.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::linalg {

namespace {

// f32, f64, c64 and c128 compute as themselves, f16/bf16/f8 in f32;
// integers and bool are refused (NumPy would compute them in f64, PyTorch
// refuses).
Tensor floating(const Tensor& a, const char* op) {
  const ops::CheckedOperands checked(op, a);
  const DType d = a.dtype();
  if (is_complex(d)) return a.contiguous();
  TESSEL_CHECK(is_floating_point(d), BadDType, op,
               "takes floating-point or complex matrices, got {} (cast with "
               ".to(f32) or .to(f64))",
               dtype_name(d));
  return a.to(d == DType::F64 ? DType::F64 : DType::F32).contiguous();
}

// The dtype of eigenvalues, singular values and log|det|: real, of the
// matrix's precision.
DType real_of(DType d) { return is_complex(d) ? complex_component_type(d) : d; }

// The batch axes and the two matrix axes of `a` (rank >= 2, extents LAPACK
// can index with its 32-bit ints).
struct Matrices {
  Shape batch;
  MatrixBatch problem;
};

Matrices matrices(const Tensor& a, const char* op, bool square) {
  TESSEL_CHECK(a.rank() >= 2, BadShape, op,
               "needs matrices (rank >= 2), got shape {}",
               shape_string(a.shape()));
  const std::int64_t rows = a.shape()[a.rank() - 2];
  const std::int64_t cols = a.shape()[a.rank() - 1];
  TESSEL_CHECK(!square || rows == cols, BadShape, op,
               "needs square matrices, got shape {}", shape_string(a.shape()));
  TESSEL_CHECK(rows <= INT_MAX && cols <= INT_MAX && rows * cols <= INT_MAX,
               SizeOverflow, op,
               "a {} x {} matrix is beyond LAPACK's 32-bit indexing", rows,
               cols);
  Matrices m;
  m.batch.assign(a.shape().begin(), a.shape().end() - 2);
  std::int64_t count = 1;
  for (auto e : m.batch) count *= e;
  m.problem = {count, rows, cols};
  return m;
}

Shape with_matrix(const Shape& batch, std::int64_t rows, std::int64_t cols) {
  Shape s = batch;
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

Shape with_vector(const Shape& batch, std::int64_t n) {
  Shape s = batch;
  s.push_back(n);
  return s;
}

// E2401 for the first matrix whose status is not 0.
void check_status(const Tensor& status, const Shape& batch, const char* op,
                  const char* what) {
  if (!ops::backend_of(status).has_data()) return;
  const std::int64_t* s = status.const_data<std::int64_t>();
  for (std::int64_t i = 0; i < status.numel(); ++i) {
    if (s[i] == 0) continue;
    Shape at;
    std::int64_t rest = i;
    for (auto d = static_cast<std::int64_t>(batch.size()) - 1; d >= 0; --d) {
      const std::int64_t e = batch[static_cast<std::size_t>(d)];
      at.insert(0, rest % e);
      rest /= e;
    }
    detail::fail(ErrorCode::NonFinite, op,
                 "the matrix at batch index {} {} (LAPACK info {})",
                 shape_string(at), what, s[i]);
  }
}

}  // namespace

Tensor cholesky(const Tensor& a_in, bool upper) {
  const Tensor a = floating(a_in, "cholesky");
  const Matrices m = matrices(a, "cholesky", true);
  Tensor l = empty(a.shape(), a.dtype(), a.device());
  Tensor status = zeros(m.batch, DType::I64, a.device());
  if (m.problem.count > 0) ops::backend_of(a).cholesky(m.problem, a, l, status);
  check_status(status, m.batch, "cholesky", "is not positive definite");
  // U = L^H: the conjugate transpose (the transpose for real matrices).
  return upper ? conj(l.transpose(-2, -1)).contiguous() : l;
}

QR qr(const Tensor& a_in, std::string_view mode) {
  TESSEL_CHECK(mode == "reduced" || mode == "complete", BadShape, "qr",
               "mode must be 'reduced' or 'complete', got '{}'", mode);
  const Tensor a = floating(a_in, "qr");
  const Matrices m = matrices(a, "qr", false);
  const bool complete = mode == "complete";
  const std::int64_t rows = m.problem.rows, cols = m.problem.cols;
  const std::int64_t k = std::min(rows, cols);
  QR out{empty(with_matrix(m.batch, rows, complete ? rows : k), a.dtype(),
               a.device()),
         empty(with_matrix(m.batch, complete ? rows : k, cols), a.dtype(),
               a.device())};
  if (m.problem.count > 0)
    ops::backend_of(a).qr(m.problem, a, out.q, out.r, complete);
  return out;
}

namespace {

Eigh eigh_impl(const Tensor& a_in, bool vectors, const char* op) {
  const Tensor a = floating(a_in, op);
  const Matrices m = matrices(a, op, true);
  const std::int64_t n = m.problem.rows;
  Eigh out{empty(with_vector(m.batch, n), real_of(a.dtype()), a.device()),
           vectors ? empty(a.shape(), a.dtype(), a.device()) : Tensor()};
  Tensor status = zeros(m.batch, DType::I64, a.device());
  if (m.problem.count > 0)
    ops::backend_of(a).eigh(m.problem, a, out.values, out.vectors, status);
  check_status(status, m.batch, op, "did not converge");
  return out;
}

SVD svd_impl(const Tensor& a_in, bool vectors, bool full, const char* op) {
  const Tensor a = floating(a_in, op);
  const Matrices m = matrices(a, op, false);
  const std::int64_t rows = m.problem.rows, cols = m.problem.cols;
  const std::int64_t k = std::min(rows, cols);
  SVD out;
  out.s = empty(with_vector(m.batch, k), real_of(a.dtype()), a.device());
  if (vectors) {
    out.u = empty(with_matrix(m.batch, rows, full ? rows : k), a.dtype(),
                  a.device());
    out.vh = empty(with_matrix(m.batch, full ? cols : k, cols), a.dtype(),
                   a.device());
  }
  Tensor status = zeros(m.batch, DType::I64, a.device());
  if (m.problem.count > 0)
    ops::backend_of(a).svd(m.problem, a, out.u, out.s, out.vh, full, status);
  check_status(status, m.batch, op, "did not converge");
  return out;
}

}  // namespace

Eigh eigh(const Tensor& a) { return eigh_impl(a, true, "eigh"); }
Tensor eigvalsh(const Tensor& a) {
  return eigh_impl(a, false, "eigvalsh").values;
}

SVD svd(const Tensor& a, bool full_matrices) {
  return svd_impl(a, true, full_matrices, "svd");
}
Tensor svdvals(const Tensor& a) {
  return svd_impl(a, false, false, "svdvals").s;
}

namespace {

Tensor solve_impl(const Tensor& a_in, const Tensor& b_in, const char* op) {
  const ops::CheckedOperands checked(op, {&a_in, &b_in});
  const Tensor a0 = floating(a_in, op);
  const Tensor b0 = floating(b_in, op);
  const DType d = promote_types(a0.dtype(), b0.dtype(), op);
  const Matrices am = matrices(a0, op, true);
  const std::int64_t n = am.problem.rows;
  // A vector b (..., n) is one right-hand side (NumPy 2 and the array API
  // read a 1-D b as a vector; a batch of vectors needs b[..., None]).
  const bool vector = b0.rank() == 1;
  const Tensor b2 = vector ? b0.unsqueeze(-1) : b0;
  TESSEL_CHECK(b2.rank() >= 2 && b2.shape()[b2.rank() - 2] == n,
               InnerDimMismatch, op,
               "a of shape {} needs b with {} rows, got shape {}",
               shape_string(a0.shape()), n, shape_string(b0.shape()));
  const std::int64_t k = b2.shape()[b2.rank() - 1];
  // The batch axes broadcast.
  const Shape a_batch = am.batch;
  const Shape b_batch(b2.shape().begin(), b2.shape().end() - 2);
  const Shape batch = broadcast_shapes(a_batch, b_batch);
  const Tensor a = a0.to(d).expand(with_matrix(batch, n, n)).contiguous();
  const Tensor b = b2.to(d).expand(with_matrix(batch, n, k)).contiguous();
  std::int64_t count = 1;
  for (auto e : batch) count *= e;
  Tensor x = empty(with_matrix(batch, n, k), d, a.device());
  Tensor status = zeros(batch, DType::I64, a.device());
  if (count > 0) {
    ops::backend_of(a).solve({count, n, k}, a, b, x, status);
  }
  check_status(status, batch, op, "is singular");
  return vector ? x.squeeze(-1) : x;
}

}  // namespace

Tensor solve(const Tensor& a, const Tensor& b) {
  return solve_impl(a, b, "solve");
}

// a^-1 = solve(a, I).
Tensor inv(const Tensor& a_in) {
  const Tensor a = floating(a_in, "inv");
  const Matrices m = matrices(a, "inv", true);
  const std::int64_t n = m.problem.rows;
  return solve_impl(
      a, eye(n, std::nullopt, a.dtype()).to(a.device()).expand(a.shape()),
      "inv");
}

namespace {

Slogdet slogdet_impl(const Tensor& a_in, const char* op) {
  const Tensor a = floating(a_in, op);
  const Matrices m = matrices(a, op, true);
  Slogdet out{empty(m.batch, a.dtype(), a.device()),
              empty(m.batch, real_of(a.dtype()), a.device())};
  if (m.problem.count > 0)
    ops::backend_of(a).slogdet(m.problem, a, out.sign, out.logabsdet);
  return out;
}

}  // namespace

Slogdet slogdet(const Tensor& a) { return slogdet_impl(a, "slogdet"); }

// sign * exp(log|det|), as NumPy computes it: the product of the pivots
// would overflow where the logarithm does not.
Tensor det(const Tensor& a) {
  const Slogdet s = slogdet_impl(a, "det");
  return mul(s.sign, exp(s.logabsdet));
}

}  // namespace tessel::linalg

// Matrix decompositions and the solvers built on them (NumPy's and
// PyTorch's linalg names), over the last two axes of f32, f64, c64 or
// c128 tensors with any leading batch axes. f16/bf16 compute in f32 and
// give f32; integers and bool are E2201. For complex matrices the
// transposes below are conjugate transposes (^H), "symmetric" reads
// Hermitian, and eigenvalues, singular values and log|det| are real.
// The CPU engine is LAPACK (docs/ops.md).
// A matrix the method cannot handle (singular for solve and inv, not
// positive definite for cholesky, no convergence) is E2401 naming the
// matrix's batch position.
#pragma once

#include <string_view>

#include "tessel/core/tensor.hpp"

namespace tessel::linalg {

// L with a = L L^H (lower triangular), or U = L^H with a = U^H U when
// `upper`. Only the lower triangle of a is read.
Tensor cholesky(const Tensor& a, bool upper = false);

// a = Q R with Q's columns orthonormal (unitary for complex a): "reduced" gives
// Q (..., m, k) and R (..., k, n) with k = min(m, n), "complete" Q (..., m, m)
// and R (..., m, n).
struct QR {
  Tensor q, r;
};
QR qr(const Tensor& a, std::string_view mode = "reduced");

// The eigenvalues of a symmetric (Hermitian) a, ascending and real, and
// the eigenvectors as the columns of `vectors` (only the lower triangle
// of a is read).
struct Eigh {
  Tensor values, vectors;
};
Eigh eigh(const Tensor& a);
Tensor eigvalsh(const Tensor& a);

// a = U diag(S) Vh with S real and descending (Vh = V^H); `full_matrices`
// gives square U and Vh.
struct SVD {
  Tensor u, s, vh;
};
SVD svd(const Tensor& a, bool full_matrices = true);
Tensor svdvals(const Tensor& a);

// x with a x = b, for b (..., n, k) or a vector b (..., n); batch axes
// broadcast.
Tensor solve(const Tensor& a, const Tensor& b);
Tensor inv(const Tensor& a);

// The determinant, and its sign and log |det| (sign 0 and -inf for a
// singular matrix), from the LU factorisation. A complex matrix's sign is
// the unit-modulus det / |det|, complex; log|det| is real.
Tensor det(const Tensor& a);
struct Slogdet {
  Tensor sign, logabsdet;
};
Slogdet slogdet(const Tensor& a);

}  // namespace tessel::linalg

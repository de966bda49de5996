// Matrix decompositions through LAPACK (decompositions.cpp). Inputs and
// outputs are contiguous row-major batches of f32 or f64; `status` (i64,
// one per matrix) receives LAPACK's INFO for the op layer to report.
#pragma once

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// sign and log|det| of n x n matrices (b.rows = b.cols = n).
void slogdet(const MatrixBatch& b, const KernelInput& a,
             const KernelOutput& sign, const KernelOutput& logabs);
// x = a^-1 rhs for n x n a (b.rows = n) and n x k rhs (b.cols = k).
void solve(const MatrixBatch& b, const KernelInput& a, const KernelInput& rhs,
           const KernelOutput& x, const KernelOutput& status);
// Lower-triangular l with a = l l^T.
void cholesky(const MatrixBatch& b, const KernelInput& a, const KernelOutput& l,
              const KernelOutput& status);
// a = q r, reduced or complete.
void qr(const MatrixBatch& b, const KernelInput& a, const KernelOutput& q,
        const KernelOutput& r, bool complete);
// Ascending eigenvalues and (when `vectors` is defined) eigenvectors as
// columns of a symmetric matrix, from its lower triangle.
void eigh(const MatrixBatch& b, const KernelInput& a,
          const KernelOutput& values, const KernelOutput& vectors,
          const KernelOutput& status);
// a = u diag(s) vh; u and vh undefined for the values only.
void svd(const MatrixBatch& b, const KernelInput& a, const KernelOutput& u,
         const KernelOutput& s, const KernelOutput& vh, bool full,
         const KernelOutput& status);

}  // namespace tessel::cpu

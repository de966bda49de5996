// Matrix decompositions on the CPU through LAPACK. Each matrix of a batch
// is copied into a column-major scratch buffer (LAPACK's layout), factored
// there and copied back row-major: the O(n^2) copies are small beside the
// O(n^3) factorisations, and every LAPACK call then has its textbook
// meaning. Matrices run one after another: the LAPACK behind Debian's
// liblapack.so.3 (netlib's or OpenBLAS's, by the alternatives system)
// decides its own threading. Complex matrices take LAPACK's c/z routines
// through the same templates; their eigenvalues, singular values and
// log|det| are real (the component type).
#include "backends/cpu/decomposition_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "backends/cpu/lapack.hpp"
#include "core/check.hpp"
#include "tessel/core/convert.hpp"

namespace tessel::cpu {

namespace {

// LAPACK's leading dimensions must be at least 1, also for empty matrices.
int ld(std::int64_t extent) {
  return static_cast<int>(std::max<std::int64_t>(extent, 1));
}

// col[j * ldc + i] = row[i * n + j] for an m x n matrix.
template <class T>
void to_column_major(const T* row, std::int64_t m, std::int64_t n, T* col,
                     std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) col[j * ldc + i] = row[i * n + j];
}

template <class T>
void to_row_major(const T* col, std::int64_t m, std::int64_t n,
                  std::int64_t ldc, T* row) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) row[i * n + j] = col[j * ldc + i];
}

template <class T>
void identity(T* row, std::int64_t n) {
  std::fill(row, row + n * n, T(0));
  for (std::int64_t i = 0; i < n; ++i) row[i * n + i] = T(1);
}

// The real type of T's parts (T itself for a real T).
template <class T>
struct component {
  using type = T;
};
template <class R>
struct component<std::complex<R>> {
  using type = R;
};
template <class T>
using component_t = typename component<T>::type;

// The workspace size LAPACK asks for (its lwork = -1 query answer, which
// the complex routines return in a complex word).
template <class T>
int workspace_size(T query) {
  return std::max(1, static_cast<int>(std::real(query)));
}

// The op layer hands the kernels f32, f64, c64 or c128 only.
template <class F>
void dispatch_lapack(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F64: f.template operator()<double>(); return;
    case DType::C64: f.template operator()<std::complex<float>>(); return;
    case DType::C128: f.template operator()<std::complex<double>>(); return;
    default: f.template operator()<float>(); return;
  }
}

}  // namespace

void slogdet(const MatrixBatch& b, const KernelInput& a,
             const KernelOutput& sign, const KernelOutput& logabs) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t n = b.rows;
    std::vector<T> col(
        static_cast<std::size_t>(std::max<std::int64_t>(n * n, 1)));
    std::vector<int> pivots(
        static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    for (std::int64_t m = 0; m < b.count; ++m) {
      to_column_major(a.const_data<T>() + m * n * n, n, n, col.data(), n);
      int info = 0;
      if (n > 0)
        lapack::getrf(ld(n), ld(n), col.data(), ld(n), pivots.data(), &info);
      using R = component_t<T>;
      T s = T(1);
      R log_abs = R(0);
      if (info > 0) {  // an exact zero pivot: singular
        s = T(0);
        log_abs = -std::numeric_limits<R>::infinity();
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          const T d = col[static_cast<std::size_t>(i * n + i)];
          const R modulus = std::abs(d);
          // The sign is the product of the pivots' phases d / |d| (+-1
          // for real pivots), each row swap negating it.
          if constexpr (is_complex_v<T>) {
            s *= d / modulus;
          } else if (d < T(0)) {
            s = -s;
          }
          if (pivots[static_cast<std::size_t>(i)] != i + 1) s = -s;
          log_abs += std::log(modulus);
        }
        if (std::isnan(log_abs)) s = T(std::numeric_limits<R>::quiet_NaN());
      }
      sign.data<T>()[m] = s;
      logabs.data<R>()[m] = log_abs;
    }
  });
}

void solve(const MatrixBatch& b, const KernelInput& a, const KernelInput& rhs,
           const KernelOutput& x, const KernelOutput& status) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t n = b.rows, k = b.cols;
    std::vector<T> lu(
        static_cast<std::size_t>(std::max<std::int64_t>(n * n, 1)));
    std::vector<T> cols(
        static_cast<std::size_t>(std::max<std::int64_t>(n * k, 1)));
    std::vector<int> pivots(
        static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    for (std::int64_t m = 0; m < b.count; ++m) {
      int info = 0;
      to_column_major(a.const_data<T>() + m * n * n, n, n, lu.data(), n);
      to_column_major(rhs.const_data<T>() + m * n * k, n, k, cols.data(), n);
      if (n > 0) {
        lapack::getrf(ld(n), ld(n), lu.data(), ld(n), pivots.data(), &info);
        if (info == 0 && k > 0) {
          lapack::getrs(ld(n), static_cast<int>(k), lu.data(), ld(n),
                        pivots.data(), cols.data(), ld(n), &info);
        }
      }
      status.data<std::int64_t>()[m] = info;
      to_row_major(cols.data(), n, k, n, x.data<T>() + m * n * k);
    }
  });
}

void cholesky(const MatrixBatch& b, const KernelInput& a, const KernelOutput& l,
              const KernelOutput& status) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t n = b.rows;
    std::vector<T> col(
        static_cast<std::size_t>(std::max<std::int64_t>(n * n, 1)));
    for (std::int64_t m = 0; m < b.count; ++m) {
      to_column_major(a.const_data<T>() + m * n * n, n, n, col.data(), n);
      int info = 0;
      if (n > 0) lapack::potrf_lower(ld(n), col.data(), ld(n), &info);
      status.data<std::int64_t>()[m] = info;
      T* out = l.data<T>() + m * n * n;
      to_row_major(col.data(), n, n, n, out);
      // potrf leaves the strict upper triangle as it found it.
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = i + 1; j < n; ++j) out[i * n + j] = T(0);
    }
  });
}

void qr(const MatrixBatch& b, const KernelInput& a, const KernelOutput& q,
        const KernelOutput& r, bool complete) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t rows = b.rows, cols = b.cols;
    const std::int64_t k = std::min(rows, cols);
    const std::int64_t q_cols = complete ? rows : k;
    const std::int64_t r_rows = complete ? rows : k;
    // Room for the reflectors and for the q_cols columns of Q.
    const std::int64_t width = std::max(cols, q_cols);
    std::vector<T> work_a(
        static_cast<std::size_t>(std::max<std::int64_t>(rows * width, 1)));
    std::vector<T> tau(static_cast<std::size_t>(std::max<std::int64_t>(k, 1)));
    for (std::int64_t m = 0; m < b.count; ++m) {
      T* q_out = q.data<T>() + m * rows * q_cols;
      T* r_out = r.data<T>() + m * r_rows * cols;
      to_column_major(a.const_data<T>() + m * rows * cols, rows, cols,
                      work_a.data(), rows);
      int info = 0;
      if (k > 0) {
        T query{};
        lapack::geqrf(ld(rows), static_cast<int>(cols), work_a.data(), ld(rows),
                      tau.data(), &query, -1, &info);
        std::vector<T> work(static_cast<std::size_t>(workspace_size(query)));
        lapack::geqrf(ld(rows), static_cast<int>(cols), work_a.data(), ld(rows),
                      tau.data(), work.data(), static_cast<int>(work.size()),
                      &info);
      }
      // R: the upper triangle of the factored matrix (zeros below, and in
      // the rows past k of the complete form).
      for (std::int64_t i = 0; i < r_rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j)
          r_out[i * cols + j] =
              (i <= j && i < k) ? work_a[static_cast<std::size_t>(j * rows + i)]
                                : T(0);
      if (k == 0) {
        // No reflectors: Q is the identity (complete) or has no columns.
        if (complete) identity(q_out, rows);
        continue;
      }
      T query{};
      lapack::orgqr(ld(rows), static_cast<int>(q_cols), static_cast<int>(k),
                    work_a.data(), ld(rows), tau.data(), &query, -1, &info);
      std::vector<T> work(static_cast<std::size_t>(workspace_size(query)));
      lapack::orgqr(ld(rows), static_cast<int>(q_cols), static_cast<int>(k),
                    work_a.data(), ld(rows), tau.data(), work.data(),
                    static_cast<int>(work.size()), &info);
      to_row_major(work_a.data(), rows, q_cols, rows, q_out);
    }
  });
}

void eigh(const MatrixBatch& b, const KernelInput& a,
          const KernelOutput& values, const KernelOutput& vectors,
          const KernelOutput& status) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t n = b.rows;
    const char job = vectors.defined() ? 'V' : 'N';
    std::vector<T> col(
        static_cast<std::size_t>(std::max<std::int64_t>(n * n, 1)));
    for (std::int64_t m = 0; m < b.count; ++m) {
      to_column_major(a.const_data<T>() + m * n * n, n, n, col.data(), n);
      int info = 0;
      using R = component_t<T>;
      R* w = values.data<R>() + m * n;
      if (n > 0) {
        T query{};
        int iquery = 0;
        if constexpr (is_complex_v<T>) {
          R rquery{};
          lapack::heevd(job, ld(n), col.data(), ld(n), w, &query, -1, &rquery,
                        -1, &iquery, -1, &info);
          std::vector<T> work(static_cast<std::size_t>(workspace_size(query)));
          std::vector<R> rwork(
              static_cast<std::size_t>(workspace_size(rquery)));
          std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iquery)));
          lapack::heevd(job, ld(n), col.data(), ld(n), w, work.data(),
                        static_cast<int>(work.size()), rwork.data(),
                        static_cast<int>(rwork.size()), iwork.data(),
                        static_cast<int>(iwork.size()), &info);
        } else {
          lapack::syevd(job, ld(n), col.data(), ld(n), w, &query, -1, &iquery,
                        -1, &info);
          std::vector<T> work(static_cast<std::size_t>(workspace_size(query)));
          std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iquery)));
          lapack::syevd(job, ld(n), col.data(), ld(n), w, work.data(),
                        static_cast<int>(work.size()), iwork.data(),
                        static_cast<int>(iwork.size()), &info);
        }
      }
      status.data<std::int64_t>()[m] = info;
      if (vectors.defined())
        to_row_major(col.data(), n, n, n, vectors.data<T>() + m * n * n);
    }
  });
}

void svd(const MatrixBatch& b, const KernelInput& a, const KernelOutput& u,
         const KernelOutput& s, const KernelOutput& vh, bool full,
         const KernelOutput& status) {
  dispatch_lapack(a.dtype(), [&]<class T>() {
    const std::int64_t rows = b.rows, cols = b.cols;
    const std::int64_t k = std::min(rows, cols);
    const bool vectors = u.defined();
    const char job = !vectors ? 'N' : full ? 'A' : 'S';
    const std::int64_t u_cols = full ? rows : k;
    const std::int64_t v_rows = full ? cols : k;
    std::vector<T> col(
        static_cast<std::size_t>(std::max<std::int64_t>(rows * cols, 1)));
    std::vector<T> u_col(static_cast<std::size_t>(
        vectors ? std::max<std::int64_t>(rows * u_cols, 1) : 1));
    std::vector<T> vt_col(static_cast<std::size_t>(
        vectors ? std::max<std::int64_t>(v_rows * cols, 1) : 1));
    std::vector<int> iwork(
        static_cast<std::size_t>(std::max<std::int64_t>(8 * k, 1)));
    // The complex routines' real workspace has no size query: these are
    // the bounds gesdd's documentation states (LAPACK 3.7 and later; 7k
    // for the values only covers the older ones too).
    using R = component_t<T>;
    const std::int64_t big = std::max(rows, cols);
    const std::int64_t rwork_size =
        !is_complex_v<T> ? 1
        : !vectors       ? std::max<std::int64_t>(7 * k, 1)
                   : std::max(5 * k * k + 5 * k, 2 * big * k + 2 * k * k + k);
    std::vector<R> rwork(static_cast<std::size_t>(rwork_size));
    const auto call = [&](T* a_col, R* s_out, T* work, int lwork, int* info) {
      if constexpr (is_complex_v<T>) {
        lapack::gesdd(job, static_cast<int>(rows), static_cast<int>(cols),
                      a_col, ld(rows), s_out, u_col.data(), ld(rows),
                      vt_col.data(), ld(v_rows), work, lwork, rwork.data(),
                      iwork.data(), info);
      } else {
        lapack::gesdd(job, static_cast<int>(rows), static_cast<int>(cols),
                      a_col, ld(rows), s_out, u_col.data(), ld(rows),
                      vt_col.data(), ld(v_rows), work, lwork, iwork.data(),
                      info);
      }
    };
    for (std::int64_t m = 0; m < b.count; ++m) {
      int info = 0;
      R* s_out = s.data<R>() + m * k;
      if (k == 0) {
        if (vectors) {
          if (full) {
            identity(u.data<T>() + m * rows * rows, rows);
            identity(vh.data<T>() + m * cols * cols, cols);
          }
        }
        status.data<std::int64_t>()[m] = 0;
        continue;
      }
      to_column_major(a.const_data<T>() + m * rows * cols, rows, cols,
                      col.data(), rows);
      T query{};
      call(col.data(), s_out, &query, -1, &info);
      std::vector<T> work(static_cast<std::size_t>(workspace_size(query)));
      call(col.data(), s_out, work.data(), static_cast<int>(work.size()),
           &info);
      status.data<std::int64_t>()[m] = info;
      if (vectors) {
        to_row_major(u_col.data(), rows, u_cols, ld(rows),
                     u.data<T>() + m * rows * u_cols);
        to_row_major(vt_col.data(), v_rows, cols, ld(v_rows),
                     vh.data<T>() + m * v_rows * cols);
      }
    }
  });
}

}  // namespace tessel::cpu

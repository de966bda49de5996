#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/norm_kernels.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

template <class T>
const T* pointer_or_null(const KernelInput& t) {
  return t.defined() ? t.const_data<T>() : nullptr;
}

template <class T>
T* mutable_or_null(const KernelOutput& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// f64 rows: the same algorithm in double.
void normalize_row_f64(const NormRows& p, const double* x, double* y,
                       const double* w, const double* b, double* mean_out,
                       double* rstd_out) {
  const auto n = static_cast<double>(p.n);
  double mean = 0.0, var = 0.0;
  if (p.kind == simd::NormKind::Layer) {
    for (std::int64_t i = 0; i < p.n; ++i) mean += x[i];
    mean /= n;
    for (std::int64_t i = 0; i < p.n; ++i) var += (x[i] - mean) * (x[i] - mean);
  } else {
    for (std::int64_t i = 0; i < p.n; ++i) var += x[i] * x[i];
  }
  const double rstd = 1.0 / std::sqrt(var / n + p.eps);
  for (std::int64_t i = 0; i < p.n; ++i) {
    const std::int64_t k = i / p.segment;
    y[i] = (x[i] - mean) * rstd * (w ? w[k] : 1.0) + (b ? b[k] : 0.0);
  }
  *mean_out = mean;
  *rstd_out = rstd;
}

// Runs row(r, set) for every row over the pool, where `set` is the offset
// of the row's weight/bias set.
template <class Row>
void each_row(const NormRows& p, Row row) {
  const std::int64_t set_size = p.n / p.segment;
  const std::int64_t grain =
      std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(p.n, 1));
  parallel_for(0, p.rows, grain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r)
      row(r, (r % p.weight_period) * set_size);
  });
}

}  // namespace

void normalize_rows(const NormRows& p, const KernelInput& x,
                    const KernelOutput& y, const KernelInput& weight,
                    const KernelInput& bias, const KernelOutput& mean,
                    const KernelOutput& rstd) {
  if (x.dtype() == DType::F64) {
    const double* xs = x.const_data<double>();
    double* ys = mutable_or_null<double>(y);
    const double* w = pointer_or_null<double>(weight);
    const double* b = pointer_or_null<double>(bias);
    double* m = mutable_or_null<double>(mean);
    double* r = mutable_or_null<double>(rstd);
    each_row(p, [&](std::int64_t row, std::int64_t set) {
      double mv, rv;
      normalize_row_f64(p, xs + row * p.n, ys + row * p.n,
                        w ? w + set : nullptr, b ? b + set : nullptr, &mv, &rv);
      if (m) m[row] = mv;
      if (r) r[row] = rv;
    });
    return;
  }
  const simd::FloatStorage storage = float_storage(x.dtype());
  const int size = element_size(x.dtype());
  const char* xs = x.data<char>();
  char* ys = base_pointer(y);
  const float* w = pointer_or_null<float>(weight);
  const float* b = pointer_or_null<float>(bias);
  float* m = mutable_or_null<float>(mean);
  float* r = mutable_or_null<float>(rstd);
  each_row(p, [&](std::int64_t row, std::int64_t set) {
    const simd::NormAffine affine{w ? w + set : nullptr, b ? b + set : nullptr,
                                  p.segment};
    const std::int64_t offset = row * p.n * size;
    const simd::RowStats s =
        simd::normalize_row(p.kind, storage, xs + offset, ys + offset, p.n,
                            static_cast<float>(p.eps), affine);
    if (m) m[row] = s.mean;
    if (r) r[row] = s.rstd;
  });
}

namespace {

// normalize_row_backward's formula in double, for f64 rows.
void normalize_row_backward_f64(NormKind kind, const double* x,
                                const double* dy, const double* w,
                                std::int64_t n, double mean, double rstd,
                                double* dx, double* dw, double* db) {
  double dot = 0.0, total = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double gh = dy[i] * (w ? w[i] : 1.0);
    dot += gh * (x[i] - mean) * rstd;
    total += gh;
  }
  const double c1 = dot / static_cast<double>(n);
  const double c2 =
      kind == NormKind::Layer ? total / static_cast<double>(n) : 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double xhat = (x[i] - mean) * rstd;
    const double gh = dy[i] * (w ? w[i] : 1.0);
    dx[i] = rstd * (gh - xhat * c1 - c2);
    if (dw) dw[i] += dy[i] * xhat;
    if (db) db[i] += dy[i];
  }
}

template <class T>
void rows_backward(const NormRows& p, const KernelInput& x,
                   const KernelInput& weight, const KernelInput& mean,
                   const KernelInput& rstd, const KernelInput& dy,
                   const KernelOutput& dx, const KernelOutput& dweight,
                   const KernelOutput& dbias) {
  const T* xs = x.const_data<T>();
  const T* gs = dy.const_data<T>();
  const T* w = pointer_or_null<T>(weight);
  const T* m = pointer_or_null<T>(mean);
  const T* r = rstd.const_data<T>();
  T* out = dx.data<T>();
  // The weight and bias gradients sum over all rows: each block of rows
  // sums into its own partials, added up afterwards (no shared writes).
  // Four blocks a thread balance uneven rows without many partials.
  const bool sums = dweight.defined() || dbias.defined();
  const std::int64_t blocks =
      sums ? std::clamp<std::int64_t>(p.rows, 1, 4 * get_num_threads()) : 1;
  const std::int64_t per_block = (p.rows + blocks - 1) / blocks;
  std::vector<T> partial_w(dweight.defined() ? blocks * p.n : 0, T(0));
  std::vector<T> partial_b(dbias.defined() ? blocks * p.n : 0, T(0));
  parallel_for(0, blocks, 1, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t blk = lo; blk < hi; ++blk) {
      T* pw = partial_w.empty() ? nullptr : partial_w.data() + blk * p.n;
      T* pb = partial_b.empty() ? nullptr : partial_b.data() + blk * p.n;
      const std::int64_t end = std::min(p.rows, (blk + 1) * per_block);
      for (std::int64_t row = blk * per_block; row < end; ++row) {
        const std::int64_t at = row * p.n;
        const T mv = m ? m[row] : T(0);
        if constexpr (std::is_same_v<T, double>) {
          normalize_row_backward_f64(p.kind, xs + at, gs + at, w, p.n, mv,
                                     r[row], out + at, pw, pb);
        } else {
          simd::normalize_row_backward(p.kind, xs + at, gs + at, w, p.n, mv,
                                       r[row], out + at, pw, pb);
        }
      }
    }
  });
  auto total = [&](const std::vector<T>& partial, const KernelOutput& to) {
    if (!to.defined()) return;
    T* t = to.data<T>();
    std::fill_n(t, p.n, T(0));
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const T* part = partial.data() + blk * p.n;
      for (std::int64_t i = 0; i < p.n; ++i) t[i] += part[i];
    }
  };
  total(partial_w, dweight);
  total(partial_b, dbias);
}

}  // namespace

void normalize_rows_backward(const NormRows& p, const KernelInput& x,
                             const KernelInput& weight, const KernelInput& mean,
                             const KernelInput& rstd, const KernelInput& dy,
                             const KernelOutput& dx,
                             const KernelOutput& dweight,
                             const KernelOutput& dbias) {
  if (x.dtype() == DType::F64) {
    rows_backward<double>(p, x, weight, mean, rstd, dy, dx, dweight, dbias);
  } else {
    rows_backward<float>(p, x, weight, mean, rstd, dy, dx, dweight, dbias);
  }
}

}  // namespace tessel::cpu

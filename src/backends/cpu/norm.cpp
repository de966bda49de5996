#include <cmath>

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

}  // namespace tessel::cpu

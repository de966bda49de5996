#include <algorithm>
#include <cmath>

#include "backends/cpu/hadamard_kernels.hpp"
#include "backends/cpu/simd/hadamard_simd.hpp"
#include "core/check.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

// The f64 transform: the same butterflies as the f32 kernel, in place on y.
void hadamard_run_f64(const double* x, double* y, std::int64_t n) {
  std::copy(x, x + n, y);
  for (std::int64_t h = 1; h < n; h *= 2) {
    for (std::int64_t base = 0; base < n; base += 2 * h) {
      for (std::int64_t j = base; j < base + h; ++j) {
        const double a = y[j], b = y[j + h];
        y[j] = a + b;
        y[j + h] = a - b;
      }
    }
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(n));
  for (std::int64_t i = 0; i < n; ++i) y[i] *= scale;
}

}  // namespace

void hadamard_runs(std::int64_t block, const KernelInput& x,
                   const KernelOutput& y) {
  const std::int64_t runs = x.numel() / block;
  // A chunk of at least 16 Ki values: a thread's share is worth the team.
  const std::int64_t grain = std::max<std::int64_t>(1, 16384 / block);
  if (x.dtype() == DType::F32) {
    const float* xs = x.const_data<float>();
    float* ys = y.data<float>();
    parallel_for(0, runs, grain, [&](std::int64_t lo, std::int64_t hi) {
      simd::hadamard_runs(xs + lo * block, ys + lo * block, hi - lo, block);
    });
    return;
  }
  TESSEL_CHECK(x.dtype() == DType::F64, BadDType, "hadamard_transform",
               "the kernel takes f32 or f64, got {}", dtype_name(x.dtype()));
  const double* xs = x.const_data<double>();
  double* ys = y.data<double>();
  parallel_for(0, runs, grain, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t r = lo; r < hi; ++r) {
      hadamard_run_f64(xs + r * block, ys + r * block, block);
    }
  });
}

}  // namespace tessel::cpu

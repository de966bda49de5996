#include <algorithm>
#include <cmath>

#include "backends/cpu/hadamard_butterflies.hpp"
#include "backends/cpu/hadamard_kernels.hpp"
#include "backends/cpu/simd/hadamard_simd.hpp"
#include "core/check.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

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
    const double scale = 1.0 / std::sqrt(static_cast<double>(block));
    for (std::int64_t r = lo; r < hi; ++r) {
      hadamard_run_serial(xs + r * block, ys + r * block, block, scale);
    }
  });
}

}  // namespace tessel::cpu

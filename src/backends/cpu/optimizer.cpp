// Optimiser updates: one pass over each parameter, split over the pool.
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/simd/optimizer_simd.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void adam_update(const AdamStep& s, const KernelOutput& param,
                 const KernelInput& grad, const KernelOutput& exp_avg,
                 const KernelOutput& exp_avg_sq) {
  float* p = param.data<float>();
  const float* g = grad.data<float>();
  float* m = exp_avg.data<float>();
  float* v = exp_avg_sq.data<float>();
  // Memory-bound (16 bytes read, 12 written per element): chunks of 16k
  // elements keep small parameters on one thread.
  parallel_for(0, param.numel(), 16384, [&](std::int64_t lo, std::int64_t hi) {
    simd::adam_update(s, hi - lo, p + lo, g + lo, m + lo, v + lo);
  });
}

}  // namespace tessel::cpu

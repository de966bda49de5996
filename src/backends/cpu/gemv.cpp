#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/gemm_kernels.hpp"
#include "backends/cpu/simd/gemv_simd.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void gemv(const KernelInput& x, const void* w, DType w_dtype, std::int64_t ldw,
          std::int64_t n, const KernelOutput& y) {
  const std::int64_t k = x.numel();
  const simd::FloatStorage storage = float_storage(w_dtype);
  const auto* base = static_cast<const char*>(w);
  const int size = element_size(w_dtype);
  float* out = y.data<float>();
  parallel_for_dynamic(0, n, streamed_chunk_rows(ldw * size),
                       [&](std::int64_t lo, std::int64_t hi) {
                         simd::gemv_rows(storage, base + lo * ldw * size, ldw,
                                         hi - lo, k, x.const_data<float>(),
                                         out + lo);
                       });
}

}  // namespace tessel::cpu

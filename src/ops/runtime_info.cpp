// runtime_info() lives in the op layer because it reports the backends'
// engines (core cannot see them).
#include "backends/backend.hpp"
#include "tessel/core/build_info.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.build = build_info();
  info.simd = simd_info();
  info.num_threads = get_num_threads();
  info.devices = available_devices();
  // The engines matmul picks, by measurement (docs/gemm.md).
  info.gemm_engine = backend_for(Device::cpu(), "runtime_info").describe() +
                     ": sgemm for f32, matmul primitive for bf16/int8/batches, "
                     "tessel GEMV for one-row products";
  return info;
}

}  // namespace tessel

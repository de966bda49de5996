// runtime_info() lives in the op layer because it reports the backends'
// engines (core cannot see them).
#include "backends/cpu/onednn.hpp"
#include "tessel/core/build_info.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel {

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.build = build_info();
  info.simd = simd_info();
  info.num_threads = get_num_threads();
  info.devices = available_devices();
  info.gemm_engine = cpu::onednn::describe();
  return info;
}

}  // namespace tessel

// What this build is and what the machine under it offers (`tessel info`).
#pragma once

#include <string>
#include <vector>

#include "tessel/core/device.hpp"

namespace tessel {

struct BuildInfo {
  std::string version;     // "0.1.0"
  std::string build_type;  // "Release", "Debug", ...
  std::string compiler;    // "GCC 12.2.0"
  bool sanitizers = false;
};

struct SimdInfo {
  // Highway targets this CPU supports among those compiled into tessel,
  // best first (e.g. "AVX3_DL", "AVX3", "AVX2", ...).
  std::vector<std::string> supported;
  std::string dispatched;  // the one runtime dispatch picks
};

struct RuntimeInfo {
  BuildInfo build;
  SimdInfo simd;
  int num_threads = 1;
  std::vector<Device> devices;
  std::string gemm_engine;  // the GEMM library matmul uses, its ISA and runtime
};

BuildInfo build_info();
SimdInfo simd_info();
RuntimeInfo runtime_info();

}  // namespace tessel

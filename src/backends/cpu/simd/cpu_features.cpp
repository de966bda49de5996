#include "backends/cpu/simd/cpu_features.hpp"

namespace tessel::cpu::simd {

std::atomic<unsigned> withheld_cpu_features{0};

}  // namespace tessel::cpu::simd

// The Walsh-Hadamard butterflies of one run, one value at a time: the f64
// kernel (hadamard.cpp), and the f32 kernel's runs shorter than a vector
// (simd/hadamard_simd.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessel::cpu {

// y = x H * scale for one run of n values (n a power of two, H
// Sylvester's): stages of stride 1, 2, 4, ... taking (a, b) to
// (a + b, a - b), then the scale.
template <class T>
inline void hadamard_run_serial(const T* x, T* y, std::int64_t n, T scale) {
  std::copy(x, x + n, y);
  for (std::int64_t h = 1; h < n; h *= 2) {
    for (std::int64_t base = 0; base < n; base += 2 * h) {
      for (std::int64_t j = base; j < base + h; ++j) {
        const T a = y[j], b = y[j + h];
        y[j] = a + b;
        y[j + h] = a - b;
      }
    }
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] *= scale;
}

}  // namespace tessel::cpu

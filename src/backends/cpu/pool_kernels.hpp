// Pooling over any number of spatial axes, on contiguous channels-first
// data.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// y (N, C, O...) from x (N, C, S...). `indices` (i64, y's shape, may be
// undefined) receives the flat index of each maximum within its (n, c)
// plane, row-major.
void max_pool(const KernelInput& x, const KernelOutput& y,
              const KernelOutput& indices, const PoolGeometry& g);
void avg_pool(const KernelInput& x, const KernelOutput& y,
              const PoolGeometry& g);
// dx (f32 or f64, zero-filled, the input's channels-first shape) += the
// gradient of avg_pool for dy (same dtype, contiguous).
void avg_pool_backward(const KernelInput& dy, const KernelOutput& dx,
                       const PoolGeometry& g);

}  // namespace tessel::cpu

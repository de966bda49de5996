// Pooling over any number of spatial axes, on contiguous channels-first
// data.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

struct PoolGeometry {
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> dilation;
  std::vector<std::int64_t> pad_begin;
  // Padding after the input that counts as "pad" for count_include_pad;
  // windows that reach further (ceil mode) never count those positions.
  std::vector<std::int64_t> pad_end;
  bool count_include_pad = false;
};

// y (N, C, O...) from x (N, C, S...). `indices` (i64, y's shape, may be
// undefined) receives the flat index of each maximum within its (n, c)
// plane, row-major.
void max_pool(const Tensor& x, const Tensor& y, const Tensor& indices,
              const PoolGeometry& g);
void avg_pool(const Tensor& x, const Tensor& y, const PoolGeometry& g);
// dx (f32 or f64, zero-filled, the input's channels-first shape) += the
// gradient of avg_pool for dy (same dtype, contiguous).
void avg_pool_backward(const Tensor& dy, const Tensor& dx,
                       const PoolGeometry& g);

}  // namespace tessel::cpu

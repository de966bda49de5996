// Visiting the input positions under a window (pooling, the reference
// convolution), shared by the kernels that slide one.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/cpu/pool_kernels.hpp"

namespace tessel::cpu {

// Visits the window positions of output position `out` (per spatial axis),
// calling f(flat input index or -1 when outside the input, inside_pad)
// where inside_pad says the position lies in [-pad_begin, in + pad_end).
template <class F>
inline void for_window(const std::vector<std::int64_t>& in,
                       const std::vector<std::int64_t>& out,
                       const PoolGeometry& g, F&& f) {
  const std::size_t r = in.size();
  std::vector<std::int64_t> k(r, 0);
  for (;;) {
    std::int64_t flat = 0;
    bool inside = true;
    bool in_pad = true;
    for (std::size_t d = 0; d < r; ++d) {
      const std::int64_t i =
          out[d] * g.stride[d] - g.pad_begin[d] + k[d] * g.dilation[d];
      inside = inside && i >= 0 && i < in[d];
      in_pad = in_pad && i >= -g.pad_begin[d] && i < in[d] + g.pad_end[d];
      flat = flat * in[d] + i;
    }
    f(inside ? flat : -1, in_pad);
    std::size_t d = r;
    while (d-- > 0) {
      if (++k[d] < g.kernel[d]) break;
      k[d] = 0;
    }
    if (d == static_cast<std::size_t>(-1)) return;
  }
}

}  // namespace tessel::cpu

#include <cmath>
#include <limits>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/pool_kernels.hpp"
#include "backends/cpu/window.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

template <class Body>
void for_each_output(const KernelInput& x, const KernelInput& y, Body&& body) {
  const std::size_t r = x.shape().size() - 2;
  std::vector<std::int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<std::int64_t> out_extent(y.shape().begin() + 2, y.shape().end());
  std::int64_t in_plane = 1, out_plane = 1;
  for (auto e : in) in_plane *= e;
  for (auto e : out_extent) out_plane *= e;
  const std::int64_t planes = x.shape()[0] * x.shape()[1];
  parallel_for(0, planes, 1, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> o(r);
    for (std::int64_t p = lo; p < hi; ++p) {
      for (std::int64_t j = 0; j < out_plane; ++j) {
        std::int64_t rest = j;
        for (std::size_t d = r; d-- > 0;) {
          o[d] = rest % out_extent[d];
          rest /= out_extent[d];
        }
        body(p * in_plane, p * out_plane + j, in, o);
      }
    }
  });
}

}  // namespace

void max_pool(const KernelInput& x, const KernelOutput& y,
              const KernelOutput& indices, const PoolGeometry& g) {
  detail::dispatch_element_type(x.dtype(), "max_pool", [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.const_data<T>();
    T* out = y.data<T>();
    auto* idx = indices.defined() ? indices.data<std::int64_t>() : nullptr;
    for_each_output(x, y,
                    [&](std::int64_t base, std::int64_t at, const auto& extent,
                        const auto& o) {
                      C best = std::numeric_limits<C>::lowest();
                      if constexpr (std::numeric_limits<C>::has_infinity)
                        best = -std::numeric_limits<C>::infinity();
                      std::int64_t best_at = -1;
                      bool nan = false;
                      for_window(extent, o, g, [&](std::int64_t i, bool) {
                        if (i < 0 || nan) return;
                        const C v = convert<C>(in[base + i]);
                        if constexpr (std::is_floating_point_v<C>) {
                          if (std::isnan(v)) {
                            best = v;
                            best_at = i;
                            nan = true;
                            return;
                          }
                        }
                        if (best_at < 0 || v > best) {
                          best = v;
                          best_at = i;
                        }
                      });
                      out[at] = convert<T>(best);
                      if (idx) idx[at] = best_at;
                    });
  });
}

void avg_pool(const KernelInput& x, const KernelOutput& y,
              const PoolGeometry& g) {
  detail::dispatch_element_type(x.dtype(), "avg_pool", [&]<class T>() {
    const T* in = x.const_data<T>();
    T* out = y.data<T>();
    for_each_output(
        x, y,
        [&](std::int64_t base, std::int64_t at, const auto& extent,
            const auto& o) {
          double sum = 0.0;
          std::int64_t inside = 0, padded = 0;
          for_window(extent, o, g, [&](std::int64_t i, bool in_pad) {
            if (i >= 0) {
              sum += static_cast<double>(convert<compute_t<T>>(in[base + i]));
              ++inside;
            }
            if (in_pad) ++padded;
          });
          const std::int64_t count = g.count_include_pad ? padded : inside;
          out[at] =
              convert<T>(count > 0 ? sum / static_cast<double>(count)
                                   : std::numeric_limits<double>::quiet_NaN());
        });
  });
}

void avg_pool_backward(const KernelInput& dy, const KernelOutput& dx,
                       const PoolGeometry& g) {
  detail::dispatch_float_type(dx.dtype(), "avg_pool_backward", [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* grad = dy.const_data<T>();
      T* out = dx.data<T>();
      // Each window hands dy / count to the positions it averaged; planes
      // run in parallel, so no two threads touch one element.
      for_each_output(
          dx, dy,
          [&](std::int64_t base, std::int64_t at, const auto& extent,
              const auto& o) {
            std::int64_t inside = 0, padded = 0;
            for_window(extent, o, g, [&](std::int64_t i, bool in_pad) {
              inside += i >= 0;
              padded += in_pad;
            });
            const std::int64_t count = g.count_include_pad ? padded : inside;
            if (count == 0) return;
            const T share = grad[at] / static_cast<T>(count);
            for_window(extent, o, g, [&](std::int64_t i, bool) {
              if (i >= 0) out[base + i] += share;
            });
          });
    }
  });
}

}  // namespace tessel::cpu

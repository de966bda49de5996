#include <cmath>
#include <limits>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/pool_kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

// Visits the window positions of output position `out` (per spatial axis),
// calling f(flat input index or -1 when outside the input, inside_pad)
// where inside_pad says the position lies in [-pad_begin, in + pad_end).
template <class F>
void for_window(const std::vector<std::int64_t>& in,
                const std::vector<std::int64_t>& out, const PoolGeometry& g,
                F&& f) {
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

template <class Body>
void for_each_output(const Tensor& x, const Tensor& y, Body&& body) {
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

void max_pool(const Tensor& x, const Tensor& y, const Tensor& indices,
              const PoolGeometry& g) {
  detail::dispatch_element_type(x.dtype(), "max_pool", [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.const_data<T>();
    T* out = static_cast<T*>(const_cast<void*>(y.raw_data()));
    auto* idx =
        indices.defined()
            ? static_cast<std::int64_t*>(const_cast<void*>(indices.raw_data()))
            : nullptr;
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

void avg_pool(const Tensor& x, const Tensor& y, const PoolGeometry& g) {
  detail::dispatch_element_type(x.dtype(), "avg_pool", [&]<class T>() {
    const T* in = x.const_data<T>();
    T* out = static_cast<T*>(const_cast<void*>(y.raw_data()));
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

void avg_pool_backward(const Tensor& dy, const Tensor& dx,
                       const PoolGeometry& g) {
  detail::dispatch_float_type(dx.dtype(), "avg_pool_backward", [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* grad = dy.const_data<T>();
      T* out = static_cast<T*>(const_cast<void*>(dx.raw_data()));
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

void conv_reference(const Tensor& x, const Tensor& w, const Tensor& bias,
                    const Tensor& y, const std::vector<std::int64_t>& stride,
                    const std::vector<std::int64_t>& dilation,
                    const std::vector<std::int64_t>& pad_begin,
                    std::int64_t groups) {
  detail::dispatch_float_type(x.dtype(), "conv", [&]<class T>() {
    const T* in = x.const_data<T>();
    const T* wt = w.const_data<T>();
    const T* b = bias.defined() ? bias.const_data<T>() : nullptr;
    T* out = static_cast<T*>(const_cast<void*>(y.raw_data()));
    const std::int64_t batch = x.shape()[0], channels = x.shape()[1];
    const std::int64_t out_channels = y.shape()[1];
    const std::int64_t cg = channels / groups, og = out_channels / groups;
    PoolGeometry g;
    g.kernel.assign(w.shape().begin() + 2, w.shape().end());
    g.stride = stride;
    g.dilation = dilation;
    g.pad_begin = pad_begin;
    g.pad_end.assign(stride.size(), 0);
    std::int64_t in_plane = 1, out_plane = 1, kernel_size = 1;
    for (std::size_t d = 2; d < x.shape().size(); ++d) in_plane *= x.shape()[d];
    for (std::size_t d = 2; d < y.shape().size(); ++d)
      out_plane *= y.shape()[d];
    for (auto k : g.kernel) kernel_size *= k;
    std::vector<std::int64_t> in_extent(x.shape().begin() + 2, x.shape().end());
    std::vector<std::int64_t> out_extent(y.shape().begin() + 2,
                                         y.shape().end());
    parallel_for(
        0, batch * out_channels, 1, [&](std::int64_t lo, std::int64_t hi) {
          std::vector<std::int64_t> o(out_extent.size());
          for (std::int64_t t = lo; t < hi; ++t) {
            const std::int64_t n = t / out_channels, oc = t % out_channels;
            const std::int64_t group = oc / og;
            for (std::int64_t j = 0; j < out_plane; ++j) {
              std::int64_t rest = j;
              for (std::size_t d = o.size(); d-- > 0;) {
                o[d] = rest % out_extent[d];
                rest /= out_extent[d];
              }
              double acc =
                  b ? static_cast<double>(convert<compute_t<T>>(b[oc])) : 0.0;
              for (std::int64_t ic = 0; ic < cg; ++ic) {
                const T* plane =
                    in + (n * channels + group * cg + ic) * in_plane;
                const T* kernel = wt + (oc * cg + ic) * kernel_size;
                std::int64_t kpos = 0;
                for_window(in_extent, o, g, [&](std::int64_t i, bool) {
                  if (i >= 0) {
                    acc +=
                        static_cast<double>(convert<compute_t<T>>(plane[i])) *
                        static_cast<double>(
                            convert<compute_t<T>>(kernel[kpos]));
                  }
                  ++kpos;
                });
              }
              out[t * out_plane + j] = convert<T>(acc);
            }
          }
        });
  });
}

}  // namespace tessel::cpu

namespace tessel::cpu {

void conv_transpose_reference(const Tensor& x, const Tensor& w,
                              const Tensor& bias, const Tensor& y,
                              const std::vector<std::int64_t>& stride,
                              const std::vector<std::int64_t>& dilation,
                              const std::vector<std::int64_t>& pad_begin,
                              std::int64_t groups) {
  detail::dispatch_float_type(x.dtype(), "conv_transpose", [&]<class T>() {
    const T* in = x.const_data<T>();
    const T* wt = w.const_data<T>();
    const T* b = bias.defined() ? bias.const_data<T>() : nullptr;
    T* out = static_cast<T*>(const_cast<void*>(y.raw_data()));
    const std::size_t r = stride.size();
    const std::int64_t batch = x.shape()[0], channels = x.shape()[1];
    const std::int64_t out_channels = y.shape()[1];
    const std::int64_t cg = channels / groups, og = out_channels / groups;
    std::vector<std::int64_t> in_extent(x.shape().begin() + 2, x.shape().end());
    std::vector<std::int64_t> out_extent(y.shape().begin() + 2,
                                         y.shape().end());
    std::vector<std::int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    std::int64_t in_plane = 1, out_plane = 1, kernel_size = 1;
    for (auto e : in_extent) in_plane *= e;
    for (auto e : out_extent) out_plane *= e;
    for (auto e : kernel) kernel_size *= e;
    parallel_for(
        0, batch * out_channels, 1, [&](std::int64_t lo, std::int64_t hi) {
          std::vector<std::int64_t> o(r), k(r);
          for (std::int64_t t = lo; t < hi; ++t) {
            const std::int64_t n = t / out_channels, oc = t % out_channels;
            const std::int64_t group = oc / og, ocg = oc % og;
            for (std::int64_t j = 0; j < out_plane; ++j) {
              std::int64_t rest = j;
              for (std::size_t d = r; d-- > 0;) {
                o[d] = rest % out_extent[d];
                rest /= out_extent[d];
              }
              double acc =
                  b ? static_cast<double>(convert<compute_t<T>>(b[oc])) : 0.0;
              // Output o receives input i through tap k when
              // o + pad_begin == i * stride + k * dilation.
              for (std::int64_t kf = 0; kf < kernel_size; ++kf) {
                std::int64_t kr = kf, flat = 0;
                bool hit = true;
                for (std::size_t d = r; d-- > 0;) {
                  k[d] = kr % kernel[d];
                  kr /= kernel[d];
                }
                for (std::size_t d = 0; d < r && hit; ++d) {
                  const std::int64_t s =
                      o[d] + pad_begin[d] - k[d] * dilation[d];
                  hit = s >= 0 && s % stride[d] == 0 &&
                        s / stride[d] < in_extent[d];
                  flat = flat * in_extent[d] + (hit ? s / stride[d] : 0);
                }
                if (!hit) continue;
                for (std::int64_t ic = 0; ic < cg; ++ic) {
                  const std::int64_t c = group * cg + ic;
                  const double xv = static_cast<double>(convert<compute_t<T>>(
                      in[(n * channels + c) * in_plane + flat]));
                  const double wv = static_cast<double>(convert<compute_t<T>>(
                      wt[(c * og + ocg) * kernel_size + kf]));
                  acc += xv * wv;
                }
              }
              out[t * out_plane + j] = convert<T>(acc);
            }
          }
        });
  });
}

}  // namespace tessel::cpu

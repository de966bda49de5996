// The direct convolutions, accumulating in f64: the engine for f64 and for
// geometries oneDNN refuses, and the reference the oneDNN paths are tested
// against.
#include "backends/cpu/conv_kernels.hpp"
#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/window.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void conv_reference(const KernelInput& x, const KernelInput& w,
                    const KernelInput& bias, const KernelOutput& y,
                    const std::vector<std::int64_t>& stride,
                    const std::vector<std::int64_t>& dilation,
                    const std::vector<std::int64_t>& pad_begin,
                    std::int64_t groups) {
  detail::dispatch_float_type(x.dtype(), "conv", [&]<class T>() {
    const T* in = x.const_data<T>();
    const T* wt = w.const_data<T>();
    const T* b = bias.defined() ? bias.const_data<T>() : nullptr;
    T* out = y.data<T>();
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

void conv_transpose_reference(const KernelInput& x, const KernelInput& w,
                              const KernelInput& bias, const KernelOutput& y,
                              const std::vector<std::int64_t>& stride,
                              const std::vector<std::int64_t>& dilation,
                              const std::vector<std::int64_t>& pad_begin,
                              std::int64_t groups) {
  detail::dispatch_float_type(x.dtype(), "conv_transpose", [&]<class T>() {
    const T* in = x.const_data<T>();
    const T* wt = w.const_data<T>();
    const T* b = bias.defined() ? bias.const_data<T>() : nullptr;
    T* out = y.data<T>();
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

#include "backends/cpu/kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void fill_arange(const KernelOutput& dst, const Scalar& start,
                 const Scalar& step) {
  detail::dispatch_element_type(dst.dtype(), "arange", [&]<class T>() {
    T* out = dst.data<T>();
    const bool exact_int = !is_floating_point(dst.dtype()) &&
                           !start.is_floating_point() &&
                           !step.is_floating_point();
    const auto i0 = start.to<std::int64_t>();
    const auto di = step.to<std::int64_t>();
    const auto d0 = start.to<double>();
    const auto dd = step.to<double>();
    parallel_for(0, dst.numel(), 65536, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) {
        out[i] = exact_int ? convert<T>(i0 + i * di)
                           : convert<T>(d0 + static_cast<double>(i) * dd);
      }
    });
  });
}

void fill_linspace(const KernelOutput& dst, double start, double end) {
  detail::dispatch_element_type(dst.dtype(), "linspace", [&]<class T>() {
    T* out = dst.data<T>();
    const std::int64_t n = dst.numel();
    if (n == 1) {
      out[0] = convert<T>(start);
      return;
    }
    const double step = (end - start) / static_cast<double>(n - 1);
    // Each half is measured from its own end, so both ends are exact and the
    // rounding error is symmetric (PyTorch's scheme).
    const std::int64_t half = n / 2;
    parallel_for(0, n, 65536, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) {
        out[i] =
            convert<T>(i < half ? start + step * static_cast<double>(i)
                                : end - step * static_cast<double>(n - 1 - i));
      }
    });
  });
}

}  // namespace tessel::cpu

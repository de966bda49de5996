#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/gemm_kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void gemm_reference(const KernelInput& a, const KernelInput& b,
                    const KernelOutput& out) {
  detail::dispatch_element_type(a.dtype(), "matmul", [&]<class T>() {
    using C = compute_t<T>;
    using Acc =
        std::conditional_t<std::is_floating_point_v<C>, double, std::uint64_t>;
    const std::int64_t batch = out.shape()[0], m = out.shape()[1],
                       n = out.shape()[2];
    const std::int64_t k = a.shape()[2];
    const auto& sa = a.strides();
    const auto& sb = b.strides();
    const T* pa = a.const_data<T>();
    const T* pb = b.const_data<T>();
    T* pc = out.data<T>();
    parallel_for(
        0, batch * m,
        std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, n * k)),
        [&](std::int64_t lo, std::int64_t hi) {
          std::vector<Acc> row(static_cast<std::size_t>(n));
          for (std::int64_t t = lo; t < hi; ++t) {
            const std::int64_t bi = t / m;
            const std::int64_t i = t % m;
            std::fill(row.begin(), row.end(), Acc{0});
            for (std::int64_t kk = 0; kk < k; ++kk) {
              const auto x = static_cast<Acc>(
                  convert<C>(pa[bi * sa[0] + i * sa[1] + kk * sa[2]]));
              const T* brow = pb + bi * sb[0] + kk * sb[1];
              for (std::int64_t j = 0; j < n; ++j) {
                row[static_cast<std::size_t>(j)] +=
                    x * static_cast<Acc>(convert<C>(brow[j * sb[2]]));
              }
            }
            for (std::int64_t j = 0; j < n; ++j) {
              pc[(bi * m + i) * n + j] =
                  convert<T>(static_cast<C>(row[static_cast<std::size_t>(j)]));
            }
          }
        });
  });
}

}  // namespace tessel::cpu

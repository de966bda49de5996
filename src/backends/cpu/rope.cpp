#include <vector>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/rope_kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

template <class T, class C>
void rope_row(const RopeProblem& p, const T* x, T* y, const C* c, const C* s) {
  const std::int64_t half = p.rotary_dim / 2;
  // Pair k is (a, b) = (2k, 2k+1) interleaved or (k, k + half) half-split.
  const std::int64_t step = p.interleaved ? 2 : 1;
  const std::int64_t second = p.interleaved ? 1 : half;
  for (std::int64_t k = 0; k < half; ++k) {
    const std::int64_t a = k * step, b = a + second;
    const C x1 = convert<C>(x[a]), x2 = convert<C>(x[b]);
    y[a] = convert<T>(x1 * c[k] - x2 * s[k]);
    y[b] = convert<T>(x2 * c[k] + x1 * s[k]);
  }
  for (std::int64_t i = p.rotary_dim; i < p.head_dim; ++i) y[i] = x[i];
}

}  // namespace

void rope(const RopeProblem& p, const KernelInput& x, const KernelOutput& y,
          const KernelInput& cos, const KernelInput& sin) {
  std::int64_t rows = 1;
  for (auto e : p.row_shape) rows *= e;
  detail::dispatch_float_type(x.dtype(), "rope", [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* xs = x.const_data<T>();
    T* ys = y.data<T>();
    const C* cs = cos.const_data<C>();
    const C* ss = sin.const_data<C>();
    const std::size_t rank = p.row_shape.size();
    parallel_for(0, rows, std::max<std::int64_t>(1, 4096 / p.head_dim),
                 [&](std::int64_t lo, std::int64_t hi) {
                   // The table row of row r is its index along each row axis
                   // times the table's stride there: found once for lo, then
                   // advanced like an odometer (a division per axis and row
                   // cost more than rotating a 16-wide head).
                   std::vector<std::int64_t> index(rank);
                   std::int64_t rest = lo, offset = 0;
                   for (std::size_t d = rank; d-- > 0;) {
                     index[d] = rest % p.row_shape[d];
                     rest /= p.row_shape[d];
                     offset += index[d] * p.table_strides[d];
                   }
                   for (std::int64_t r = lo; r < hi; ++r) {
                     rope_row<T, C>(p, xs + r * p.head_dim, ys + r * p.head_dim,
                                    cs + offset, ss + offset);
                     for (std::size_t d = rank; d-- > 0;) {
                       offset += p.table_strides[d];
                       if (++index[d] < p.row_shape[d]) break;
                       offset -= index[d] * p.table_strides[d];
                       index[d] = 0;
                     }
                   }
                 });
  });
}

}  // namespace tessel::cpu

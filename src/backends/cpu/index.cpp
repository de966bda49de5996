#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/index_kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void gather_blocks(const Tensor& src, const std::int64_t* index,
                   std::int64_t count, const Tensor& out,
                   const ReduceShape& s) {
  const auto block =
      static_cast<std::size_t>(s.inner * element_size(src.dtype()));
  const auto* from = static_cast<const char*>(src.raw_data());
  auto* to = static_cast<char*>(const_cast<void*>(out.raw_data()));
  const std::int64_t grain =
      std::max<std::int64_t>(1, 65536 / std::max<std::size_t>(block, 1));
  parallel_for(
      0, s.outer * count, grain, [&](std::int64_t lo, std::int64_t hi) {
        for (std::int64_t t = lo; t < hi; ++t) {
          const std::int64_t a = t / count;
          const std::int64_t i = t % count;
          std::memcpy(
              to + static_cast<std::size_t>(t) * block,
              from + static_cast<std::size_t>(a * s.reduce + index[i]) * block,
              block);
        }
      });
}

namespace {

// Visits every element of `shape` in row-major order, passing its linear
// index and multi-index.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const std::int64_t n = checked_numel(shape);
  Shape index(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, index);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Element offset of `index` in `t` with axis `axis` replaced by `at`.
std::int64_t offset_with(const Tensor& t, const Shape& index, std::size_t axis,
                         std::int64_t at) {
  std::int64_t e = t.storage_offset();
  for (std::size_t d = 0; d < index.size(); ++d) {
    e += (d == axis ? at : index[d]) * t.strides()[d];
  }
  return e;
}

}  // namespace

void gather_elements(const Tensor& x, const Tensor& index, std::int64_t axis,
                     const Tensor& out) {
  const auto size = static_cast<std::size_t>(element_size(x.dtype()));
  const auto* base = static_cast<const char*>(x.storage().data());
  const auto* idx = index.const_data<std::int64_t>();
  auto* to = static_cast<char*>(const_cast<void*>(out.raw_data()));
  for_each_index(out.shape(), [&](std::int64_t i, const Shape& p) {
    const std::int64_t e =
        offset_with(x, p, static_cast<std::size_t>(axis), idx[i]);
    std::memcpy(to + static_cast<std::size_t>(i) * size,
                base + static_cast<std::size_t>(e) * size, size);
  });
}

void scatter_elements(const Tensor& out, const Tensor& index,
                      const Tensor& updates, std::int64_t axis,
                      ScatterMode mode) {
  detail::dispatch_element_type(out.dtype(), "scatter", [&]<class T>() {
    using C = compute_t<T>;
    auto* data = static_cast<T*>(out.storage().data());
    const auto* idx = index.const_data<std::int64_t>();
    const auto* upd = updates.const_data<T>();
    for_each_index(index.shape(), [&](std::int64_t i, const Shape& p) {
      T& target =
          data[offset_with(out, p, static_cast<std::size_t>(axis), idx[i])];
      const C u = convert<C>(upd[i]);
      const C v = convert<C>(target);
      C r = u;
      switch (mode) {
        case ScatterMode::Assign: break;
        case ScatterMode::Add:
          if constexpr (std::is_same_v<C, bool>)
            r = v || u;
          else
            r = static_cast<C>(v + u);
          break;
        case ScatterMode::Mul:
          if constexpr (std::is_same_v<C, bool>)
            r = v && u;
          else
            r = static_cast<C>(v * u);
          break;
        case ScatterMode::Max: r = v < u ? u : v; break;
        case ScatterMode::Min: r = u < v ? u : v; break;
      }
      target = convert<T>(r);
    });
  });
}

void sort_runs(const Tensor& x, const Tensor& values, const Tensor& indices,
               const ReduceShape& s, bool descending) {
  detail::dispatch_element_type(x.dtype(), "sort", [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.const_data<T>();
    T* out_values = values.defined()
                        ? static_cast<T*>(const_cast<void*>(values.raw_data()))
                        : nullptr;
    auto* out_indices =
        indices.defined()
            ? static_cast<std::int64_t*>(const_cast<void*>(indices.raw_data()))
            : nullptr;
    // NaN is the largest value (NumPy's sort order).
    auto less = [](C a, C b) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
      }
      return a < b;
    };
    parallel_for(
        0, s.outer * s.inner,
        std::max<std::int64_t>(1, 4096 / std::max<std::int64_t>(1, s.reduce)),
        [&](std::int64_t lo, std::int64_t hi) {
          std::vector<std::int64_t> order(static_cast<std::size_t>(s.reduce));
          std::vector<C> keys(static_cast<std::size_t>(s.reduce));
          for (std::int64_t o = lo; o < hi; ++o) {
            const std::int64_t a = o / s.inner;
            const std::int64_t b = o % s.inner;
            const std::int64_t base = a * s.reduce * s.inner + b;
            for (std::int64_t r = 0; r < s.reduce; ++r) {
              keys[static_cast<std::size_t>(r)] =
                  convert<C>(in[base + r * s.inner]);
            }
            std::iota(order.begin(), order.end(), std::int64_t{0});
            std::stable_sort(order.begin(), order.end(),
                             [&](std::int64_t i, std::int64_t j) {
                               const C ki = keys[static_cast<std::size_t>(i)];
                               const C kj = keys[static_cast<std::size_t>(j)];
                               return descending ? less(kj, ki) : less(ki, kj);
                             });
            for (std::int64_t r = 0; r < s.reduce; ++r) {
              const std::int64_t from = order[static_cast<std::size_t>(r)];
              if (out_values)
                out_values[base + r * s.inner] = in[base + from * s.inner];
              if (out_indices) out_indices[base + r * s.inner] = from;
            }
          }
        });
  });
}

}  // namespace tessel::cpu

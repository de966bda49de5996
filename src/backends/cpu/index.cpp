#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/index_kernels.hpp"
#include "core/check.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

void gather_blocks(const KernelInput& src, const std::int64_t* index,
                   std::int64_t count, const KernelOutput& out,
                   const ReduceShape& s) {
  const auto block =
      static_cast<std::size_t>(s.inner * element_size(src.dtype()));
  const auto* from = src.data<char>();
  auto* to = out.data<char>();
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

template <class T>
void add_rows(T* out, const std::int64_t* index, std::int64_t count,
              const T* src, std::int64_t width) {
  // At least 16 columns a chunk: a cache line of f32 per row and chunk.
  parallel_for(0, width, 16, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = 0; i < count; ++i) {
      T* to = out + index[i] * width;
      const T* from = src + i * width;
      for (std::int64_t c = lo; c < hi; ++c) to[c] += from[c];
    }
  });
}

}  // namespace

void scatter_add_rows(const KernelOutput& out, const std::int64_t* index,
                      std::int64_t count, const KernelInput& src) {
  const std::int64_t width = out.shape().back();
  if (out.dtype() == DType::F64) {
    add_rows(out.data<double>(), index, count, src.data<double>(), width);
  } else {
    add_rows(out.data<float>(), index, count, src.data<float>(), width);
  }
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
std::int64_t offset_with(const KernelInput& t, const Shape& index,
                         std::size_t axis, std::int64_t at) {
  std::int64_t e = t.storage_offset();
  for (std::size_t d = 0; d < index.size(); ++d) {
    e += (d == axis ? at : index[d]) * t.strides()[d];
  }
  return e;
}

}  // namespace

void gather_elements(const KernelInput& x, const KernelInput& index,
                     std::int64_t axis, const KernelOutput& out) {
  const auto size = static_cast<std::size_t>(element_size(x.dtype()));
  const auto* base = x.storage_base();
  const auto* idx = index.const_data<std::int64_t>();
  auto* to = out.data<char>();
  for_each_index(out.shape(), [&](std::int64_t i, const Shape& p) {
    const std::int64_t e =
        offset_with(x, p, static_cast<std::size_t>(axis), idx[i]);
    std::memcpy(to + static_cast<std::size_t>(i) * size,
                base + static_cast<std::size_t>(e) * size, size);
  });
}

namespace {

// Complex scatters: assignment, sums and products (the op layer refuses
// max/min, which need an order).
void scatter_complex(const KernelOutput& out, const KernelInput& index,
                     const KernelInput& updates, std::int64_t axis,
                     ScatterMode mode) {
  detail::dispatch_complex_type(out.dtype(), "scatter", [&]<class T>() {
    auto* data = reinterpret_cast<T*>(out.storage_base());
    const auto* idx = index.const_data<std::int64_t>();
    const auto* upd = updates.const_data<T>();
    for_each_index(index.shape(), [&](std::int64_t i, const Shape& p) {
      T& target =
          data[offset_with(out, p, static_cast<std::size_t>(axis), idx[i])];
      if (mode == ScatterMode::Add) {
        target += upd[i];
      } else if (mode == ScatterMode::Mul) {
        const T u = upd[i];
        target = T(target.real() * u.real() - target.imag() * u.imag(),
                   target.real() * u.imag() + target.imag() * u.real());
      } else {
        target = upd[i];
      }
    });
  });
}

}  // namespace

void scatter_elements(const KernelOutput& out, const KernelInput& index,
                      const KernelInput& updates, std::int64_t axis,
                      ScatterMode mode) {
  if (is_complex(out.dtype())) {
    scatter_complex(out, index, updates, axis, mode);
    return;
  }
  detail::dispatch_element_type(out.dtype(), "scatter", [&]<class T>() {
    using C = compute_t<T>;
    auto* data = reinterpret_cast<T*>(out.storage_base());
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

void sort_runs(const KernelInput& x, const KernelOutput& values,
               const KernelOutput& indices, const ReduceShape& s,
               bool descending) {
  detail::dispatch_element_type(x.dtype(), "sort", [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.const_data<T>();
    T* out_values = values.defined() ? values.data<T>() : nullptr;
    auto* out_indices =
        indices.defined() ? indices.data<std::int64_t>() : nullptr;
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
            if (out_indices == nullptr) {
              // Values only: sort the keys themselves (stably, so -0 and +0
              // keep their order), without the index indirection.
              std::stable_sort(keys.begin(), keys.end(), [&](C ka, C kb) {
                return descending ? less(kb, ka) : less(ka, kb);
              });
              for (std::int64_t r = 0; r < s.reduce; ++r) {
                out_values[base + r * s.inner] = convert<T>(
                    static_cast<C>(keys[static_cast<std::size_t>(r)]));
              }
              continue;
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

void mask_coordinates(const KernelInput& mask, const KernelOutput& out) {
  const bool* m = mask.const_data<bool>();
  const auto shape = mask.shape();
  const auto rank = static_cast<std::size_t>(shape.size());
  const std::int64_t count = out.size(0);
  const std::int64_t inner = shape[rank - 1];
  // Without a branch per element (a random mask would mispredict half of
  // them): every element's coordinates are written at the cursor, which
  // advances by the mask bit, so one row of slack takes the last write.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(count + 1) * rank);
  std::vector<std::int64_t> prefix(rank - 1, 0);  // the outer coordinates
  std::int64_t k = 0;
  for (std::int64_t row = 0; row < mask.numel() / inner; ++row) {
    const bool* mrow = m + row * inner;
    for (std::int64_t j = 0; j < inner; ++j) {
      std::int64_t* dst = rows.data() + static_cast<std::size_t>(k) * rank;
      std::copy(prefix.begin(), prefix.end(), dst);
      dst[rank - 1] = j;
      k += mrow[j] ? 1 : 0;
    }
    for (auto d = static_cast<std::ptrdiff_t>(rank) - 2; d >= 0; --d) {
      auto& c = prefix[static_cast<std::size_t>(d)];
      if (++c < shape[static_cast<std::size_t>(d)]) break;
      c = 0;
    }
  }
  std::copy(rows.begin(),
            rows.begin() + static_cast<std::ptrdiff_t>(count) *
                               static_cast<std::ptrdiff_t>(rank),
            out.data<std::int64_t>());
}

void search_sorted(const KernelInput& sorted, const KernelInput& values,
                   bool right, const KernelOutput& out) {
  detail::dispatch_element_type(sorted.dtype(), "searchsorted", [&]<class T>() {
    using C = compute_t<T>;
    const T* s = sorted.const_data<T>();
    const T* v = values.const_data<T>();
    std::int64_t* o = out.data<std::int64_t>();
    const std::int64_t n = sorted.numel();
    // NaN is the largest value, as in sort.
    auto less = [](C a, C b) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return false;
        if (std::isnan(b)) return true;
      }
      return a < b;
    };
    parallel_for(0, values.numel(), 1024,
                 [&](std::int64_t lo, std::int64_t hi) {
                   for (std::int64_t i = lo; i < hi; ++i) {
                     const C key = convert<C>(v[i]);
                     // The first position whose element is not before key
                     // (left) or is after it (right).
                     std::int64_t first = 0, count = n;
                     while (count > 0) {
                       const std::int64_t half = count / 2;
                       const C e = convert<C>(s[first + half]);
                       const bool before = right ? !less(key, e) : less(e, key);
                       if (before) {
                         first += half + 1;
                         count -= half + 1;
                       } else {
                         count = half;
                       }
                     }
                     o[i] = first;
                   }
                 });
  });
}

void normalize_indices(const KernelOutput& index, std::int64_t extent,
                       const char* op) {
  auto* p = index.data<std::int64_t>();
  for (std::int64_t i = 0; i < index.numel(); ++i) {
    const std::int64_t v = p[i];
    TESSEL_CHECK(v >= -extent && v < extent, OutOfRange, op,
                 "index {} is out of range for an axis of extent {}", v,
                 extent);
    if (v < 0) p[i] = v + extent;
  }
}

void gather_nd(const KernelInput& x, const KernelInput& index,
               std::int64_t batch_dims, std::int64_t depth,
               const KernelOutput& out) {
  std::int64_t slice_elems = 1;
  for (std::int64_t d = batch_dims + depth; d < x.rank(); ++d)
    slice_elems *= x.shape()[d];
  std::int64_t batch = 1;
  for (std::int64_t d = 0; d < batch_dims; ++d) batch *= x.shape()[d];
  const std::int64_t per_batch_tuples =
      index.numel() / depth / std::max<std::int64_t>(batch, 1);
  std::int64_t per_batch_elems = 1;
  for (std::int64_t d = batch_dims; d < x.rank(); ++d)
    per_batch_elems *= x.shape()[d];
  const auto size = static_cast<std::size_t>(element_size(x.dtype()));
  const char* from = x.raw_data();
  char* to = out.raw_data();
  const auto* t = index.data<std::int64_t>();
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t k = 0; k < per_batch_tuples; ++k) {
      const std::int64_t* tuple = t + (b * per_batch_tuples + k) * depth;
      std::int64_t offset = 0;
      for (std::int64_t j = 0; j < depth; ++j) {
        const std::int64_t extent = x.shape()[batch_dims + j];
        std::int64_t v = tuple[j];
        TESSEL_CHECK(v >= -extent && v < extent, OutOfRange, "gather_nd",
                     "index {} is out of range for axis {} of extent {}", v,
                     batch_dims + j, extent);
        if (v < 0) v += extent;
        offset = offset * extent + v;
      }
      std::memcpy(to + static_cast<std::size_t>((b * per_batch_tuples + k) *
                                                slice_elems) *
                           size,
                  from + static_cast<std::size_t>(b * per_batch_elems +
                                                  offset * slice_elems) *
                             size,
                  static_cast<std::size_t>(slice_elems) * size);
    }
  }
}

}  // namespace tessel::cpu

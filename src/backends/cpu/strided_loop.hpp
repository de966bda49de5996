// Note [strided loop]
// Every element-wise CPU kernel walks its operands with for_each_strided:
// operand 0 is the output, the rest are inputs already broadcast to the
// output's shape (stride 0 on broadcast axes, so nothing is materialised).
// Axes of extent 1 are dropped, the rest are ordered by the output's strides
// and adjacent axes that are contiguous in every operand are merged, so a
// contiguous tensor of any shape becomes one run. The kernel sees only 1-D
// runs: loop(pointers, byte_strides, n). The element range is split over
// the thread pool (a run may be cut in two); the split never changes
// results. Operands that are already one row-major run (the common case)
// skip the axis sort, and a range below one grain skips the pool: on an
// 8-element tensor both cost more than the arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <span>

#include "tessel/core/parallel.hpp"
#include "tessel/core/small_vector.hpp"

namespace tessel::cpu {

// Elements per task below which splitting costs more than it saves.
inline constexpr std::int64_t kElementwiseGrain = 32768;

template <std::size_t N>
struct StridedDims {
  SmallVector<std::int64_t, 6> extent;                 // outermost first
  SmallVector<std::array<std::int64_t, N>, 6> stride;  // bytes, per operand
};

template <std::size_t N>
StridedDims<N> coalesce_dims(
    std::span<const std::int64_t> shape,
    const std::array<std::span<const std::int64_t>, N>& byte_strides) {
  SmallVector<std::int64_t, 8> order;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) order.push_back(static_cast<std::int64_t>(d));
  }
  // Outermost = largest output stride; stable so equal strides keep order.
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    for (std::size_t k = 0; k < N; ++k) {
      const auto sa = std::abs(byte_strides[k][a]);
      const auto sb = std::abs(byte_strides[k][b]);
      if (sa != sb) return sa > sb;
    }
    return false;
  });
  StridedDims<N> dims;
  for (auto d : order) {
    std::array<std::int64_t, N> s{};
    for (std::size_t k = 0; k < N; ++k) s[k] = byte_strides[k][d];
    if (!dims.extent.empty()) {
      auto& prev = dims.stride.back();
      bool mergeable = true;
      for (std::size_t k = 0; k < N; ++k) {
        mergeable = mergeable && prev[k] == s[k] * shape[d];
      }
      if (mergeable) {
        dims.extent.back() *= shape[d];
        prev = s;
        continue;
      }
    }
    dims.extent.push_back(shape[d]);
    dims.stride.push_back(s);
  }
  return dims;
}

// Whether every operand is row-major over `shape` with its own innermost
// stride (dense, or a broadcast scalar with every stride 0): the whole
// range is then one run, and the axis sort of coalesce_dims, which costs
// as much as the work on a small tensor, is skipped.
template <std::size_t N>
bool is_one_run(
    std::span<const std::int64_t> shape,
    const std::array<std::span<const std::int64_t>, N>& byte_strides) {
  for (std::size_t k = 0; k < N; ++k) {
    for (std::size_t d = 0; d + 1 < shape.size(); ++d) {
      if (byte_strides[k][d] != byte_strides[k][d + 1] * shape[d + 1])
        return false;
    }
  }
  return true;
}

// Calls loop(std::array<char*, N>& ptrs, const std::array<int64_t, N>&
// byte_strides, int64_t n) for every innermost run. The element range is
// split over the pool in chunks of at least `grain` elements; a chunk may
// start or end inside a run, so even one long run uses every thread.
template <std::size_t N, class Loop>
void for_each_strided(
    std::span<const std::int64_t> shape, std::array<char*, N> base,
    const std::array<std::span<const std::int64_t>, N>& byte_strides,
    Loop&& loop, std::int64_t grain = kElementwiseGrain) {
  std::int64_t count = 1;
  for (auto e : shape) {
    if (e == 0) return;
    count *= e;
  }
  if (!shape.empty() && is_one_run<N>(shape, byte_strides)) {
    std::array<std::int64_t, N> step{};
    for (std::size_t k = 0; k < N; ++k)
      step[k] = byte_strides[k][shape.size() - 1];
    if (count <= grain) {
      loop(base, step, count);
      return;
    }
    parallel_for(0, count, grain, [&](std::int64_t lo, std::int64_t hi) {
      std::array<char*, N> run = base;
      for (std::size_t k = 0; k < N; ++k) run[k] += lo * step[k];
      loop(run, step, hi - lo);
    });
    return;
  }
  const StridedDims<N> dims = coalesce_dims<N>(shape, byte_strides);
  if (dims.extent.empty()) {  // a single element
    std::array<std::int64_t, N> zero{};
    loop(base, zero, std::int64_t{1});
    return;
  }
  const std::size_t outer_rank = dims.extent.size() - 1;
  const std::int64_t inner = dims.extent.back();
  const auto inner_stride = dims.stride.back();
  std::int64_t total = inner;
  for (std::size_t d = 0; d < outer_rank; ++d) total *= dims.extent[d];
  parallel_for(0, total, grain, [&](std::int64_t lo, std::int64_t hi) {
    // Multi-index of the row holding element `lo`, then an odometer.
    SmallVector<std::int64_t, 6> index(outer_rank, 0);
    std::array<char*, N> row = base;
    std::int64_t rest = lo / inner;
    for (std::size_t d = outer_rank; d-- > 0;) {
      index[d] = rest % dims.extent[d];
      rest /= dims.extent[d];
      for (std::size_t k = 0; k < N; ++k)
        row[k] += index[d] * dims.stride[d][k];
    }
    std::int64_t col = lo % inner;
    for (std::int64_t at = lo; at < hi;) {
      const std::int64_t n = std::min(inner - col, hi - at);
      std::array<char*, N> run = row;
      for (std::size_t k = 0; k < N; ++k) run[k] += col * inner_stride[k];
      loop(run, inner_stride, n);
      at += n;
      col = 0;
      for (std::size_t d = outer_rank; d-- > 0;) {
        for (std::size_t k = 0; k < N; ++k) row[k] += dims.stride[d][k];
        if (++index[d] < dims.extent[d]) break;
        for (std::size_t k = 0; k < N; ++k) {
          row[k] -= dims.extent[d] * dims.stride[d][k];
        }
        index[d] = 0;
      }
    }
  });
}

}  // namespace tessel::cpu

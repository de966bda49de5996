// Gather, scatter and sort kernels. Indices are i64, already normalised to
// [0, extent) and range-checked by the op layer.
#pragma once

#include <cstdint>

#include "backends/cpu/reduce_kernels.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

// out[a, i, b] = src[a, index[i], b] for contiguous (A, N, B) src and
// (A, I, B) out of one byte-addressable dtype.
void gather_blocks(const Tensor& src, const std::int64_t* index,
                   std::int64_t count, const Tensor& out,
                   const ReduceShape& shape);

// out[p] = x[p with axis replaced by index[p]]; out and index contiguous of
// the same shape; x any strides.
void gather_elements(const Tensor& x, const Tensor& index, std::int64_t axis,
                     const Tensor& out);

enum class ScatterMode : std::uint8_t { Assign, Add, Mul, Max, Min };
// In place on the contiguous `out`: out[p with axis -> index[p]] (op)=
// updates[p], in index order.
void scatter_elements(const Tensor& out, const Tensor& index,
                      const Tensor& updates, std::int64_t axis,
                      ScatterMode mode);

// Stable sort of every R-run of the contiguous (A, R, B) x; writes the
// sorted values (if defined) and the i64 source indices (if defined).
void sort_runs(const Tensor& x, const Tensor& values, const Tensor& indices,
               const ReduceShape& shape, bool descending);

}  // namespace tessel::cpu

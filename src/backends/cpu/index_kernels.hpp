// Gather, scatter and sort kernels. Indices are i64, already normalised to
// [0, extent) and range-checked by the op layer.
#pragma once

#include <cstdint>

#include "backends/cpu/reduce_kernels.hpp"
#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// out[a, i, b] = src[a, index[i], b] for contiguous (A, N, B) src and
// (A, I, B) out of one byte-addressable dtype.
// out[index[i], :] += src[i, :] for i < count: contiguous f32 or f64 rows
// of one width, index in range. Threads split the columns, so repeated
// rows add up in index order without atomics.
void scatter_add_rows(const KernelOutput& out, const std::int64_t* index,
                      std::int64_t count, const KernelInput& src);

void gather_blocks(const KernelInput& src, const std::int64_t* index,
                   std::int64_t count, const KernelOutput& out,
                   const ReduceShape& shape);

// out[p] = x[p with axis replaced by index[p]]; out and index contiguous of
// the same shape; x any strides.
void gather_elements(const KernelInput& x, const KernelInput& index,
                     std::int64_t axis, const KernelOutput& out);

// In place on the contiguous `out`: out[p with axis -> index[p]] (op)=
// updates[p], in index order.
void scatter_elements(const KernelOutput& out, const KernelInput& index,
                      const KernelInput& updates, std::int64_t axis,
                      ScatterMode mode);

// Stable sort of every R-run of the contiguous (A, R, B) x; writes the
// sorted values (if defined) and the i64 source indices (if defined).
void sort_runs(const KernelInput& x, const KernelOutput& values,
               const KernelOutput& indices, const ReduceShape& shape,
               bool descending);
// The coordinates of the true elements of a contiguous bool mask, (count,
// rank) i64 in row-major order.
void mask_coordinates(const KernelInput& mask, const KernelOutput& out);
// Insertion points of `values` into the ascending 1-D `sorted` (one dtype,
// NaN last): before equal elements, or after them when `right`.
void search_sorted(const KernelInput& sorted, const KernelInput& values,
                   bool right, const KernelOutput& out);

// Checks every value of the contiguous i64 `index` against [-extent,
// extent) (E2302 naming `op`) and wraps negatives, in place.
void normalize_indices(const KernelOutput& index, std::int64_t extent,
                       const char* op);

// ONNX GatherND: out (contiguous) = slices of the contiguous x addressed by
// the i64 tuples of `depth` indices in `index`, after `batch_dims` shared
// leading axes. Indices are checked (E2302) and wrapped here.
void gather_nd(const KernelInput& x, const KernelInput& index,
               std::int64_t batch_dims, std::int64_t depth,
               const KernelOutput& out);

}  // namespace tessel::cpu

// Indexing, joining and layout ops (DESIGN §7 names, NumPy/PyTorch
// semantics; see docs/ops.md for the edge cases). Index tensors are any
// integer dtype; negative indices count back from the end; out-of-range
// indices are E2302 and are checked before anything is written.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tessel/core/scalar.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

// ---- joining and splitting ----
// Dtypes promote; every extent but `axis` must agree (E2102).
Tensor concat(const std::vector<Tensor>& tensors, std::int64_t axis = 0);
// A new axis; every shape must be equal.
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t axis = 0);
// Views of consecutive pieces of the given sizes (which must add up).
std::vector<Tensor> split(const Tensor& x,
                          const std::vector<std::int64_t>& sizes,
                          std::int64_t axis = 0);
// `chunks` views of ceil(extent / chunks) elements (the last may be
// smaller, and there may be fewer pieces), as PyTorch.
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks,
                          std::int64_t axis = 0);

// ---- gathering and scattering ----
// NumPy take: out.shape = x.shape[:axis] + index.shape + x.shape[axis+1:].
Tensor gather(const Tensor& x, const Tensor& index, std::int64_t axis = 0);
// gather with a 1-D index: the axis keeps its place.
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index);
// out[p] = x[p with axis p[axis] replaced by index[p]]; index has x's rank
// and is no larger than x on the other axes (ONNX GatherElements, NumPy
// take_along_axis without broadcasting).
Tensor gather_elements(const Tensor& x, const Tensor& index, std::int64_t axis);
Tensor take_along_axis(const Tensor& x, const Tensor& index, std::int64_t axis);
// ONNX GatherND: the last axis of `index` addresses the leading axes of x
// after `batch_dims` shared batch axes.
Tensor gather_nd(const Tensor& x, const Tensor& index,
                 std::int64_t batch_dims = 0);

enum class ScatterReduce { None, Add, Mul, Max, Min };
// A copy of x with x[p with axis replaced by index[p]] (op)= updates[p]
// (ONNX ScatterElements; PyTorch scatter/scatter_reduce). Duplicate indices
// with None: the last update wins.
Tensor scatter(const Tensor& x, std::int64_t axis, const Tensor& index,
               const Tensor& updates,
               ScatterReduce reduce = ScatterReduce::None);
Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index,
                   const Tensor& updates);
// x where mask is false, value where it is true (mask broadcasts to x).
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
// One-hot along a new last (or `axis`) axis; indices in [-depth, depth).
Tensor one_hot(const Tensor& indices, std::int64_t depth,
               std::int64_t axis = -1, Scalar on_value = 1,
               Scalar off_value = 0, DType dtype = DType::I64);

// ---- layout ----
// Lower / upper triangle of the last two axes; k shifts the diagonal.
Tensor tril(const Tensor& x, std::int64_t k = 0);
Tensor triu(const Tensor& x, std::int64_t k = 0);

enum class PadMode { Constant, Reflect, Edge, Wrap };
// pads[d] = (before, after) for each axis d (missing trailing pairs are 0);
// negative amounts crop. Reflect mirrors without repeating the edge
// (NumPy "reflect"), Edge repeats it, Wrap is circular.
Tensor pad(const Tensor& x,
           const std::vector<std::pair<std::int64_t, std::int64_t>>& pads,
           PadMode mode = PadMode::Constant, Scalar value = 0);
// NumPy tile: the tensor repeated reps[d] times along each axis (reps is
// left-padded with ones, or x is, to the same rank).
Tensor tile(const Tensor& x, const std::vector<std::int64_t>& reps);
// NumPy repeat: every element repeated along `axis` (flattened when none).
Tensor repeat(const Tensor& x, std::int64_t repeats,
              std::optional<std::int64_t> axis = std::nullopt);
Tensor repeat(const Tensor& x, const Tensor& repeats, std::int64_t axis);
// Reverses the given axes (all when empty).
Tensor flip(const Tensor& x, Axes axes = {});
// Rotates elements along each axis; with no axes, over the flattened tensor.
Tensor roll(const Tensor& x, const std::vector<std::int64_t>& shifts,
            Axes axes = {});
// NCHW <-> NHWC (contiguous copies in the target layout).
Tensor nchw_to_nhwc(const Tensor& x);
Tensor nhwc_to_nchw(const Tensor& x);

// ---- ordering ----
// Stable sorts along `axis`; NaN sorts last ascending and first descending.
Tensor sort(const Tensor& x, std::int64_t axis = -1, bool descending = false);
Tensor argsort(const Tensor& x, std::int64_t axis = -1,
               bool descending = false);
struct TopK {
  Tensor values;
  Tensor indices;  // i64
};
// The k largest (or smallest) along `axis`, ties to the lower index. The
// result is always in order (`sorted` = false allows any order, as in
// PyTorch, and order is one of them).
TopK topk(const Tensor& x, std::int64_t k, std::int64_t axis = -1,
          bool largest = true, bool sorted = true);

}  // namespace tessel

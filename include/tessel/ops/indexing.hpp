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

enum class ScatterReduce { None, Add, Mul, Max, Min };
enum class PadMode { Constant, Reflect, Edge, Wrap };

// topk's result: the values (Tensor or Variable) and their i64 indices.
template <class Values>
struct TopKResult {
  Values values;
  Tensor indices;
};
using TopK = TopKResult<Tensor>;

// concat stack split chunk gather index_select gather_elements
// take_along_axis scatter scatter_add masked_fill tril triu pad tile repeat
// flip roll sort topk, declared once for Tensor and Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/indexing.inc"
#undef TESSEL_VALUE

// ONNX GatherND: the last axis of `index` addresses the leading axes of x
// after `batch_dims` shared batch axes.
Tensor gather_nd(const Tensor& x, const Tensor& index,
                 std::int64_t batch_dims = 0);
// One-hot along a new last (or `axis`) axis; indices in [-depth, depth).
Tensor one_hot(const Tensor& indices, std::int64_t depth,
               std::int64_t axis = -1, Scalar on_value = 1,
               Scalar off_value = 0, DType dtype = DType::I64);
// NumPy repeat with one count per element along `axis`.
Tensor repeat(const Tensor& x, const Tensor& repeats, std::int64_t axis);
// NCHW <-> NHWC (contiguous copies in the target layout).
Tensor nchw_to_nhwc(const Tensor& x);
Tensor nhwc_to_nchw(const Tensor& x);
// The indices that sort along `axis` (stably, as sort).
Tensor argsort(const Tensor& x, std::int64_t axis = -1,
               bool descending = false);

// The coordinates of x's non-zero elements (NaN is non-zero) in row-major
// order: i64 of shape (count, rank), PyTorch's nonzero (NumPy's tuple is
// its columns). The count depends on the values, so a device that holds
// none (meta) refuses it (E2501).
Tensor nonzero(const Tensor& x);

// Where each of `values` would go into the ascending 1-D `sorted` to keep
// it in order: before equal elements (Left, NumPy's side="left") or after
// them (Right). NaN sorts last, as in sort. The two promote to one dtype;
// the result is i64 of values' shape.
enum class SearchSide { Left, Right };
Tensor searchsorted(const Tensor& sorted, const Tensor& values,
                    SearchSide side = SearchSide::Left);

}  // namespace tessel

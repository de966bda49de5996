// Indexing, joining and layout ops: shape rules and index checks here,
// byte moves in backends/cpu/index.cpp, the rest composed from views and
// element-wise ops.
#include "tessel/ops/indexing.hpp"

#include <algorithm>
#include <numeric>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// A byte-addressable version of t (packed and block types go to f32, as in
// every other op).
Tensor addressable(const Tensor& t) {
  return is_byte_addressable(t.dtype()) ? t : t.to(DType::F32);
}

// The index tensor as contiguous i64 with negatives wrapped; every value
// checked against [-extent, extent) before anything is written.
Tensor normalized_index(const Tensor& index, std::int64_t extent,
                        const char* op) {
  const ops::CheckedOperands checked(op, index);
  TESSEL_CHECK(is_integral(index.dtype()), BadDType, op,
               "indices must be integers, got {}", dtype_name(index.dtype()));
  Tensor idx = index.to(DType::I64).contiguous();
  if (idx.shares_storage_with(index)) idx = idx.clone();
  ops::backend_of(idx).normalize_indices(idx, extent, op);
  return idx;
}

// gather_elements and scatter: the index has x's rank and is no larger
// than x on the other axes.
void check_element_index(const Tensor& x, const Tensor& index,
                         std::int64_t axis, const char* op) {
  bool ok = index.rank() == x.rank();
  for (std::int64_t d = 0; ok && d < x.rank(); ++d) {
    ok = d == axis || index.shape()[d] <= x.shape()[d];
  }
  TESSEL_CHECK(
      ok, BadShape, op,
      "index of shape {} does not fit data of shape {} outside axis {}",
      shape_string(index.shape()), shape_string(x.shape()), axis);
}

ReduceShape around_axis(const Shape& shape, std::int64_t axis) {
  std::int64_t before = 1, after = 1;
  for (std::int64_t d = 0; d < axis; ++d) before *= shape[d];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size();
       ++d) {
    after *= shape[d];
  }
  return {before, shape[axis], after};
}

}  // namespace

// ---- joining and splitting ----

Tensor concat(const std::vector<Tensor>& tensors, std::int64_t axis) {
  TESSEL_CHECK(!tensors.empty(), BadShape, "concat",
               "no tensors to concatenate");
  const ops::CheckedOperands checked("concat", tensors);
  std::vector<Shape> shapes;
  DType dtype = tensors.front().dtype();
  for (const auto& t : tensors) {
    dtype = promote_types(dtype, t.dtype(), "concat");
    shapes.push_back(t.shape());
  }
  const Shape shape = rules::concat<Shape>(shapes, axis, "concat");
  const std::int64_t a = normalize_axis(axis, tensors.front().rank(), "concat");
  Tensor out = empty(shape, dtype, tensors.front().device());
  std::int64_t at = 0;
  for (const auto& t : tensors) {
    const std::int64_t n = t.shape()[a];
    if (n > 0) out.slice(a, at, at + n).copy_(t);
    at += n;
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t axis) {
  TESSEL_CHECK(!tensors.empty(), BadShape, "stack", "no tensors to stack");
  const ops::CheckedOperands checked("stack", tensors);
  const Shape& shape = tensors.front().shape();
  std::vector<Tensor> expanded;
  for (const auto& t : tensors) {
    TESSEL_CHECK(t.shape() == shape, BadShape, "stack",
                 "every tensor must have one shape; got {} and {}",
                 shape_string(shape), shape_string(t.shape()));
    expanded.push_back(
        t.unsqueeze(normalize_axis(axis, t.rank() + 1, "stack")));
  }
  return concat(expanded, axis);
}

std::vector<Tensor> split(const Tensor& x,
                          const std::vector<std::int64_t>& sizes,
                          std::int64_t axis) {
  const ops::CheckedOperands checked("split", x);
  const auto a = normalize_axis(axis, x.rank(), "split");
  std::int64_t total = 0;
  for (auto s : sizes) {
    TESSEL_CHECK(s >= 0, BadShape, "split", "negative size {} in split", s);
    total += s;
  }
  TESSEL_CHECK(total == x.shape()[a], BadShape, "split",
               "sizes add up to {} but axis {} of {} has extent {}", total, a,
               shape_string(x.shape()), x.shape()[a]);
  std::vector<Tensor> pieces;
  std::int64_t at = 0;
  for (auto s : sizes) {
    pieces.push_back(x.slice(a, at, at + s));
    at += s;
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks,
                          std::int64_t axis) {
  const ops::CheckedOperands checked("chunk", x);
  TESSEL_CHECK(chunks > 0, BadShape, "chunk", "chunks must be positive, got {}",
               chunks);
  const auto a = normalize_axis(axis, x.rank(), "chunk");
  const std::int64_t extent = x.shape()[a];
  const std::int64_t step =
      std::max<std::int64_t>(1, (extent + chunks - 1) / chunks);
  std::vector<Tensor> pieces;
  for (std::int64_t at = 0; at < extent; at += step) {
    pieces.push_back(x.slice(a, at, std::min(extent, at + step)));
  }
  if (pieces.empty()) pieces.push_back(x);
  return pieces;
}

// ---- gathering and scattering ----

Tensor gather(const Tensor& x_in, const Tensor& index, std::int64_t axis) {
  ops::check_defined("gather", index, "the index");
  const ops::CheckedOperands checked("gather", {&x_in, &index});
  const Tensor x = addressable(x_in);
  const Shape shape = rules::gather(x.shape(), index.shape(), axis, "gather");
  const auto a = normalize_axis(axis, x.rank(), "gather");
  const Tensor idx = normalized_index(index, x.shape()[a], "gather");
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.numel() > 0) {
    ops::backend_of(out).gather_blocks(x.contiguous(), idx, out,
                                       around_axis(x.shape(), a));
  }
  return out;
}

Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index) {
  TESSEL_CHECK(index.defined() && index.rank() == 1, BadShape, "index_select",
               "the index must be 1-D, got shape {}",
               index.defined() ? shape_string(index.shape()) : "undefined");
  return gather(x, index, axis);
}

Tensor gather_elements(const Tensor& x_in, const Tensor& index,
                       std::int64_t axis) {
  const ops::CheckedOperands checked("gather_elements", {&x_in, &index});
  const Tensor x = addressable(x_in);
  const auto a = normalize_axis(axis, x.rank(), "gather_elements");
  check_element_index(x, index, a, "gather_elements");
  const Tensor idx = normalized_index(index, x.shape()[a], "gather_elements");
  Tensor out = empty(index.shape(), x.dtype(), x.device());
  if (out.numel() > 0) ops::backend_of(out).gather_elements(x, idx, a, out);
  return out;
}

Tensor take_along_axis(const Tensor& x, const Tensor& index,
                       std::int64_t axis) {
  return gather_elements(x, index, axis);
}

Tensor gather_nd(const Tensor& x_in, const Tensor& index,
                 std::int64_t batch_dims) {
  const ops::CheckedOperands checked("gather_nd", {&x_in, &index});
  const Tensor x = addressable(x_in);
  const std::int64_t q = index.rank();
  TESSEL_CHECK(
      q >= 1 && batch_dims >= 0 && batch_dims < std::min(q, x.rank() + 1),
      BadShape, "gather_nd", "bad batch_dims {} for index {} and data {}",
      batch_dims, shape_string(index.shape()), shape_string(x.shape()));
  const std::int64_t depth = index.shape()[q - 1];
  TESSEL_CHECK(
      depth >= 1 && batch_dims + depth <= x.rank(), BadShape, "gather_nd",
      "index tuples of length {} after {} batch axes do not fit data {}", depth,
      batch_dims, shape_string(x.shape()));
  for (std::int64_t d = 0; d < batch_dims; ++d) {
    TESSEL_CHECK(index.shape()[d] == x.shape()[d], BadShape, "gather_nd",
                 "batch axis {} differs: index {} vs data {}", d,
                 shape_string(index.shape()), shape_string(x.shape()));
  }
  const Tensor idx = index.to(DType::I64).contiguous();
  // Output: index.shape[:-1] + x.shape[batch_dims + depth:].
  Shape shape(index.shape().begin(), index.shape().end() - 1);
  std::int64_t slice_elems = 1;
  for (std::int64_t d = batch_dims + depth; d < x.rank(); ++d) {
    shape.push_back(x.shape()[d]);
    slice_elems *= x.shape()[d];
  }
  Tensor out = empty(shape, x.dtype(), x.device());
  if (out.numel() > 0)
    ops::backend_of(x).gather_nd(x.contiguous(), idx, batch_dims, depth, out);
  return out;
}

Tensor scatter(const Tensor& x_in, std::int64_t axis, const Tensor& index,
               const Tensor& updates, ScatterReduce reduce) {
  const ops::CheckedOperands checked("scatter", {&x_in, &index, &updates});
  const Tensor x = addressable(x_in);
  const auto a = normalize_axis(axis, x.rank(), "scatter");
  check_element_index(x, index, a, "scatter");
  TESSEL_CHECK(updates.shape() == index.shape(), BadShape, "scatter",
               "updates of shape {} differ from the index shape {}",
               shape_string(updates.shape()), shape_string(index.shape()));
  const Tensor idx = normalized_index(index, x.shape()[a], "scatter");
  TESSEL_CHECK(!is_complex(x.dtype()) || reduce == ScatterReduce::None ||
                   reduce == ScatterReduce::Add || reduce == ScatterReduce::Mul,
               BadDType, "scatter",
               "max/min reductions are not defined for complex tensors ({})",
               dtype_name(x.dtype()));
  Tensor out = x.clone();
  const Tensor upd = updates.to(x.dtype()).contiguous();
  const ScatterMode mode = [&] {
    switch (reduce) {
      case ScatterReduce::Add: return ScatterMode::Add;
      case ScatterReduce::Mul: return ScatterMode::Mul;
      case ScatterReduce::Max: return ScatterMode::Max;
      case ScatterReduce::Min: return ScatterMode::Min;
      case ScatterReduce::None: break;
    }
    return ScatterMode::Assign;
  }();
  if (idx.numel() > 0)
    ops::backend_of(out).scatter_elements(out, idx, upd, a, mode);
  return out;
}

Tensor scatter_add(const Tensor& x, std::int64_t axis, const Tensor& index,
                   const Tensor& updates) {
  return scatter(x, axis, index, updates, ScatterReduce::Add);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  const ops::CheckedOperands checked("masked_fill", {&x, &mask});
  TESSEL_CHECK(broadcast_shapes(x.shape(), mask.shape()) == x.shape(),
               BroadcastMismatch, "masked_fill",
               "mask {} does not broadcast to the shape {} of x",
               shape_string(mask.shape()), shape_string(x.shape()));
  return where(mask, full({}, value, x.dtype(), x.device()), x).to(x.dtype());
}

Tensor one_hot(const Tensor& indices, std::int64_t depth, std::int64_t axis,
               Scalar on_value, Scalar off_value, DType dtype) {
  const ops::CheckedOperands checked("one_hot", indices);
  TESSEL_CHECK(depth > 0, BadShape, "one_hot", "depth must be positive, got {}",
               depth);
  const Tensor idx = normalized_index(indices, depth, "one_hot");
  const auto a = normalize_axis(axis, indices.rank() + 1, "one_hot");
  // Compare the indices (with a new axis) against 0..depth-1 along it.
  Shape class_shape(static_cast<std::size_t>(indices.rank() + 1), 1);
  class_shape[static_cast<std::size_t>(a)] = depth;
  const Tensor classes =
      arange(depth).reshape(class_shape).to(indices.device());
  const Tensor hit = eq(idx.reshape(indices.shape()).unsqueeze(a), classes);
  return where(hit, full({}, on_value, dtype, indices.device()),
               full({}, off_value, dtype, indices.device()))
      .to(dtype);
}

// ---- layout ----

namespace {

Tensor triangle(const Tensor& x, std::int64_t k, bool lower, const char* op) {
  const ops::CheckedOperands checked(op, x);
  TESSEL_CHECK(x.rank() >= 2, BadShape, op,
               "needs at least 2 axes, got shape {}", shape_string(x.shape()));
  const std::int64_t rows = x.shape()[x.rank() - 2];
  const std::int64_t cols = x.shape()[x.rank() - 1];
  const Tensor diff =
      sub(arange(cols).reshape({1, cols}), arange(rows).reshape({rows, 1}))
          .to(x.device());
  const Tensor keep = lower ? le(diff, k) : ge(diff, k);
  return where(keep, x, full({}, 0, x.dtype(), x.device())).to(x.dtype());
}

// Source positions along an axis of extent n for output positions
// [-before, n + after), under a pad mode.
std::vector<std::int64_t> pad_positions(std::int64_t n, std::int64_t before,
                                        std::int64_t after, PadMode mode) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = -before; i < n + after; ++i) {
    std::int64_t j = i;
    switch (mode) {
      case PadMode::Edge: j = std::clamp<std::int64_t>(i, 0, n - 1); break;
      case PadMode::Wrap: j = ((i % n) + n) % n; break;
      case PadMode::Reflect: {
        if (n == 1) {
          j = 0;
          break;
        }
        const std::int64_t period = 2 * (n - 1);
        j = ((i % period) + period) % period;
        if (j >= n) j = period - j;
        break;
      }
      case PadMode::Constant: break;
    }
    out.push_back(j);
  }
  return out;
}

}  // namespace

Tensor tril(const Tensor& x, std::int64_t k) {
  return triangle(x, k, true, "tril");
}
Tensor triu(const Tensor& x, std::int64_t k) {
  return triangle(x, k, false, "triu");
}

Tensor pad(const Tensor& x_in,
           const std::vector<std::pair<std::int64_t, std::int64_t>>& pads,
           PadMode mode, Scalar value) {
  const ops::CheckedOperands checked("pad", x_in);
  const Tensor x = addressable(x_in);
  TESSEL_CHECK(static_cast<std::int64_t>(pads.size()) <= x.rank(), BadShape,
               "pad", "{} pad pairs for a tensor of rank {}", pads.size(),
               x.rank());
  // Negative amounts crop first.
  Tensor cropped = x;
  std::vector<std::pair<std::int64_t, std::int64_t>> grow(
      static_cast<std::size_t>(x.rank()));
  for (std::size_t d = 0; d < pads.size(); ++d) {
    const auto [before, after] = pads[d];
    const std::int64_t extent = cropped.shape()[d];
    const std::int64_t lo = std::max<std::int64_t>(0, -before);
    const std::int64_t hi = extent - std::max<std::int64_t>(0, -after);
    TESSEL_CHECK(lo <= hi, BadShape, "pad",
                 "cropping ({}, {}) exceeds axis {} of extent {}", before,
                 after, d, extent);
    cropped = cropped.slice(static_cast<std::int64_t>(d), lo, hi);
    grow[d] = {std::max<std::int64_t>(0, before),
               std::max<std::int64_t>(0, after)};
  }
  if (mode == PadMode::Constant) {
    Shape shape = cropped.shape();
    for (std::size_t d = 0; d < shape.size(); ++d)
      shape[d] += grow[d].first + grow[d].second;
    Tensor out = full(shape, value, x.dtype(), x.device());
    Tensor inner = out;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      inner = inner.slice(static_cast<std::int64_t>(d), grow[d].first,
                          grow[d].first + cropped.shape()[d]);
    }
    if (inner.numel() > 0) inner.copy_(cropped);
    return out;
  }
  Tensor out = cropped;
  for (std::size_t d = 0; d < grow.size(); ++d) {
    if (grow[d].first == 0 && grow[d].second == 0) continue;
    const std::int64_t n = out.shape()[d];
    TESSEL_CHECK(n > 0, BadShape, "pad", "cannot {} an empty axis {}",
                 mode == PadMode::Reflect ? "reflect" : "extend", d);
    const auto positions =
        pad_positions(n, grow[d].first, grow[d].second, mode);
    out =
        index_select(out, static_cast<std::int64_t>(d), from_vector(positions));
  }
  return out.contiguous();
}

Tensor tile(const Tensor& x, const std::vector<std::int64_t>& reps_in) {
  const ops::CheckedOperands checked("tile", x);
  const auto rank = std::max<std::int64_t>(
      x.rank(), static_cast<std::int64_t>(reps_in.size()));
  std::vector<std::int64_t> reps(
      static_cast<std::size_t>(rank) - reps_in.size(), 1);
  reps.insert(reps.end(), reps_in.begin(), reps_in.end());
  Shape shape(static_cast<std::size_t>(rank - x.rank()), 1);
  for (auto e : x.shape()) shape.push_back(e);
  for (auto r : reps)
    TESSEL_CHECK(r >= 0, BadShape, "tile", "negative repeat {}", r);
  // (r0, s0, r1, s1, ...) by stride-0 expansion, then one reshape copy.
  Shape interleaved, expanded, result;
  for (std::int64_t d = 0; d < rank; ++d) {
    interleaved.push_back(1);
    interleaved.push_back(shape[d]);
    expanded.push_back(reps[static_cast<std::size_t>(d)]);
    expanded.push_back(shape[d]);
    result.push_back(reps[static_cast<std::size_t>(d)] * shape[d]);
  }
  return x.reshape(interleaved).expand(expanded).reshape(result);
}

Tensor repeat(const Tensor& x, std::int64_t repeats,
              std::optional<std::int64_t> axis) {
  const ops::CheckedOperands checked("repeat", x);
  TESSEL_CHECK(repeats >= 0, BadShape, "repeat", "negative repeats {}",
               repeats);
  const Tensor src = axis ? x : x.reshape({-1});
  const auto a = normalize_axis(axis.value_or(0), src.rank(), "repeat");
  Shape expanded = src.unsqueeze(a + 1).shape();
  expanded[static_cast<std::size_t>(a + 1)] = repeats;
  Shape result = src.shape();
  result[static_cast<std::size_t>(a)] *= repeats;
  return src.unsqueeze(a + 1).expand(expanded).reshape(result);
}

Tensor repeat(const Tensor& x, const Tensor& repeats, std::int64_t axis) {
  const ops::CheckedOperands checked("repeat", {&x, &repeats});
  const auto a = normalize_axis(axis, x.rank(), "repeat");
  TESSEL_CHECK(
      repeats.rank() == 1 && repeats.numel() == x.shape()[a], BadShape,
      "repeat",
      "repeats of shape {} must have one count per element of axis {} ({})",
      shape_string(repeats.shape()), a, x.shape()[a]);
  const Tensor counts = repeats.to(DType::I64).contiguous();
  std::vector<std::int64_t> positions;
  for (std::int64_t i = 0; i < counts.numel(); ++i) {
    const std::int64_t c = counts.const_data<std::int64_t>()[i];
    TESSEL_CHECK(c >= 0, BadShape, "repeat", "negative repeat count {}", c);
    positions.insert(positions.end(), static_cast<std::size_t>(c), i);
  }
  return index_select(x, a, from_vector(positions).to(x.device()));
}

Tensor flip(const Tensor& x, Axes axes) {
  const ops::CheckedOperands checked("flip", x);
  Tensor out = x;
  const auto mask_size = static_cast<std::size_t>(x.rank());
  SmallVector<bool, 8> flipped(mask_size, axes.empty());
  for (auto axis : axes)
    flipped[static_cast<std::size_t>(normalize_axis(axis, x.rank(), "flip"))] =
        true;
  for (std::size_t d = 0; d < mask_size; ++d) {
    if (!flipped[d] || x.shape()[d] <= 1) continue;
    const std::int64_t n = x.shape()[d];
    out = index_select(out, static_cast<std::int64_t>(d),
                       arange(n - 1, -1, -1).to(out.device()));
  }
  return out.shares_storage_with(x) ? x.clone() : out;
}

Tensor roll(const Tensor& x, const std::vector<std::int64_t>& shifts,
            Axes axes) {
  const ops::CheckedOperands checked("roll", x);
  if (axes.empty()) {
    TESSEL_CHECK(shifts.size() == 1, BadShape, "roll",
                 "without axes, roll takes one shift, got {}", shifts.size());
    return roll(x.reshape({-1}), shifts, {0}).reshape(x.shape());
  }
  TESSEL_CHECK(shifts.size() == axes.size(), BadShape, "roll",
               "{} shifts for {} axes", shifts.size(), axes.size());
  Tensor out = x;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const auto a = normalize_axis(axes[k], x.rank(), "roll");
    const std::int64_t n = x.shape()[a];
    if (n == 0) continue;
    const std::int64_t s = ((shifts[k] % n) + n) % n;
    // Output position i reads input position (i - s) mod n.
    out =
        index_select(out, a, remainder(sub(arange(n).to(out.device()), s), n));
  }
  return out.shares_storage_with(x) ? x.clone() : out;
}

Tensor nchw_to_nhwc(const Tensor& x) {
  const ops::CheckedOperands checked("nchw_to_nhwc", x);
  TESSEL_CHECK(x.rank() == 4, BadShape, "nchw_to_nhwc",
               "needs a 4-D tensor, got {}", shape_string(x.shape()));
  return x.permute({0, 2, 3, 1}).clone();
}

Tensor nhwc_to_nchw(const Tensor& x) {
  const ops::CheckedOperands checked("nhwc_to_nchw", x);
  TESSEL_CHECK(x.rank() == 4, BadShape, "nhwc_to_nchw",
               "needs a 4-D tensor, got {}", shape_string(x.shape()));
  return x.permute({0, 3, 1, 2}).clone();
}

// ---- ordering ----

namespace {

void sort_impl(const Tensor& x_in, std::int64_t axis, bool descending,
               Tensor* values, Tensor* indices, const char* op) {
  const ops::CheckedOperands checked(op, x_in);
  const Tensor x = addressable(x_in);
  const Tensor src = x.rank() == 0 ? x.reshape({1}) : x;
  const auto a = normalize_axis(axis, src.rank(), op);
  const Tensor c = src.contiguous();
  if (values) *values = empty(src.shape(), src.dtype(), src.device());
  if (indices) *indices = empty(src.shape(), DType::I64, src.device());
  if (src.numel() > 0) {
    ops::backend_of(c).sort_runs(c, values ? *values : Tensor(),
                                 indices ? *indices : Tensor(),
                                 around_axis(src.shape(), a), descending);
  }
  if (x.rank() == 0) {
    if (values) *values = values->reshape({});
    if (indices) *indices = indices->reshape({});
  }
}

}  // namespace

Tensor sort(const Tensor& x, std::int64_t axis, bool descending) {
  Tensor values;
  sort_impl(x, axis, descending, &values, nullptr, "sort");
  return values;
}

Tensor argsort(const Tensor& x, std::int64_t axis, bool descending) {
  Tensor indices;
  sort_impl(x, axis, descending, nullptr, &indices, "argsort");
  return indices;
}

TopK topk(const Tensor& x, std::int64_t k, std::int64_t axis, bool largest,
          bool sorted) {
  const ops::CheckedOperands checked("topk", x);
  const auto a =
      normalize_axis(axis, std::max<std::int64_t>(x.rank(), 1), "topk");
  const std::int64_t extent = x.rank() == 0 ? 1 : x.shape()[a];
  TESSEL_CHECK(k >= 0 && k <= extent, OutOfRange, "topk",
               "k = {} is out of range for an axis of extent {}", k, extent);
  Tensor values, indices;
  // A stable sort keeps ties in index order, as ONNX TopK asks; the result
  // is in order whether or not `sorted` asks for it.
  static_cast<void>(sorted);
  sort_impl(x, a, largest, &values, &indices, "topk");
  if (x.rank() == 0) return {values, indices};
  return {values.slice(a, 0, k).contiguous(),
          indices.slice(a, 0, k).contiguous()};
}

// ---- data-dependent ----

Tensor nonzero(const Tensor& x) {
  const ops::CheckedOperands checked("nonzero", x);
  const Backend& backend = ops::backend_of(x);
  TESSEL_CHECK(backend.has_data(), DeviceMismatch, "nonzero",
               "the result's shape depends on the values, and the {} device "
               "holds none",
               backend.name());
  const Tensor mask = x.dtype() == DType::Bool
                          ? x.contiguous()
                          : ne(addressable(x), 0).contiguous();
  const auto count = sum(mask).item<std::int64_t>();  // bool sums in i64
  Tensor out = empty({count, x.rank()}, DType::I64, x.device());
  if (count > 0 && x.rank() > 0) backend.mask_coordinates(mask, out);
  return out;
}

Tensor searchsorted(const Tensor& sorted, const Tensor& values,
                    SearchSide side) {
  const ops::CheckedOperands checked("searchsorted", {&sorted, &values});
  TESSEL_CHECK(sorted.rank() == 1, BadShape, "searchsorted",
               "the sorted tensor must be 1-D, got shape {}",
               shape_string(sorted.shape()));
  const DType common = promote_types(
      addressable(sorted).dtype(), addressable(values).dtype(), "searchsorted");
  const Tensor s = sorted.to(common).contiguous();
  const Tensor v = values.to(common).contiguous();
  Tensor out = empty(values.shape(), DType::I64, values.device());
  if (out.numel() > 0) {
    ops::backend_of(out).search_sorted(s, v, side == SearchSide::Right, out);
  }
  return out;
}

}  // namespace tessel

// The shape rules of the ops, written once over the extent type: `Shape`
// (int64 extents) for the eager ops and `SymbolicShape` (polynomials over
// named symbols) for the symbolic checker (ops/symbolic.hpp). Both get the
// same rule, the same error codes and the same messages.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/core/symbolic_shape.hpp"

namespace tessel::rules {

inline bool is_one(std::int64_t d) { return d == 1; }
inline bool is_one(const Dim& d) { return d == Dim(1); }
inline bool is_minus_one(std::int64_t d) { return d == -1; }
inline bool is_minus_one(const Dim& d) { return d == Dim(-1); }
// An extent that cannot be negative (symbols stand for extents >= 0).
inline bool valid_extent(std::int64_t d) { return d >= 0; }
inline bool valid_extent(const Dim& d) {
  return !d.is_constant() || d.value() >= 0;
}
inline bool is_zero(std::int64_t d) { return d == 0; }
inline bool is_zero(const Dim& d) { return d == Dim(); }
inline std::string str(std::int64_t d) { return std::to_string(d); }
inline std::string str(const Dim& d) { return d.str(); }
inline std::string str(const Shape& s) { return shape_string(s); }
inline std::string str(const SymbolicShape& s) { return shape_string(s); }
inline std::int64_t product(std::int64_t a, std::int64_t b, const char* op) {
  return checked_mul(a, b, op);
}
inline Dim product(const Dim& a, const Dim& b, const char*) { return a * b; }
inline std::int64_t sum(std::int64_t a, std::int64_t b, const char* op) {
  return checked_add(a, b, op);
}
inline Dim sum(const Dim& a, const Dim& b, const char*) { return a + b; }
inline std::optional<std::int64_t> divide_exactly(std::int64_t a,
                                                  std::int64_t b) {
  if (b == 0 || a % b != 0) return std::nullopt;
  return a / b;
}
inline std::optional<Dim> divide_exactly(const Dim& a, const Dim& b) {
  if (b == Dim()) return std::nullopt;
  return a.divide_exactly(b);
}

// NumPy broadcasting of any number of shapes: trailing axes aligned, an
// extent 1 stretches, equal extents stay. E2101 names the two that clash.
// (Symbolically, "seq" against 768 clashes: it cannot be proven equal.)
template <class S>
S broadcast(std::span<const S> shapes, const char* op) {
  using D = typename S::value_type;
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  S out(rank, D(1));
  // Index of the shape that fixed each output extent, for the error message.
  SmallVector<std::size_t, 6> owner(rank, 0);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const S& s = shapes[k];
    const std::size_t lead = rank - s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      const D& extent = s[i];
      D& current = out[lead + i];
      if (extent == current || is_one(extent)) continue;
      TESSEL_CHECK(
          is_one(current), BroadcastMismatch, op,
          "shapes {} and {} cannot be broadcast: axis {} has extent "
          "{} in one and {} in the other",
          str(shapes[owner[lead + i]]), str(s),
          static_cast<std::int64_t>(lead + i) - static_cast<std::int64_t>(rank),
          str(current), str(extent));
      current = extent;
      owner[lead + i] = k;
    }
  }
  return out;
}

// matmul's result: 1-D operands are promoted (a row, a column) and their
// axis dropped again; batch axes broadcast. E2102 for a rank-0 operand,
// E2103 for inner extents that differ, E2101 for batch axes that clash.
template <class S>
S matmul(const S& a_in, const S& b_in, const char* op) {
  TESSEL_CHECK(a_in.size() > 0 && b_in.size() > 0, BadShape, op,
               "operands need at least one axis, got shapes {} and {}",
               str(a_in), str(b_in));
  using D = typename S::value_type;
  S a;
  if (a_in.size() == 1) a.push_back(D(1));
  for (const D& d : a_in) a.push_back(d);
  S b = b_in;
  if (b.size() == 1) b.push_back(D(1));
  const D& k = a.back();
  const D& kb = b[b.size() - 2];
  TESSEL_CHECK(k == kb, InnerDimMismatch, op,
               "inner dimensions differ: {} @ {} ({} vs {})", str(a_in),
               str(b_in), str(k), str(kb));
  const S batches[] = {S(a.begin(), a.end() - 2), S(b.begin(), b.end() - 2)};
  S shape;
  try {
    shape = broadcast<S>(batches, op);
  } catch (const ShapeError&) {
    detail::fail(ErrorCode::BroadcastMismatch, op,
                 "batch axes of {} and {} cannot be broadcast", str(a_in),
                 str(b_in));
  }
  if (a_in.size() > 1) shape.push_back(a[a.size() - 2]);
  if (b_in.size() > 1) shape.push_back(b.back());
  return shape;
}

// Joining along `axis` (negative counts from the end): every other extent
// equal (E2102), the axis extents summed.
template <class S>
S concat(std::span<const S> shapes, std::int64_t axis, const char* op) {
  TESSEL_CHECK(!shapes.empty(), BadShape, op, "no tensors to concatenate");
  const S& first = shapes.front();
  TESSEL_CHECK(first.size() > 0, BadShape, op,
               "cannot concatenate rank-0 tensors");
  axis = normalize_axis(axis, static_cast<std::int64_t>(first.size()), op);
  const auto a = static_cast<std::size_t>(axis);
  using D = typename S::value_type;
  D total{};
  for (const S& s : shapes) {
    bool ok = s.size() == first.size();
    for (std::size_t d = 0; ok && d < first.size(); ++d) {
      ok = d == a || s[d] == first[d];
    }
    TESSEL_CHECK(ok, BadShape, op, "shapes {} and {} differ outside axis {}",
                 str(first), str(s), axis);
    total = sum(total, s[a], op);
  }
  S out = first;
  out[a] = total;
  return out;
}

// reshape's target with its one -1 extent inferred so that the element
// count stays that of `from`; E2102 when impossible (or, symbolically, not
// provable).
template <class S>
S reshape(S target, const S& from, const char* op) {
  using D = typename S::value_type;
  D count(1);
  for (const D& d : from) count = product(count, d, op);
  std::optional<std::size_t> infer;
  D known(1);
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (is_minus_one(target[i])) {
      TESSEL_CHECK(!infer, BadShape, op, "only one extent may be -1, got {}",
                   str(target));
      infer = i;
      continue;
    }
    TESSEL_CHECK(valid_extent(target[i]), BadShape, op,
                 "invalid extent {} in {}", str(target[i]), str(target));
    known = product(known, target[i], op);
  }
  if (infer) {
    const std::optional<D> rest = divide_exactly(count, known);
    TESSEL_CHECK(rest.has_value(), BadShape, op,
                 "cannot reshape {} ({} elements) into {}", str(from),
                 str(count), str(target));
    target[*infer] = *rest;
    known = product(known, *rest, op);
  }
  TESSEL_CHECK(known == count, BadShape, op,
               "cannot reshape {} ({} elements) into {}", str(from), str(count),
               str(target));
  return target;
}

// ---- axes ------------------------------------------------------------------
// These rules take and give axis numbers, so that views (which move strides
// with the extents) and the symbolic checker (which moves extents only) run
// the same validation.

// The axes a reduction removes, as a mask over `rank` axes: negative axes
// count from the end, no axes means all; E2102 for an axis given twice.
inline SmallVector<bool, 8> reduced_axes(std::span<const std::int64_t> axes,
                                         std::int64_t rank, const char* op) {
  SmallVector<bool, 8> mask(static_cast<std::size_t>(rank), axes.empty());
  for (const std::int64_t axis : axes) {
    const auto a = static_cast<std::size_t>(normalize_axis(axis, rank, op));
    TESSEL_CHECK(!mask[a], BadShape, op,
                 "axis {} is repeated (given twice) in {}", a,
                 shape_string(axes));
    mask[a] = true;
  }
  return mask;
}

// A reduction's result: reduced axes dropped, or kept as 1 with keepdims.
template <class S>
S reduce(const S& s, std::span<const std::int64_t> axes, bool keepdims,
         const char* op) {
  using D = typename S::value_type;
  const auto mask = reduced_axes(axes, static_cast<std::int64_t>(s.size()), op);
  S out;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (!mask[d]) {
      out.push_back(s[d]);
    } else if (keepdims) {
      out.push_back(D(1));
    }
  }
  return out;
}

// A permutation of `rank` axes, each normalised; E2102 for a wrong count or
// an axis given twice.
inline SmallVector<std::int64_t, 8> permutation(
    std::span<const std::int64_t> dims, std::int64_t rank, const char* op) {
  TESSEL_CHECK(static_cast<std::int64_t>(dims.size()) == rank, BadShape, op,
               "{} axes given for a tensor of rank {}", dims.size(), rank);
  SmallVector<bool, 8> seen(dims.size(), false);
  SmallVector<std::int64_t, 8> out;
  for (const std::int64_t axis : dims) {
    const std::int64_t d = normalize_axis(axis, rank, op);
    TESSEL_CHECK(!seen[static_cast<std::size_t>(d)], BadShape, op,
                 "axis {} repeated in permutation {}", d, shape_string(dims));
    seen[static_cast<std::size_t>(d)] = true;
    out.push_back(d);
  }
  return out;
}

// The axis `squeeze(dim)` removes: E2102 unless its extent is 1.
template <class S>
std::size_t squeezed_axis(const S& s, std::int64_t dim, const char* op) {
  const auto d = static_cast<std::size_t>(
      normalize_axis(dim, static_cast<std::int64_t>(s.size()), op));
  TESSEL_CHECK(is_one(s[d]), BadShape, op,
               "axis {} of shape {} has extent {}, not 1", d, str(s),
               str(s[d]));
  return d;
}

// The axes `squeeze(dims)` removes, highest first (so that erasing one
// leaves the next in place): E2102 for an axis whose extent is not 1 or
// one listed twice.
template <class S>
SmallVector<std::size_t, 8> squeezed_axes(const S& s,
                                          std::span<const std::int64_t> dims,
                                          const char* op) {
  SmallVector<std::size_t, 8> out;
  for (const std::int64_t dim : dims) out.push_back(squeezed_axis(s, dim, op));
  std::sort(out.begin(), out.end(), std::greater<>());
  for (std::size_t k = 1; k < out.size(); ++k) {
    TESSEL_CHECK(out[k] != out[k - 1], BadShape, op,
                 "axis {} is listed twice in {}", out[k], shape_string(dims));
  }
  return out;
}

// The permutation `transpose()` with no axes applies: every axis reversed
// (NumPy's default, and the seed's).
inline SmallVector<std::int64_t, 8> reversed_axes(std::int64_t rank) {
  SmallVector<std::int64_t, 8> out;
  for (std::int64_t d = rank - 1; d >= 0; --d) out.push_back(d);
  return out;
}

// ---- indexing: select (index), slice, gather, dot ----
// The eager ops (Tensor::select/slice, gather, dot) and the symbolic
// checker (ops/symbolic.hpp) both take their shapes and errors from here.

inline std::optional<std::int64_t> constant_of(std::int64_t d) { return d; }
inline std::optional<std::int64_t> constant_of(const Dim& d) {
  if (!d.is_constant()) return std::nullopt;
  return d.value();
}

// `s` without axis d.
template <class S>
S without_axis(const S& s, std::size_t d) {
  S out;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (k != d) out.push_back(s[k]);
  }
  return out;
}

// The axis select(dim, index) removes: E2302 when a known extent does not
// hold the index (negative indices count back). A symbolic extent is taken
// to hold it: the index is checked again when the shape is bound and run.
template <class S>
std::size_t selected_axis(const S& s, std::int64_t dim, std::int64_t index,
                          const char* op) {
  const auto d = static_cast<std::size_t>(
      normalize_axis(dim, static_cast<std::int64_t>(s.size()), op));
  if (const auto extent = constant_of(s[d])) {
    TESSEL_CHECK(index >= -*extent && index < *extent, OutOfRange, op,
                 "index {} is out of range for axis {} of extent {} (shape {})",
                 index, d, *extent, str(s));
  }
  return d;
}

// The part [lo, hi) of an axis of known extent that slice(start, stop)
// keeps: NumPy's clamping (negatives count back, bounds past either end
// clamp to it, hi >= lo).
struct SliceBounds {
  std::int64_t lo, hi;
};
inline SliceBounds slice_bounds(std::int64_t extent, std::int64_t start,
                                std::int64_t stop) {
  const auto clamp = [extent](std::int64_t k) {
    if (k < 0) k += extent;
    return std::clamp<std::int64_t>(k, 0, extent);
  };
  const std::int64_t lo = clamp(start);
  return {lo, std::max(clamp(stop), lo)};
}

inline void check_slice_step(std::int64_t step, const char* op) {
  TESSEL_CHECK(step > 0, BadShape, op,
               "step must be positive, got {} (use flip to reverse)", step);
}

// The extent slice(start, stop, step) leaves of an axis of extent e. A
// known e follows slice_bounds. A symbolic e cannot be clamped, so the
// bounds are taken as given, the shape-engine seed's rule: a negative
// bound counts back from e (stop = -1 gives e - 1), a stop of INT64_MAX
// means the end, and the extent is stop - start, divided by a step > 1
// only when that difference is a known number (ceil((stop - start) /
// step) is no polynomial otherwise: E2102).
// The eager view also needs where the slice starts: both from one rule.
struct SlicedAxis {
  std::int64_t extent, lo;
};
inline SlicedAxis sliced_axis(std::int64_t extent, std::int64_t start,
                              std::int64_t stop, std::int64_t step,
                              const char* op) {
  check_slice_step(step, op);
  const SliceBounds b = slice_bounds(extent, start, stop);
  return {(b.hi - b.lo + step - 1) / step, b.lo};
}
inline std::int64_t sliced_extent(std::int64_t extent, std::int64_t start,
                                  std::int64_t stop, std::int64_t step,
                                  const char* op) {
  return sliced_axis(extent, start, stop, step, op).extent;
}
inline Dim sliced_extent(const Dim& extent, std::int64_t start,
                         std::int64_t stop, std::int64_t step, const char* op) {
  check_slice_step(step, op);
  if (extent.is_constant())
    return Dim(sliced_extent(extent.value(), start, stop, step, op));
  const auto bound = [&](std::int64_t k) {
    if (k == std::numeric_limits<std::int64_t>::max()) return extent;
    return k < 0 ? extent + Dim(k) : Dim(k);
  };
  const Dim size = bound(stop) + Dim(-1) * bound(start);
  if (step == 1) return size;
  TESSEL_CHECK(size.is_constant(), BadShape, op,
               "a slice with step {} of the symbolic extent {} has extent "
               "ceil(({}) / {}), which is not a polynomial",
               step, extent.str(), size.str(), step);
  return Dim((std::max<std::int64_t>(size.value(), 0) + step - 1) / step);
}

// gather(x, index, axis), NumPy's take: x's shape with axis `axis`
// replaced by the index's shape; E2102 for a rank-0 x.
template <class S>
S gather(const S& x, const S& index, std::int64_t axis, const char* op) {
  TESSEL_CHECK(!x.empty(), BadShape, op, "cannot gather from a rank-0 tensor");
  const auto a = static_cast<std::size_t>(
      normalize_axis(axis, static_cast<std::int64_t>(x.size()), op));
  S out;
  for (std::size_t d = 0; d < a; ++d) out.push_back(x[d]);
  for (const auto& e : index) out.push_back(e);
  for (std::size_t d = a + 1; d < x.size(); ++d) out.push_back(x[d]);
  return out;
}

// dot(a, b) of two vectors of one length: a scalar. E2102 for other ranks,
// E2103 for lengths that differ (or cannot be proven equal).
template <class S>
S dot(const S& a, const S& b, const char* op) {
  TESSEL_CHECK(a.size() == 1 && b.size() == 1, BadShape, op,
               "needs two 1-D tensors, got shapes {} and {} (use matmul)",
               str(a), str(b));
  TESSEL_CHECK(a[0] == b[0], InnerDimMismatch, op, "lengths differ: {} and {}",
               str(a), str(b));
  return S{};
}

// The first and last axes `flatten(start, end)` merges (a rank-0 tensor
// flattens to one element before this is asked).
inline std::pair<std::int64_t, std::int64_t> flattened_axes(std::int64_t rank,
                                                            std::int64_t start,
                                                            std::int64_t end,
                                                            const char* op) {
  const auto a = normalize_axis(start, rank, op);
  const auto b = normalize_axis(end, rank, op);
  TESSEL_CHECK(a <= b, BadShape, op, "start_dim {} comes after end_dim {}", a,
               b);
  return {a, b};
}

template <class S>
S flatten(const S& s, std::int64_t start, std::int64_t end, const char* op) {
  using D = typename S::value_type;
  if (s.empty()) return S{D(1)};
  const auto [a, b] =
      flattened_axes(static_cast<std::int64_t>(s.size()), start, end, op);
  S out;
  D merged(1);
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(s.size()); ++d) {
    const D& extent = s[static_cast<std::size_t>(d)];
    if (d < a || d > b) {
      out.push_back(extent);
      continue;
    }
    merged = product(merged, extent, op);
    if (d == b) out.push_back(merged);
  }
  return out;
}

// ---- layers ----------------------------------------------------------------

// linear(x, weight): x (..., in) with weight (out, in) gives (..., out).
template <class S>
S linear(const S& x, const S& weight, const char* op) {
  TESSEL_CHECK(weight.size() == 2 && !x.empty(), BadShape, op,
               "weight must be [out, in] and x at least 1-D; got {} and {}",
               str(weight), str(x));
  TESSEL_CHECK(x.back() == weight[1], InnerDimMismatch, op,
               "x {} has {} features but weight {} expects {}", str(x),
               str(x.back()), str(weight), str(weight[1]));
  S out = x;
  out.back() = weight[0];
  return out;
}

// hadamard_transform(x, block): the output is x's shape; the runs are
// `block` values of the last axis (0: the whole axis), a power of two
// dividing it. Returns the block (1 for an empty last axis and block 0:
// there is nothing to transform). Eager only: no symbolic form.
inline std::int64_t hadamard_block(const Shape& x, std::int64_t block,
                                   const char* op) {
  TESSEL_CHECK(!x.empty(), BadShape, op,
               "x needs a last axis to transform, got a scalar");
  const std::int64_t last = x.back();
  if (block == 0 && last == 0) return 1;
  const std::int64_t n = block == 0 ? last : block;
  TESSEL_CHECK(
      n >= 1 && (n & (n - 1)) == 0, BadShape, op,
      "the runs transformed must be a power of two long, got {}{}", n,
      block == 0 ? " (the last axis; give a block that divides it)" : "");
  TESSEL_CHECK(last % n == 0, BadShape, op,
               "runs of {} do not divide the last axis of x {}", n, str(x));
  return n;
}

// embedding(weight, ids): weight (vocab, dim), ids of any shape.
template <class S>
S embedding(const S& weight, const S& ids, const char* op) {
  TESSEL_CHECK(weight.size() == 2, BadShape, op,
               "weight must be (vocab, dim), got {}", str(weight));
  S out = ids;
  out.push_back(weight[1]);
  return out;
}

// Attention over (batch, heads, sequence, head_dim) operands: query heads
// share key/value heads in groups (grouped-query attention), so the query
// head count must be a multiple of the key/value head count. The result
// has q's batch, heads and length and v's head dimension.
template <class S>
S attention(const S& q, const S& k, const S& v, const char* op) {
  TESSEL_CHECK(q.size() == 4 && k.size() == 4 && v.size() == 4, BadShape, op,
               "needs q, k, v of rank 4 (batch, heads, sequence, head_dim), "
               "got {}, {}, {}",
               str(q), str(k), str(v));
  TESSEL_CHECK(k[0] == q[0] && v[0] == q[0], BadShape, op,
               "batch sizes differ: q {}, k {}, v {}", str(q), str(k), str(v));
  TESSEL_CHECK(v[1] == k[1] && v[2] == k[2], BadShape, op,
               "k {} and v {} must have the same heads and sequence length",
               str(k), str(v));
  const bool grouped = !is_zero(k[1]) &&
                       (q[1] == k[1] || divide_exactly(q[1], k[1]).has_value());
  TESSEL_CHECK(grouped, BadShape, op,
               "{} query heads are not a multiple of {} key/value heads "
               "(q {}, k {})",
               str(q[1]), str(k[1]), str(q), str(k));
  TESSEL_CHECK(k[3] == q[3], InnerDimMismatch, op,
               "q {} and k {} have different head dimensions", str(q), str(k));
  return S{q[0], q[1], q[2], v[3]};
}

// ---- windows: convolution and pooling geometry ------------------------------
// Over integer extents every geometry works. Over symbolic ones the output
// extent (in + pads - span) / stride + 1 is a polynomial only when the
// division is exact (stride 1, or an extent like 2*h over stride 2), so
// the checker proves that or refuses with E2102, as slice's step does.

using Ints = std::vector<std::int64_t>;

// How the padding is chosen: given explicitly, none (ONNX's VALID), or
// ONNX's SAME_UPPER / SAME_LOWER (output = ceil(in / stride), the odd pixel
// at the end or the start).
enum class WindowPadding { Explicit, Valid, SameUpper, SameLower };

// One value per spatial axis: none gives `fallback`, one is repeated, else
// exactly `n` values, each at least `minimum`.
inline Ints per_axis(const Ints& v, std::size_t n, std::int64_t fallback,
                     const char* what, const char* op,
                     std::int64_t minimum = 1) {
  Ints out = v.empty() ? Ints(n, fallback) : v.size() == 1 ? Ints(n, v[0]) : v;
  TESSEL_CHECK(out.size() == n, BadShape, op,
               "{} has {} values for {} spatial axes", what, v.size(), n);
  for (const std::int64_t e : out) {
    TESSEL_CHECK(e >= minimum, BadShape, op, "{} must be {}, got {}", what,
                 minimum == 1 ? std::string("positive")
                              : "at least " + std::to_string(minimum),
                 e);
  }
  return out;
}

// Explicit padding as (begin, end) per axis: one value for every side, one
// per axis for both sides, or all begins then all ends (ONNX's `pads`).
inline std::pair<Ints, Ints> explicit_padding(const Ints& padding,
                                              std::size_t n, const char* op) {
  Ints begin(n, 0), end(n, 0);
  if (padding.empty()) return {begin, end};
  TESSEL_CHECK(
      padding.size() == 1 || padding.size() == n || padding.size() == 2 * n,
      BadShape, op,
      "padding has {} values for {} spatial axes (want 1, {} or {})",
      padding.size(), n, n, 2 * n);
  for (std::size_t d = 0; d < n; ++d) {
    begin[d] = padding[padding.size() == 1 ? 0 : d];
    end[d] = padding.size() == 2 * n ? padding[n + d] : begin[d];
    TESSEL_CHECK(begin[d] >= 0 && end[d] >= 0, BadShape, op,
                 "negative padding on axis {}", d);
  }
  return {begin, end};
}

// The extent a kernel of `kernel` taps covers with `dilation`.
inline std::int64_t window_span(std::int64_t kernel, std::int64_t dilation) {
  return dilation * (kernel - 1) + 1;
}

// The output extent of spatial axis `axis` of a window (convolution kernel
// or pooling window) sliding over `in`; SAME modes resolve `pad_begin` and
// `pad_end`. E2102 when the window is larger than the padded input. With
// ceil_mode the last partial window counts unless it would start in the end
// padding (PyTorch's pooling rule).
inline std::int64_t window_extent(std::int64_t in, std::int64_t kernel,
                                  std::int64_t stride, std::int64_t dilation,
                                  std::int64_t& pad_begin,
                                  std::int64_t& pad_end, WindowPadding mode,
                                  bool ceil_mode, std::size_t axis,
                                  const char* op) {
  const std::int64_t span = window_span(kernel, dilation);
  if (mode == WindowPadding::SameUpper || mode == WindowPadding::SameLower) {
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total =
        std::max<std::int64_t>(0, (out - 1) * stride + span - in);
    pad_begin =
        mode == WindowPadding::SameUpper ? total / 2 : total - total / 2;
    pad_end = total - pad_begin;
  }
  const std::int64_t room = in + pad_begin + pad_end - span;
  TESSEL_CHECK(room >= 0, BadShape, op,
               "the kernel ({} with dilation {}) is larger than the padded "
               "input ({}) on spatial axis {}",
               kernel, dilation, in + pad_begin + pad_end, axis);
  std::int64_t out = room / stride + 1;
  if (ceil_mode && room % stride != 0 && out * stride < in + pad_begin) ++out;
  return out;
}

// The same over symbolic extents. Known extents take the rule above; with a
// symbol, SAME's ceil(in / stride) and the explicit floor(room / stride)
// must divide exactly (E2102 otherwise), ceil and floor then agree, and the
// padded input is taken to hold the window (the run checks again).
inline Dim window_extent(const Dim& in, const Dim& kernel, std::int64_t stride,
                         std::int64_t dilation, std::int64_t& pad_begin,
                         std::int64_t& pad_end, WindowPadding mode,
                         bool ceil_mode, std::size_t axis, const char* op) {
  TESSEL_CHECK(kernel.is_constant(), BadShape, op,
               "the kernel extent {} on spatial axis {} must be known",
               kernel.str(), axis);
  if (in.is_constant()) {
    return Dim(window_extent(in.value(), kernel.value(), stride, dilation,
                             pad_begin, pad_end, mode, ceil_mode, axis, op));
  }
  const bool same =
      mode == WindowPadding::SameUpper || mode == WindowPadding::SameLower;
  // SAME: out = ceil(in / stride); otherwise floor(room / stride) + 1.
  const Dim numerator = same ? in
                             : in + Dim(pad_begin + pad_end -
                                        window_span(kernel.value(), dilation));
  const std::optional<Dim> quotient = divide_exactly(numerator, Dim(stride));
  TESSEL_CHECK(quotient.has_value(), BadShape, op,
               "stride {} does not divide {} exactly on spatial axis {}, so "
               "the output extent is no polynomial; bind the symbol first",
               stride, numerator.str(), axis);
  return same ? *quotient : *quotient + Dim(1);
}

struct WindowGeometry {
  Ints stride, dilation, pad_begin, pad_end, out;
};

// The per-axis strides, dilations and explicit padding of a window over
// `n` spatial axes (SAME padding is resolved per axis by window_extent);
// `out` left empty.
inline WindowGeometry window_parameters(std::size_t n, const Ints& stride,
                                        const Ints& dilation,
                                        const Ints& padding, WindowPadding mode,
                                        const char* op) {
  WindowGeometry g;
  g.stride = per_axis(stride, n, 1, "stride", op);
  g.dilation = per_axis(dilation, n, 1, "dilation", op);
  std::tie(g.pad_begin, g.pad_end) = explicit_padding(
      mode == WindowPadding::Explicit ? padding : Ints{}, n, op);
  return g;
}

// Output extents and padding of a window over integer extents `in`.
inline WindowGeometry window_geometry(const Ints& in, const Ints& kernel,
                                      const Ints& stride, const Ints& dilation,
                                      const Ints& padding, WindowPadding mode,
                                      bool ceil_mode, const char* op) {
  const std::size_t n = in.size();
  WindowGeometry g = window_parameters(n, stride, dilation, padding, mode, op);
  g.out.resize(n);
  for (std::size_t d = 0; d < n; ++d) {
    g.out[d] =
        window_extent(in[d], kernel[d], g.stride[d], g.dilation[d],
                      g.pad_begin[d], g.pad_end[d], mode, ceil_mode, d, op);
  }
  return g;
}

// The input channels of a convolution's operands, and the output channels
// it makes. Channels-first data is (N, C, spatial...) with weights (O, C/g,
// kernel...), or transposed (C, O/g, kernel...); channels-last data is (N,
// spatial..., C) with weights (kernel..., C/g, O), or transposed
// (kernel..., O/g, C). E2102 for ranks outside 3..5 and for channels that
// do not match or do not divide into the groups.
template <class S>
typename S::value_type convolution_channels(const S& x, const S& w,
                                            std::int64_t groups,
                                            bool channels_last, bool transposed,
                                            const char* op) {
  using D = typename S::value_type;
  TESSEL_CHECK(x.size() >= 3 && x.size() <= 5 && w.size() == x.size(), BadShape,
               op,
               "needs input and weights of rank 3 to 5 (1 to 3 spatial axes), "
               "got {} and {}",
               str(x), str(w));
  const std::size_t r = w.size();
  const D channels = channels_last ? x[r - 1] : x[1];
  // The weights' two channel axes in channels-first order.
  const D& w0 = channels_last ? w[r - 1] : w[0];
  const D& w1 = channels_last ? w[r - 2] : w[1];
  const D g(groups);
  TESSEL_CHECK(groups >= 1 && divide_exactly(channels, g).has_value(), BadShape,
               op,
               "{} input channels are not divisible into {} groups (input {})",
               str(channels), groups, str(x));
  const D expected = transposed ? w0 : product(w1, g, op);
  TESSEL_CHECK(
      expected == channels, BadShape, op,
      "weights {} expect {} input channels but the input {} has {} (groups {})",
      str(w), str(expected), str(x), str(channels), groups);
  const D out_channels = transposed ? product(w1, g, op) : w0;
  TESSEL_CHECK(divide_exactly(out_channels, g).has_value(), BadShape, op,
               "{} output channels are not divisible into {} groups",
               str(out_channels), groups);
  return out_channels;
}

struct ConvolutionWindow {
  Ints stride, dilation, padding;
  WindowPadding mode = WindowPadding::Explicit;
};

// The output shape of a (not transposed) convolution in the operands'
// layout (see convolution_channels); `geometry`, when given, receives the
// strides, dilations and resolved padding (integer extents only).
template <class S>
S convolution(const S& x, const S& w, const ConvolutionWindow& window,
              std::int64_t groups, bool channels_last, const char* op,
              WindowGeometry* geometry = nullptr) {
  using D = typename S::value_type;
  const D out_channels =
      convolution_channels(x, w, groups, channels_last, false, op);
  const std::size_t n = x.size() - 2;
  const std::size_t first = channels_last ? 1 : 2;  // first spatial axis of x
  const std::size_t first_tap = channels_last ? 0 : 2;  // ... of w
  WindowGeometry g = window_parameters(n, window.stride, window.dilation,
                                       window.padding, window.mode, op);
  S out;
  out.push_back(x[0]);
  if (!channels_last) out.push_back(out_channels);
  for (std::size_t d = 0; d < n; ++d) {
    const D extent = window_extent(x[first + d], w[first_tap + d], g.stride[d],
                                   g.dilation[d], g.pad_begin[d], g.pad_end[d],
                                   window.mode, false, d, op);
    if constexpr (std::is_same_v<D, std::int64_t>) g.out.push_back(extent);
    out.push_back(extent);
  }
  if (channels_last) out.push_back(out_channels);
  if (geometry != nullptr) *geometry = std::move(g);
  return out;
}

// The input rows a strided window leaves unread at the end: what a
// transposed convolution's output_padding must restore so that its output
// (the gradient of a convolution) has the input's extent.
inline std::int64_t unread_by_stride(std::int64_t in, std::int64_t out,
                                     std::int64_t stride, std::int64_t span,
                                     std::int64_t pad_begin,
                                     std::int64_t pad_end) {
  return in - ((out - 1) * stride + span - pad_begin - pad_end);
}

}  // namespace tessel::rules

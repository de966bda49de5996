// t[key] and t[key] = value with NumPy's rules for basic indexing (ints,
// slices with any step, None, Ellipsis) and one advanced index: an integer
// array or a boolean mask. Every basic index is a view; a negative step
// reads through a positive-step view and flips it (tessel strides are never
// negative, DESIGN §1), and a write through one flips the value instead, so
// both stay exact. A boolean mask over k axes is the integer array of its
// true positions (nonzero) over those k axes merged into one, so both kinds
// of advanced index share one gather and one scatter.
#include <Python.h>

#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

struct Indexed {
  Tensor view;   // the basic-indexing view
  Axes flipped;  // its axes that a negative step reverses
  std::optional<std::int64_t> array_axis;  // where the integer array applies
  Tensor array_index;                      // the integer array (i64), if any
  // The axes of the view the array indexes: 1 for an integer array, the
  // mask's rank for a boolean mask (merged into one before indexing).
  std::int64_t array_span = 1;
  // NumPy counts ints as advanced indices when an array is present; when
  // a slice, None or Ellipsis separates them, the array's axes go first.
  bool array_axes_first = false;
};

// An integer array index (a tensor, NumPy array or list); a rank-0
// integer tensor counts as an int, as in NumPy.
bool is_array_index(nb::handle item) {
  if (nb::isinstance<Tensor>(item))
    return nb::cast<const Tensor&>(item).rank() > 0;
  if (PyList_Check(item.ptr())) return true;
  if (!nb::hasattr(item, "__dlpack__")) return false;
  // A NumPy array defines __index__ too; only its 0-d form is an int.
  return !PyIndex_Check(item.ptr()) ||
         (nb::hasattr(item, "ndim") &&
          nb::cast<std::int64_t>(item.attr("ndim")) > 0);
}

// A boolean mask index: bool values of rank >= 1 (a tensor, NumPy array
// or nested list).
bool is_mask_index(nb::handle item) {
  return is_array_index(item) && to_tensor(item).dtype() == DType::Bool;
}

// Axes of the indexed tensor that `key` consumes (a mask its rank).
std::int64_t consumed_axes(const std::vector<nb::handle>& items) {
  std::int64_t n = 0;
  for (nb::handle item : items) {
    if (item.is_none() || item.ptr() == Py_Ellipsis) continue;
    n += is_mask_index(item) ? to_tensor(item).rank() : 1;
  }
  return n;
}

Indexed apply_key(const Tensor& t, nb::handle key) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle item : nb::borrow<nb::tuple>(key)) items.push_back(item);
  } else {
    items.push_back(key);
  }
  const std::int64_t consumed = consumed_axes(items);
  if (consumed > t.rank()) {
    throw_error(ErrorCode::OutOfRange,
                "[index] too many indices: " + std::to_string(consumed) +
                    " for a tensor of rank " + std::to_string(t.rank()));
  }
  Indexed out{t, {}, std::nullopt, {}, false};
  std::int64_t axis = 0;
  bool seen_ellipsis = false;
  // Positions in the key of the first and last advanced-capable item (int
  // or array) and whether anything else lies between them.
  std::ptrdiff_t first_advanced = -1, last_advanced = -1;
  for (std::size_t position = 0; position < items.size(); ++position) {
    nb::handle item = items[position];
    PyObject* o = item.ptr();
    const bool advanced =
        is_array_index(item) || (PyIndex_Check(o) && !PyBool_Check(o));
    if (!advanced) continue;
    if (first_advanced < 0)
      first_advanced = static_cast<std::ptrdiff_t>(position);
    last_advanced = static_cast<std::ptrdiff_t>(position);
  }
  for (auto p = first_advanced; p >= 0 && p <= last_advanced; ++p) {
    PyObject* o = items[static_cast<std::size_t>(p)].ptr();
    if (o == Py_None || o == Py_Ellipsis || PySlice_Check(o))
      out.array_axes_first = true;
  }
  for (nb::handle item : items) {
    PyObject* o = item.ptr();
    if (item.is_none()) {
      out.view = out.view.unsqueeze(axis);
      ++axis;
    } else if (o == Py_Ellipsis) {
      if (seen_ellipsis) {
        throw_error(ErrorCode::BadShape,
                    "[index] an index can hold only one Ellipsis");
      }
      seen_ellipsis = true;
      axis += t.rank() - consumed;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw nb::python_error();
      const Py_ssize_t extent = static_cast<Py_ssize_t>(out.view.shape()[axis]);
      const Py_ssize_t count =
          PySlice_AdjustIndices(extent, &start, &stop, step);
      if (step > 0) {
        out.view = out.view.slice(axis, start, stop, step);
      } else if (count == 0) {
        out.view = out.view.slice(axis, 0, 0);
      } else {
        const Py_ssize_t lowest = start + (count - 1) * step;
        out.view = out.view.slice(axis, lowest, start + 1, -step);
        out.flipped.push_back(axis);
      }
      ++axis;
    } else if (is_array_index(item)) {
      if (out.array_axis) {
        throw_error(
            ErrorCode::BadShape,
            "[index] only one integer-array or boolean-mask index per key is "
            "supported; use take_along_axis or index_select for more");
      }
      Tensor index = to_tensor(item);
      if (index.dtype() == DType::Bool) {
        // The mask covers the next index.rank() axes, extent for extent
        // (NumPy's IndexError otherwise).
        const Shape& extents = out.view.shape();
        const std::int64_t k = index.rank();
        bool matches = axis + k <= out.view.rank();
        for (std::int64_t d = 0; matches && d < k; ++d)
          matches = index.shape()[d] == extents[axis + d];
        if (!matches) {
          throw_error(
              ErrorCode::OutOfRange,
              "[index] a boolean mask of shape " + shape_string(index.shape()) +
                  " does not match the indexed axes of shape " +
                  shape_string(extents) + " from axis " + std::to_string(axis));
        }
        out.array_axis = axis;
        out.array_span = k;
        out.array_index = nonzero(index.reshape({index.numel()})).reshape({-1});
        axis += k;
        continue;
      }
      if (!is_integral(index.dtype())) {
        throw_error(ErrorCode::BadDType,
                    "[index] an index array must hold integers, got " +
                        std::string(dtype_name(index.dtype())));
      }
      out.array_axis = axis;
      out.array_index = index.to(DType::I64);
      ++axis;
    } else if (PyIndex_Check(o) && !PyBool_Check(o)) {
      out.view = out.view.select(axis, to_index(item, "index"));
    } else {
      throw_error(ErrorCode::BadDType,
                  "[index] only ints, slices, None, Ellipsis and integer "
                  "arrays index a "
                  "tensor, got " +
                      python_type_name(item));
    }
  }
  return out;
}

// x with the axes a mask covers merged into one (a copy when the strides
// allow no view).
Tensor merge_span(const Tensor& x, const Indexed& indexed) {
  if (indexed.array_span == 1) return x;
  const std::int64_t axis = *indexed.array_axis;
  Shape merged;
  std::int64_t span = 1;
  for (std::int64_t i = 0; i < x.rank(); ++i) {
    if (i < axis || i >= axis + indexed.array_span) {
      merged.push_back(x.shape()[i]);
    } else {
      span *= x.shape()[i];
      if (i == axis + indexed.array_span - 1) merged.push_back(span);
    }
  }
  return x.reshape(merged);
}

// Applies the advanced index of `indexed` to `x` (the view or the value of
// a write): the array's shape replaces the indexed axis (the mask's axes).
Tensor take(const Tensor& x_in, const Indexed& indexed) {
  const std::int64_t axis = *indexed.array_axis;
  const Tensor& index = indexed.array_index;
  const Tensor x = merge_span(x_in, indexed);
  Tensor picked = index_select(x, axis, index.reshape({index.numel()}));
  Shape shape;
  for (std::int64_t i = 0; i < axis; ++i) shape.push_back(x.shape()[i]);
  for (std::int64_t e : index.shape()) shape.push_back(e);
  for (std::int64_t i = axis + 1; i < x.rank(); ++i)
    shape.push_back(x.shape()[i]);
  Tensor result = picked.reshape(shape);
  if (!indexed.array_axes_first || axis == 0) return result;
  // Move the index's axes [axis, axis + k) to the front.
  const std::int64_t k = index.rank();
  std::vector<std::int64_t> order;
  for (std::int64_t i = 0; i < k; ++i) order.push_back(axis + i);
  for (std::int64_t i = 0; i < result.rank(); ++i) {
    if (i < axis || i >= axis + k) order.push_back(i);
  }
  return result.permute(
      std::span<const std::int64_t>(order.data(), order.size()));
}

Tensor get_item(const Tensor& t, nb::handle key) {
  Indexed indexed = apply_key(t, key);
  Tensor result = indexed.flipped.empty() ? indexed.view
                                          : flip(indexed.view, indexed.flipped);
  if (indexed.array_axis) result = take(result, indexed);
  return result;
}

// view[index] = value for the advanced index of `indexed`: the value is
// broadcast to what view[index] reads, laid out as the merged view, and
// scattered (the last write wins for repeated indices, as in NumPy).
void set_through_array(const Indexed& indexed, nb::handle value) {
  const Tensor& view = indexed.view;
  if (!indexed.flipped.empty()) {
    throw_error(ErrorCode::BadShape,
                "[index] a write through an advanced index with a negative "
                "step is not supported; write through t[::-1] separately");
  }
  const std::int64_t axis = *indexed.array_axis;
  const Tensor merged = merge_span(view, indexed);
  const Tensor& index = indexed.array_index;
  // What view[key] would read: its shape (the index's axes possibly first).
  const Tensor read = take(view, indexed);
  Tensor source = to_tensor(value).to(view.dtype()).expand(read.shape());
  const std::int64_t k = index.rank();
  if (indexed.array_axes_first && axis != 0) {
    // Move the index's axes back from the front to `axis`.
    std::vector<std::int64_t> order;
    for (std::int64_t i = k; i < k + axis; ++i) order.push_back(i);
    for (std::int64_t i = 0; i < k; ++i) order.push_back(i);
    for (std::int64_t i = k + axis; i < source.rank(); ++i) order.push_back(i);
    source = source.permute(
        std::span<const std::int64_t>(order.data(), order.size()));
  }
  // The index's axes as one axis of index.numel() updates.
  Shape updates_shape;
  for (std::int64_t i = 0; i < merged.rank(); ++i)
    updates_shape.push_back(i == axis ? index.numel() : merged.shape()[i]);
  const Tensor updates = source.reshape(updates_shape);
  Shape index_shape(static_cast<std::size_t>(merged.rank()), 1);
  index_shape[static_cast<std::size_t>(axis)] = index.numel();
  const Tensor positions =
      index.reshape(index_shape).expand(updates.shape()).contiguous();
  const Tensor written = scatter(merged, axis, positions, updates);
  Tensor target = view;
  target.copy_(written.reshape(view.shape()));
}

void set_item(Tensor& t, nb::handle key, nb::handle value) {
  Indexed indexed = apply_key(t, key);
  if (indexed.array_axis) {
    set_through_array(indexed, value);
    return;
  }
  Tensor& view = indexed.view;
  if (is_python_scalar(value) && indexed.flipped.empty()) {
    view.fill_(to_scalar(value));
    return;
  }
  Tensor source = to_tensor(value);
  // t[1:] = t[:-1]: read everything before writing anything.
  if (source.shares_storage_with(view)) source = source.clone();
  if (!indexed.flipped.empty()) {
    source = flip(source.to(view.dtype()).expand(view.shape()).contiguous(),
                  indexed.flipped);
  }
  view.copy_(source);
}

}  // namespace

void bind_indexing(nb::class_<Tensor>& cls) {
  cls.def("__getitem__", &get_item, nb::arg("key"),
          "NumPy indexing: ints, slices, None and Ellipsis give views; an "
          "integer array or a boolean mask gathers (a copy).")
      .def("__setitem__", &set_item, nb::arg("key"), nb::arg("value"),
           "Writes `value` (broadcast and cast) into the indexed view, or "
           "through an integer array or boolean mask.");
}

}  // namespace tessel::python

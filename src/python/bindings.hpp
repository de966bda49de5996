// What the binding files of the Python package (DESIGN §3 `python`) share:
// one bind_* function per file, called once by module.cpp, and the
// conversions every file needs. The bindings hold no tensor logic: each
// function converts its arguments, calls the public C++ API and converts
// the result.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <span>

#include "tessel/tessel.hpp"

namespace tessel::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_dtypes(nb::module_& m);
// Returns the class, to which bind_ops adds the method forms of the ops.
nb::class_<Tensor> bind_tensor(nb::module_& m);
void bind_indexing(nb::class_<Tensor>& cls);
void bind_interop(nb::module_& m, nb::class_<Tensor>& cls);
void bind_ops(nb::module_& m, nb::class_<Tensor>& cls);
void bind_complex(nb::module_& m, nb::class_<Tensor>& cls);
void bind_factories(nb::module_& m);
void bind_io(nb::module_& m);
void bind_autograd(nb::module_& m);
void bind_linalg_decompositions(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_models(nb::module_& m);
void bind_quantize(nb::module_& m);
void bind_merge(nb::module_& m);

// ---- dtypes (dtypes.cpp) ---------------------------------------------------
// What a `tessel.dtype` object holds.
struct PyDType {
  DType value;
};
// The Python object of a dtype (one per dtype, created once).
nb::typed<nb::object, PyDType> dtype_object(DType dtype);
// A Tensor result that may also be NotImplemented (operators); typed as a
// Tensor for the stubs.
using TensorOrNotImplemented = nb::typed<nb::object, Tensor>;
// A dtype from a tessel dtype object, a name ("float32", "f32", "bfloat16"),
// a NumPy dtype or scalar type, or Python's bool/int/float: E2201 otherwise.
DType to_dtype(nb::handle value);
std::optional<DType> to_optional_dtype(nb::handle value);

// ---- conversions (convert.cpp) ---------------------------------------------
// The name of `value`'s Python type ("list"), for messages.
std::string python_type_name(nb::handle value);
// str(value), for messages.
std::string python_str(nb::handle value);
// The C++ overloads of a binary op that the bindings call besides
// binary(op, a, b): tensor-scalar, scalar-tensor and the in-place forms.
struct BinaryOverloads {
  Tensor (*tensor_scalar)(const Tensor&, Scalar);
  Tensor (*scalar_tensor)(Scalar, const Tensor&);
  Tensor (*in_place)(const Tensor&, const Tensor&);
  Tensor (*in_place_scalar)(const Tensor&, Scalar);
};
const BinaryOverloads& binary_overloads(BinaryOp op);

// binary(op, a, b) with the array API standard's promotion, which the
// Python package follows (docs/python.md): int8 with int8 stays int8 where
// DESIGN §1 widens to int16. The result wraps as int8 arithmetic does.
Tensor binary_standard(BinaryOp op, const Tensor& a, const Tensor& b);
// `result` back in int8 when every input was int8 and the C++ op widened it
// (DESIGN's i8 -> i16, 8-bit matmul -> i32): the standard's where, concat,
// stack, clip and matmul keep int8.
Tensor keep_int8(const Tensor& result, std::span<const Tensor> inputs);

// Whether `value` is a Python bool, int or float (not a tensor, not NumPy).
bool is_python_scalar(nb::handle value);
// A Python bool/int/float as a Scalar; ints beyond 64 bits are E2303.
Scalar to_scalar(nb::handle value);
// A Scalar as the Python number of its kind.
nb::object scalar_to_python(const Scalar& value);
// A tessel Tensor from a Tensor (itself), a Python scalar (rank 0, its
// default dtype), a DLPack producer or buffer exporter (zero copy), or a
// nested sequence (copied); E2201 when nothing applies.
Tensor to_tensor(nb::handle value);
// A shape from an int or a sequence of ints; negative extents E2102
// unless `allow_inferred` (reshape's -1, which the C++ op checks). Values
// that are not ints are Python TypeErrors.
Shape to_shape(nb::handle value, bool allow_inferred = false);
// An int from a Python int or anything with __index__ (TypeError else).
std::int64_t to_index(nb::handle value, const char* what);
// An axis list from None (every axis), an int or a sequence of ints.
Axes to_axes(nb::handle value);

// ---- views shared by Tensor and Variable ------------------------------------

// t.transpose(dim0, dim1), or t.transpose() reversing every axis; one axis
// alone is E2102.
template <class T>
T transpose_either(const T& t, std::optional<std::int64_t> dim0,
                   std::optional<std::int64_t> dim1) {
  if (!dim0 && !dim1) return t.transpose();
  if (!dim0 || !dim1)
    throw_error(ErrorCode::BadShape,
                "[transpose] takes two axes to swap, or none to reverse "
                "every axis");
  return t.transpose(*dim0, *dim1);
}

// t.squeeze(axis) for an int or a tuple of ints.
template <class T>
T squeeze_axes(const T& t, nb::handle axis) {
  const Axes axes = to_axes(axis);
  return t.squeeze(std::span<const std::int64_t>(axes.data(), axes.size()));
}

// ---- the GIL ----------------------------------------------------------------
// Elements below which a kernel runs with the GIL held: releasing and
// retaking it costs about as much as the work itself there.
inline constexpr std::int64_t kReleaseGilElements = 1 << 14;

// Runs `body` with the GIL released when the work is large enough for
// another Python thread to use the time.
template <class Body>
auto without_gil_if(bool large, Body&& body) {
  if (large) {
    nb::gil_scoped_release release;
    return body();
  }
  return body();
}

}  // namespace tessel::python

namespace tessel::python {

// ---- interchange (interop.cpp) ---------------------------------------------
// A tensor over the memory of a DLPack producer (an object with
// __dlpack__, or a capsule), zero copy; the capsule is marked consumed.
Tensor tensor_from_dlpack(nb::handle producer);

}  // namespace tessel::python

namespace tessel::python {
// The buffer-protocol slots of the Tensor class (interop.cpp).
PyType_Slot* tensor_type_slots();
}  // namespace tessel::python

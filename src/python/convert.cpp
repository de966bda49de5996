// Python values -> tessel values: scalars, shapes, axes and tensors. The
// one place that decides what a Python object means as an operand.
#include <Python.h>

#include <string>

#include "bindings.hpp"

namespace tessel::python {

std::string python_type_name(nb::handle value) {
  return nb::type_name(value.type()).c_str();
}

std::string python_str(nb::handle value) {
  PyObject* text = PyObject_Str(value.ptr());
  if (text == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(text).c_str();
}

const BinaryOverloads& binary_overloads(BinaryOp op) {
  using TensorScalarFn = Tensor (*)(const Tensor&, Scalar);
  using ScalarTensorFn = Tensor (*)(Scalar, const Tensor&);
  using InPlaceFn = Tensor (*)(const Tensor&, const Tensor&);
  static const BinaryOverloads entries[] = {
#define TESSEL_BINARY_ENTRY(e, name, result, inputs, kind, kernel) \
  {static_cast<TensorScalarFn>(&tessel::name),                     \
   static_cast<ScalarTensorFn>(&tessel::name),                     \
   static_cast<InPlaceFn>(&tessel::name##_),                       \
   static_cast<TensorScalarFn>(&tessel::name##_)},
      TESSEL_FOR_EACH_BINARY_OP(TESSEL_BINARY_ENTRY)
#undef TESSEL_BINARY_ENTRY
  };
  return entries[static_cast<int>(op)];
}

Tensor binary_standard(BinaryOp op, const Tensor& a, const Tensor& b) {
  const Tensor result = binary(op, a, b);
  if (op_info(op).result != ResultKind::Same) return result;
  const Tensor operands[] = {a, b};
  return keep_int8(result, operands);
}

Tensor keep_int8(const Tensor& result, std::span<const Tensor> inputs) {
  if (result.dtype() == DType::I8 || !is_integral(result.dtype()))
    return result;
  for (const Tensor& t : inputs) {
    if (t.dtype() != DType::I8) return result;
  }
  return result.to(DType::I8);  // wraps, as int8 arithmetic does
}

bool is_python_scalar(nb::handle value) {
  return PyBool_Check(value.ptr()) || PyLong_Check(value.ptr()) ||
         PyFloat_Check(value.ptr()) || PyComplex_Check(value.ptr());
}

Scalar to_scalar(nb::handle value) {
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) return Scalar(static_cast<std::int64_t>(v));
    if (overflow > 0) {
      const unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) return Scalar(static_cast<std::uint64_t>(u));
      PyErr_Clear();
    }
    throw_error(ErrorCode::SizeOverflow, "[scalar] the Python int " +
                                             python_str(value) +
                                             " does not fit in 64 bits");
  }
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) {
    return Scalar(std::complex<double>(PyComplex_RealAsDouble(o),
                                       PyComplex_ImagAsDouble(o)));
  }
  throw_error(ErrorCode::BadDType,
              "[scalar] expected a bool, int, float or complex, got " +
                  python_type_name(value));
}

nb::object scalar_to_python(const Scalar& value) {
  switch (value.kind()) {
    case Scalar::Kind::Bool: return nb::bool_(value.to<bool>());
    case Scalar::Kind::Int: return nb::int_(value.to<std::int64_t>());
    case Scalar::Kind::UInt: return nb::int_(value.to<std::uint64_t>());
    case Scalar::Kind::Float: break;
    case Scalar::Kind::Complex: {
      const auto z = value.to<std::complex<double>>();
      return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
    }
  }
  return nb::float_(value.to<double>());
}

namespace {

[[noreturn]] void raise_type_error(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw nb::python_error();
}

}  // namespace

std::int64_t to_index(nb::handle value, const char* what) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    raise_type_error(std::string("[") + what + "] expected an int, got " +
                     python_type_name(value));
  }
  int overflow = 0;
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw_error(ErrorCode::SizeOverflow, std::string("[") + what + "] " +
                                             python_str(value) +
                                             " does not fit in 64 bits");
  }
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return v;
}

Shape to_shape(nb::handle value, bool allow_inferred) {
  Shape shape;
  if (PyIndex_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    shape.push_back(to_index(value, "shape"));
  } else if (PySequence_Check(value.ptr()) && !nb::isinstance<nb::str>(value) &&
             !nb::isinstance<Tensor>(value)) {
    for (nb::handle item : nb::borrow<nb::sequence>(value))
      shape.push_back(to_index(item, "shape"));
  } else {
    raise_type_error("[shape] expected an int or a sequence of ints, got " +
                     python_type_name(value));
  }
  for (std::int64_t extent : shape) {
    if (extent < 0 && !allow_inferred) {
      throw_error(ErrorCode::BadShape, "[shape] negative extent " +
                                           std::to_string(extent) +
                                           " in the shape");
    }
  }
  return shape;
}

Axes to_axes(nb::handle value) {
  Axes axes;
  if (value.is_none()) return axes;
  if (PyIndex_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    axes.push_back(to_index(value, "axis"));
  } else if (PySequence_Check(value.ptr()) && !nb::isinstance<nb::str>(value)) {
    for (nb::handle item : nb::borrow<nb::sequence>(value))
      axes.push_back(to_index(item, "axis"));
    // An empty tuple reduces nothing, unlike None: the C++ API reads an
    // empty list as "every axis", so the bindings cannot express it.
    if (axes.empty()) {
      throw_error(ErrorCode::BadShape,
                  "[axis] an empty axis tuple is not supported; "
                  "pass None to reduce every axis");
    }
  } else {
    raise_type_error(
        "[axis] expected None, an int or a sequence of ints, got " +
        python_type_name(value));
  }
  return axes;
}

Tensor to_tensor(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) return nb::cast<Tensor>(value);
  if (is_python_scalar(value)) {
    const Scalar s = to_scalar(value);
    return full(Shape{}, s, s.default_dtype());
  }
  // NumPy and everything else that speaks DLPack: zero copy. NumPy < 2
  // refuses DLPack for read-only arrays; those are copied below.
  if (nb::hasattr(value, "__dlpack__")) {
    try {
      return tensor_from_dlpack(value);
    } catch (const nb::python_error& e) {
      if (!e.matches(PyExc_BufferError) && !e.matches(PyExc_TypeError) &&
          !e.matches(PyExc_RuntimeError)) {
        throw;
      }
    }
  }
  // Nested sequences, buffers and NumPy arrays DLPack could not take, read
  // by NumPy. Python floats give float32 (tessel's default float, as in
  // PyTorch); NumPy's own float64 arrays stay float64.
  nb::module_ numpy = nb::module_::import_("numpy");
  const bool from_python = PySequence_Check(value.ptr()) &&
                           !PyObject_CheckBuffer(value.ptr()) &&
                           !nb::hasattr(value, "__array__");
  nb::object array = numpy.attr("array")(value);
  const std::string kind =
      nb::cast<std::string>(array.attr("dtype").attr("kind"));
  if (kind == "O" || kind == "U" || kind == "S" || kind == "V") {
    throw_error(ErrorCode::BadDType, "[asarray] cannot make a tensor from " +
                                         python_type_name(value) +
                                         " (NumPy reads it as dtype " +
                                         python_str(array.attr("dtype")) + ")");
  }
  if (from_python && kind == "f")
    array = array.attr("astype")(numpy.attr("float32"));
  if (from_python && kind == "c")
    array = array.attr("astype")(numpy.attr("complex64"));
  if (!nb::cast<bool>(array.attr("flags").attr("writeable")))
    array = array.attr("copy")();
  if (kind == "b") {
    // DLPack before 1.0 has no bool (NumPy < 2 refuses to export one): take
    // the bytes as uint8 and read them as bool, still without a copy.
    const Tensor bytes =
        tensor_from_dlpack(array.attr("view")(numpy.attr("uint8")));
    return Tensor(bytes.storage(), bytes.shape(), bytes.strides(),
                  bytes.storage_offset(), DType::Bool);
  }
  return tensor_from_dlpack(array);
}

}  // namespace tessel::python

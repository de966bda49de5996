// dtypes as Python objects: one immutable `tessel.dtype` per DType, named
// as NumPy and the array API name them (float32, bfloat16, int8, ...), with
// the block-quantised types under their GGUF names (q4_0, q4_k, ...).
#include "bindings.hpp"

#include <array>
#include <string>

namespace tessel::python {

namespace {

// The Python-facing name of each dtype (NumPy's spelling where NumPy has
// one, tessel's own otherwise).
std::string python_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::U8: return "uint8";
    case DType::I8: return "int8";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::U16: return "uint16";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F32: return "float32";
    case DType::F64: return "float64";
    case DType::F8E4M3FN: return "float8_e4m3fn";
    case DType::F8E5M2: return "float8_e5m2";
    case DType::I4: return "int4";
    case DType::U4: return "uint4";
    case DType::C64: return "complex64";
    case DType::C128: return "complex128";
    default: return std::string(dtype_name(dtype));
  }
}

// Borrowed: the module's attributes (tessel.float32, ...) own the objects,
// so nothing here outlives the interpreter.
std::array<PyObject*, kNumDTypes>& dtype_objects() {
  static std::array<PyObject*, kNumDTypes> objects{};
  return objects;
}

}  // namespace

nb::typed<nb::object, PyDType> dtype_object(DType dtype) {
  return nb::borrow(dtype_objects()[static_cast<int>(dtype)]);
}

DType to_dtype(nb::handle value) {
  if (nb::isinstance<PyDType>(value)) return nb::cast<PyDType&>(value).value;
  if (nb::isinstance<nb::str>(value))
    return parse_dtype(nb::cast<std::string>(value));
  // Python's own types, as NumPy reads them (float -> float64 there; here
  // the array API's default float, float32, would surprise NumPy users
  // less than a silent float64 would surprise tessel's: keep NumPy's).
  if (value.is(reinterpret_cast<PyObject*>(&PyBool_Type))) return DType::Bool;
  if (value.is(reinterpret_cast<PyObject*>(&PyLong_Type))) return DType::I64;
  if (value.is(reinterpret_cast<PyObject*>(&PyFloat_Type))) return DType::F64;
  if (value.is(reinterpret_cast<PyObject*>(&PyComplex_Type)))
    return DType::C128;
  // A NumPy dtype or scalar type (np.float32, np.dtype("int8")): by name.
  if (nb::hasattr(value, "dtype") || nb::hasattr(value, "itemsize")) {
    nb::object numpy_dtype = nb::module_::import_("numpy").attr("dtype")(value);
    return parse_dtype(nb::cast<std::string>(numpy_dtype.attr("name")));
  }
  throw_error(
      ErrorCode::BadDType,
      "[dtype] expected a tessel dtype, a dtype name or a NumPy dtype, got " +
          python_type_name(value));
}

std::optional<DType> to_optional_dtype(nb::handle value) {
  if (value.is_none()) return std::nullopt;
  return to_dtype(value);
}

void bind_dtypes(nb::module_& m) {
  nb::class_<PyDType>(m, "dtype",
                      "A tensor element type; compare with ==, e.g. "
                      "t.dtype == tessel.float32.")
      .def_prop_ro(
          "name", [](const PyDType& d) { return python_name(d.value); },
          "NumPy's name for the dtype ('float32').")
      .def_prop_ro(
          "itemsize",
          [](const PyDType& d) {
            const auto& traits = dtype_traits(d.value);
            return traits.bits >= 8 ? traits.bits / 8 : 0;
          },
          "Bytes per element; 0 for packed and block types.")
      .def_prop_ro(
          "bits", [](const PyDType& d) { return dtype_traits(d.value).bits; },
          "Bits per element; 0 for block types.")
      .def_prop_ro(
          "block_size",
          [](const PyDType& d) { return dtype_traits(d.value).block_size; },
          "Elements per block (1 unless block-quantised).")
      .def_prop_ro("is_floating_point",
                   [](const PyDType& d) { return is_floating_point(d.value); })
      .def_prop_ro("is_complex",
                   [](const PyDType& d) { return is_complex(d.value); })
      .def_prop_ro("is_integral",
                   [](const PyDType& d) { return is_integral(d.value); })
      .def_prop_ro("is_quantized",
                   [](const PyDType& d) {
                     return dtype_traits(d.value).kind == DTypeKind::Quantized;
                   })
      .def("__repr__",
           [](const PyDType& d) { return "tessel." + python_name(d.value); })
      .def("__str__", [](const PyDType& d) { return python_name(d.value); })
      .def("__eq__",
           [](const PyDType& d, nb::handle other) {
             if (nb::isinstance<PyDType>(other))
               return d.value == nb::cast<PyDType&>(other).value;
             return false;
           })
      .def("__hash__",
           [](const PyDType& d) { return static_cast<int>(d.value) + 1; });

  // {name: dtype}; tessel/__init__.py makes each a module attribute with
  // a declared type (a C++ attribute named `bool` would shadow the
  // built-in in the generated stubs).
  nb::dict names;
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    nb::object object = nb::cast(PyDType{dtype});
    names[python_name(dtype).c_str()] = object;
    dtype_objects()[i] = object.ptr();
  }
  m.attr("dtypes") = names;

  // DESIGN §1's pair rule as the C++ ops apply it; the package's
  // result_type (python/tessel/_array_api.py) is the standard's, which
  // differs for int8 with int8.
  m.def(
      "_promote_types",
      [](nb::handle a, nb::handle b) {
        return dtype_object(
            promote_types(to_dtype(a), to_dtype(b), "result_type"));
      },
      nb::arg("a"), nb::arg("b"),
      "The dtype the C++ ops compute a pair of these dtypes in (DESIGN §1).");
}

}  // namespace tessel::python

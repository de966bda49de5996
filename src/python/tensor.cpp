// The Python `tessel.Tensor`: a handle to a tessel::Tensor (sharing its
// storage as the C++ handle does), with NumPy's attribute names, views,
// conversions and the arithmetic operators.
#include <Python.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"

namespace tessel::python {

namespace {

nb::tuple int_tuple(std::span<const std::int64_t> values) {
  nb::list list;
  for (std::int64_t v : values) list.append(v);
  return nb::tuple(list);
}

// `self op other` (or `other op self` when reflected) for a Python
// operator; NotImplemented for operands tessel does not take, so that
// Python tries the other side.
TensorOrNotImplemented apply_operator(BinaryOp op, const Tensor& self,
                                      nb::handle other, bool reflected) {
  const BinaryOverloads& entry = binary_overloads(op);
  if (nb::isinstance<Tensor>(other)) {
    const Tensor& b = nb::cast<const Tensor&>(other);
    const bool large = std::max(self.numel(), b.numel()) >= kReleaseGilElements;
    return nb::cast(without_gil_if(large, [&] {
      return reflected ? binary_standard(op, b, self)
                       : binary_standard(op, self, b);
    }));
  }
  if (is_python_scalar(other)) {
    const Scalar s = to_scalar(other);
    return nb::cast(without_gil_if(self.numel() >= kReleaseGilElements, [&] {
      return reflected ? entry.scalar_tensor(s, self)
                       : entry.tensor_scalar(self, s);
    }));
  }
  if (nb::hasattr(other, "__dlpack__") || PySequence_Check(other.ptr())) {
    const Tensor b = to_tensor(other);
    return nb::cast(reflected ? binary_standard(op, b, self)
                              : binary_standard(op, self, b));
  }
  return nb::borrow(Py_NotImplemented);
}

// In place through the C++ in-place ops: the result keeps self's dtype and
// shape (E2201/E2101 when it cannot) and is written through views.
nb::typed<nb::object, Tensor> apply_inplace(BinaryOp op, Tensor& self,
                                            nb::handle other) {
  const BinaryOverloads& entry = binary_overloads(op);
  const bool large = self.numel() >= kReleaseGilElements;
  if (is_python_scalar(other)) {
    const Scalar s = to_scalar(other);
    without_gil_if(large, [&] { return entry.in_place_scalar(self, s); });
  } else {
    const Tensor b = to_tensor(other);
    without_gil_if(large, [&] { return entry.in_place(self, b); });
  }
  return nb::cast(self);
}

nb::object to_list(const Tensor& t, std::vector<std::int64_t>& index,
                   std::int64_t axis) {
  if (axis == t.rank()) return scalar_to_python(t.get(index));
  nb::list list;
  for (std::int64_t i = 0; i < t.shape()[axis]; ++i) {
    index[axis] = i;
    list.append(to_list(t, index, axis + 1));
  }
  return list;
}

Scalar one_element(const Tensor& t, const char* op) {
  if (t.numel() != 1) {
    throw_error(ErrorCode::BadShape,
                std::string("[") + op +
                    "] only a one-element tensor converts to a Python "
                    "number; this one has " +
                    std::to_string(t.numel()) + " elements");
  }
  return t.item_scalar();
}

// A real number from a one-element tensor: like Python's complex, a
// complex tensor does not silently become real.
Scalar one_real_element(const Tensor& t, const char* op) {
  if (is_complex(t.dtype())) {
    PyErr_Format(PyExc_TypeError,
                 "[%s] a complex tensor has no real value; take .real or "
                 "abs() first",
                 op);
    throw nb::python_error();
  }
  return one_element(t, op);
}

// NumPy's repr with tessel's names: tessel.Tensor([1., 2.], dtype=float32).
std::string repr(const Tensor& t) {
  PrintOptions options;
  options.prefix = "tessel.Tensor(";
  options.dtype_label =
      nb::cast<std::string>(dtype_object(t.dtype()).attr("name"));
  options.show_shape = false;
  return to_string(t, options);
}

// t.reshape(2, 3) and t.reshape((2, 3)) alike; -1 passes to the C++ op.
Shape shape_arguments(nb::args args) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr()))
    return to_shape(args[0], true);
  return to_shape(args, true);
}

}  // namespace

nb::class_<Tensor> bind_tensor(nb::module_& m) {
  auto cls = nb::class_<Tensor>(
      m, "Tensor", nb::type_slots(tensor_type_slots()),
      "An n-dimensional array: a cheap handle to shared storage "
      "with a shape, strides (in elements), dtype and device.");
  cls.def(nb::init<>())
      .def_prop_ro("shape",
                   [](const Tensor& t) { return int_tuple(t.shape()); })
      .def_prop_ro(
          "strides", [](const Tensor& t) { return int_tuple(t.strides()); },
          "Strides in elements (PyTorch's convention; NumPy counts bytes).")
      .def_prop_ro("dtype",
                   [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device().str(); })
      .def_prop_ro("ndim", &Tensor::rank)
      .def_prop_ro("size", &Tensor::numel, "Number of elements.")
      .def_prop_ro("nbytes", &Tensor::nbytes)
      .def_prop_ro(
          "itemsize",
          [](const Tensor& t) { return dtype_traits(t.dtype()).bits / 8; })
      .def_prop_ro("storage_offset", &Tensor::storage_offset,
                   "Offset in elements.")
      .def_prop_ro("name", &Tensor::name)
      .def_prop_ro("T",
                   [](const Tensor& t) {
                     if (t.rank() != 2) {
                       throw_error(ErrorCode::BadShape,
                                   "[T] needs a 2-d tensor, got rank " +
                                       std::to_string(t.rank()));
                     }
                     return t.transpose(0, 1);
                   })
      .def_prop_ro("mT",
                   [](const Tensor& t) {
                     if (t.rank() < 2) {
                       throw_error(ErrorCode::BadShape,
                                   "[mT] needs rank >= 2, got rank " +
                                       std::to_string(t.rank()));
                     }
                     return t.transpose(-2, -1);
                   })
      .def("is_contiguous", &Tensor::is_contiguous,
           "Whether the tensor is row-major and dense (a view may not be).")
      .def("shares_memory", &Tensor::shares_storage_with, nb::arg("other"),
           "Whether both tensors view the same storage.")
      .def(
          "reshape",
          [](const Tensor& t, nb::args shape) {
            return t.reshape(shape_arguments(shape));
          },
          "A view when the strides allow it, else a copy; one extent may be "
          "-1.")
      .def(
          "view",
          [](const Tensor& t, nb::args shape) {
            return t.view(shape_arguments(shape));
          },
          "Like reshape, but an error when a view is impossible.")
      .def(
          "permute",
          [](const Tensor& t, nb::args dims) {
            const Shape d = shape_arguments(dims);
            return t.permute(std::span<const std::int64_t>(d.data(), d.size()));
          },
          "A view with the axes in the given order: t.permute(2, 0, 1).")
      .def("transpose", &transpose_either<Tensor>, nb::arg("dim0") = nb::none(),
           nb::arg("dim1") = nb::none(),
           "A view with axes dim0 and dim1 swapped; every axis reversed when "
           "neither is given (NumPy's transpose()).")
      .def(
          "expand",
          [](const Tensor& t, nb::args shape) {
            return t.expand(shape_arguments(shape));
          },
          "A stride-0 view broadcast to the shape (-1 keeps an extent).")
      .def(
          "squeeze",
          [](const Tensor& t, nb::handle axis) {
            return axis.is_none() ? t.squeeze() : squeeze_axes(t, axis);
          },
          nb::arg("axis") = nb::none(),
          "A view without the given size-1 axes (an int or a tuple; every "
          "size-1 axis when None); E2102 for an axis whose extent is not 1.")
      .def("unsqueeze", &Tensor::unsqueeze, nb::arg("axis"),
           "A view with a new axis of extent 1 at axis.")
      .def("flatten", &Tensor::flatten, nb::arg("start_dim") = 0,
           nb::arg("end_dim") = -1,
           "A view (or copy) with axes start_dim..end_dim merged into one.")
      .def("contiguous", &Tensor::contiguous,
           "The tensor itself when row-major, else a row-major copy.")
      .def("clone", &Tensor::clone, "A copy with its own storage.")
      .def("copy", &Tensor::clone,
           "A copy with its own storage (NumPy's name).")
      .def(
          "astype",
          [](const Tensor& t, nb::handle dtype, bool copy) {
            const DType d = to_dtype(dtype);
            if (d == t.dtype()) return copy ? t.clone() : t;
            return without_gil_if(t.numel() >= kReleaseGilElements,
                                  [&] { return t.to(d); });
          },
          nb::arg("dtype"), nb::arg("copy") = true,
          "The tensor cast to `dtype`.")
      .def(
          "to_device",
          [](const Tensor& t, nb::handle device, nb::handle /*stream*/) {
            return t.to(parse_device(python_str(device)));
          },
          nb::arg("device"), nb::kw_only(), nb::arg("stream") = nb::none(),
          "The tensor on `device` (itself when already there); E2501 for a "
          "device this build does not serve.")
      .def(
          "__array_namespace__",
          [](const Tensor&, nb::handle api_version) {
            if (!api_version.is_none()) {
              const std::string v = python_str(api_version);
              if (v != "2024.12" && v != "2023.12" && v != "2022.12" &&
                  v != "2021.12") {
                throw nb::value_error(
                    ("tessel implements the array API 2024.12 (and the "
                     "versions before it), not " +
                     v)
                        .c_str());
              }
            }
            return nb::module_::import_("tessel");
          },
          nb::kw_only(), nb::arg("api_version") = nb::none(),
          "The array API namespace of this tensor: the `tessel` module.")
      .def(
          "to",
          [](const Tensor& t, nb::handle target) {
            if (nb::isinstance<nb::str>(target)) {
              const std::string text = nb::cast<std::string>(target);
              if (text == "cpu" || text == "meta" ||
                  text.rfind("cuda", 0) == 0) {
                return t.to(parse_device(text));
              }
            }
            return t.to(to_dtype(target));
          },
          nb::arg("target"),
          "A copy on a device ('cpu', 'cuda:0') or cast to a dtype.")
      .def(
          "fill_",
          [](Tensor& t, nb::handle v) {
            t.fill_(to_scalar(v));
            return t;
          },
          nb::arg("value"),
          "Writes `value` into every element, through views; returns self.")
      .def(
          "copy_",
          [](Tensor& t, nb::handle src) {
            t.copy_(to_tensor(src));
            return t;
          },
          nb::arg("src"), "Copies `src` in (broadcast and cast); returns self.")
      .def(
          "item",
          [](const Tensor& t) {
            return scalar_to_python(one_element(t, "item"));
          },
          "The one element of a one-element tensor as a Python number.")
      .def(
          "tolist",
          [](const Tensor& t) {
            std::vector<std::int64_t> index(static_cast<std::size_t>(t.rank()),
                                            0);
            return to_list(t, index, 0);
          },
          "The elements as nested Python lists of Python numbers.")
      .def(
          "numpy", [](nb::handle self) { return self.attr("__array__")(); },
          "A NumPy array over the same memory.")
      .def("__len__",
           [](const Tensor& t) {
             if (t.rank() == 0) {
               PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
               throw nb::python_error();
             }
             return t.shape()[0];
           })
      .def(
          "__bool__",
          [](const Tensor& t) { return one_element(t, "__bool__").to<bool>(); })
      .def("__int__",
           [](const Tensor& t) {
             return one_real_element(t, "__int__").to<std::int64_t>();
           })
      .def("__complex__",
           [](const Tensor& t) {
             const auto z =
                 one_element(t, "__complex__").to<std::complex<double>>();
             return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
           })
      .def("__float__",
           [](const Tensor& t) {
             return one_real_element(t, "__float__").to<double>();
           })
      .def("__index__",
           [](const Tensor& t) {
             if (!is_integral(t.dtype())) {
               throw_error(ErrorCode::BadDType,
                           "[__index__] only an integer tensor is an index");
             }
             return one_element(t, "__index__").to<std::int64_t>();
           })
      .def("__repr__", &repr)
      .def("__str__", [](const Tensor& t) { return to_string(t); });

  // NumPy's operators defer to ours (a NumPy array + a tessel tensor is a
  // tessel tensor) instead of converting the tensor through the buffer.
  cls.attr("__array_ufunc__") = nb::none();

#define TESSEL_OPERATOR(py, op)                           \
  cls.def(                                                \
      "__" py "__",                                       \
      [](const Tensor& a, nb::handle b) {                 \
        return apply_operator(BinaryOp::op, a, b, false); \
      },                                                  \
      nb::arg("other").none());                           \
  cls.def(                                                \
      "__r" py "__",                                      \
      [](const Tensor& a, nb::handle b) {                 \
        return apply_operator(BinaryOp::op, a, b, true);  \
      },                                                  \
      nb::arg("other").none());                           \
  cls.def("__i" py "__", [](Tensor& a, nb::handle b) {    \
    return apply_inplace(BinaryOp::op, a, b);             \
  });
  TESSEL_OPERATOR("add", Add)
  TESSEL_OPERATOR("sub", Sub)
  TESSEL_OPERATOR("mul", Mul)
  TESSEL_OPERATOR("truediv", Div)
  TESSEL_OPERATOR("floordiv", FloorDivide)
  TESSEL_OPERATOR("mod", Remainder)
  TESSEL_OPERATOR("pow", Pow)
  TESSEL_OPERATOR("and", BitwiseAnd)
  TESSEL_OPERATOR("or", BitwiseOr)
  TESSEL_OPERATOR("xor", BitwiseXor)
  TESSEL_OPERATOR("lshift", BitwiseLeftShift)
  TESSEL_OPERATOR("rshift", BitwiseRightShift)
#undef TESSEL_OPERATOR

#define TESSEL_COMPARISON(py, op)                         \
  cls.def(                                                \
      "__" py "__",                                       \
      [](const Tensor& a, nb::handle b) {                 \
        return apply_operator(BinaryOp::op, a, b, false); \
      },                                                  \
      nb::arg("other").none());
  TESSEL_COMPARISON("eq", Eq)
  TESSEL_COMPARISON("ne", Ne)
  TESSEL_COMPARISON("lt", Lt)
  TESSEL_COMPARISON("le", Le)
  TESSEL_COMPARISON("gt", Gt)
  TESSEL_COMPARISON("ge", Ge)
#undef TESSEL_COMPARISON
  // Tensors are mutable: no value hash (NumPy's choice).
  cls.attr("__hash__") = nb::none();

  cls.def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return abs(a); })
      .def("__invert__",
           [](const Tensor& a) {
             return a.dtype() == DType::Bool ? logical_not(a) : bitwise_not(a);
           })
      .def("__matmul__",
           [](const Tensor& a, nb::handle b) {
             const Tensor ab[] = {a, to_tensor(b)};
             return keep_int8(
                 without_gil_if(true, [&] { return matmul(ab[0], ab[1]); }),
                 ab);
           })
      .def("__rmatmul__", [](const Tensor& a, nb::handle b) {
        const Tensor ba[] = {to_tensor(b), a};
        return keep_int8(
            without_gil_if(true, [&] { return matmul(ba[0], ba[1]); }), ba);
      });

  bind_indexing(cls);
  bind_interop(m, cls);
  return cls;
}

}  // namespace tessel::python

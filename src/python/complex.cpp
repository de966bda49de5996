// Complex tensors' parts: tessel.real/imag/conj (the array API's names,
// also as t.real, t.imag, t.conj()), the zero-copy views view_as_real and
// view_as_complex (PyTorch's), and tessel.complex(re, im).
#include "bindings.hpp"

namespace tessel::python {

void bind_complex(nb::module_& m, nb::class_<Tensor>& cls) {
  m.def(
      "real", [](nb::handle x) { return real(to_tensor(x)); }, nb::arg("x"),
      "The real part: a view of a complex tensor (writes go through), the "
      "tensor itself for a real dtype.");
  m.def(
      "imag", [](nb::handle x) { return imag(to_tensor(x)); }, nb::arg("x"),
      "The imaginary part: a view of a complex tensor, zeros for a real "
      "dtype.");
  m.def(
      "conj", [](nb::handle x) { return conj(to_tensor(x)); }, nb::arg("x"),
      "The complex conjugate (a new tensor); a real tensor as it is.");
  m.def(
      "view_as_real", [](nb::handle x) { return view_as_real(to_tensor(x)); },
      nb::arg("x"),
      "complex64 [..] as float32 [.., 2] (complex128 as float64), sharing "
      "memory.");
  m.def(
      "view_as_complex",
      [](nb::handle x) { return view_as_complex(to_tensor(x)); }, nb::arg("x"),
      "float32/float64 [.., 2] (last stride 1) as complex64/complex128 [..], "
      "sharing memory.");
  m.def(
      "complex",
      [](nb::handle re, nb::handle im) {
        return make_complex(to_tensor(re), to_tensor(im));
      },
      nb::arg("real"), nb::arg("imag"),
      "re + 1j * im as a new complex tensor (complex128 when a part is "
      "float64, complex64 otherwise).");
  cls.def_prop_ro(
      "real", [](const Tensor& t) { return real(t); },
      "The real part (a view for complex tensors).");
  cls.def_prop_ro(
      "imag", [](const Tensor& t) { return imag(t); },
      "The imaginary part (a view for complex tensors; zeros for real ones).");
  cls.def(
      "conj", [](const Tensor& t) { return conj(t); },
      "The complex conjugate (a new tensor).");
}

}  // namespace tessel::python

// The binding-choice measurement (docs/python.md): tessel::Tensor and
// tessel::add bound with pybind11, the same surface as nanobind_peer.cpp.
#include <pybind11/pybind11.h>

#include "tessel/tessel.hpp"

namespace py = pybind11;

PYBIND11_MODULE(binding_pybind11, m) {
  py::class_<tessel::Tensor>(m, "Tensor")
      .def("__add__", [](const tessel::Tensor& a, const tessel::Tensor& b) {
        return tessel::add(a, b);
      });
  m.def("ones", [](std::int64_t n) { return tessel::ones({n}); });
  m.def("first",
        [](const tessel::Tensor& a, const tessel::Tensor&) { return a; });
}

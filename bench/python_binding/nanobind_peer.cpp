// The binding-choice measurement (docs/python.md): tessel::Tensor and
// tessel::add bound with nanobind, the same surface as pybind11_peer.cpp.
#include <nanobind/nanobind.h>

#include "tessel/tessel.hpp"

namespace nb = nanobind;

NB_MODULE(binding_nanobind, m) {
  nb::class_<tessel::Tensor>(m, "Tensor")
      .def("__add__", [](const tessel::Tensor& a, const tessel::Tensor& b) {
        return tessel::add(a, b);
      });
  m.def("ones", [](std::int64_t n) { return tessel::ones({n}); });
  m.def("first",
        [](const tessel::Tensor& a, const tessel::Tensor&) { return a; });
}

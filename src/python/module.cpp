// tessel._tessel: the extension module behind `import tessel`
// (python/tessel/__init__.py re-exports it). Binding order matters only
// where one binder uses another's types: dtypes before the tensor class.
#include <nanobind/stl/string.h>

#include "bindings.hpp"

NB_MODULE(_tessel, m) {
  namespace nb = nanobind;
  using namespace tessel::python;
  m.doc() = "tessel's C++ runtime, bound with nanobind";
  m.attr("build_version") = tessel::build_info().version;
  bind_errors(m);
  bind_dtypes(m);
  auto tensor_class = bind_tensor(m);
  bind_ops(m, tensor_class);
  bind_complex(m, tensor_class);
  bind_factories(m);
  bind_io(m);
  bind_autograd(m);
  bind_linalg_decompositions(m);
  bind_fft(m);
  bind_models(m);
  bind_quantize(m);
  bind_merge(m);
  m.def("set_num_threads", &tessel::set_num_threads, nb::arg("n"),
        "Threads of tessel's pool (all cores by default).");
  m.def("get_num_threads", &tessel::get_num_threads,
        "Threads of tessel's pool.");
}

// tessel._tessel: the extension module behind `import tessel`
// (python/tessel/__init__.py re-exports it). Binding order matters only
// where one binder uses another's types: dtypes before the tensor class.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

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
  m.def(
      "set_matmul_precision",
      [](std::string_view name) {
        tessel::set_matmul_precision(tessel::parse_matmul_precision(name));
      },
      nb::arg("precision"),
      "How linear multiplies f32 activations by bf16 weights: 'f32' (exact, "
      "the default) or 'bf16' (activations rounded to bf16 first, as "
      "llama.cpp does; about twice as fast where the CPU has bf16 dot "
      "products). Process-wide, as torch.set_float32_matmul_precision.");
  m.def(
      "get_matmul_precision",
      [] {
        return std::string(
            tessel::matmul_precision_name(tessel::matmul_precision()));
      },
      "'f32' or 'bf16' (set_matmul_precision).");
}

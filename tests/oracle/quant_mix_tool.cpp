// tessel's quantisation-mix planner (src/quant/quant_mix.hpp) for
// test_quant_mix.py. stdin: a line "ARCH N_LAYER N_HEAD N_HEAD_KV N_EXPERT
// MIX", then one line per tensor "NAME DTYPE D0 D1 ..." (row-major shape).
// stdout: "FTYPE n", "ORDER name" lines in llama.cpp's write order, "TYPE
// name dtype" lines in input order, "NOTE line" per fallback (write
// order), "SUMMARY line"; or "ERROR message" when the planner refuses.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "quant/quant_mix.hpp"
#include "tessel/core/error.hpp"

using namespace tessel::quant;

int main() {
  ModelFacts model;
  std::string mix_name, line;
  std::getline(std::cin, line);
  std::istringstream header(line);
  header >> model.arch >> model.n_layer >> model.n_head >> model.n_head_kv >>
      model.n_expert >> mix_name;
  std::vector<TensorInfo> tensors;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    TensorInfo t;
    std::string dtype;
    in >> t.name >> dtype;
    t.dtype = tessel::parse_dtype(dtype);
    for (std::int64_t d; in >> d;) t.shape.push_back(d);
    tensors.push_back(std::move(t));
  }
  try {
    const QuantMix mix = parse_quant_mix(mix_name);
    const std::vector<TensorPlan> plans =
        plan_quantization(model, tensors, mix);
    const std::vector<std::size_t> order = llama_tensor_order(tensors);
    std::cout << "FTYPE " << quant_mix_info(mix).file_type << "\n";
    for (std::size_t i : order)
      std::cout << "ORDER " << tensors[i].name << "\n";
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      std::cout << "TYPE " << tensors[i].name << " "
                << tessel::dtype_name(plans[i].dtype) << "\n";
    }
    for (std::size_t i : order) {
      if (!plans[i].fallback.empty())
        std::cout << "NOTE " << plans[i].fallback << "\n";
    }
    const std::string summary = fallback_summary(plans);
    if (!summary.empty()) std::cout << "SUMMARY " << summary << "\n";
  } catch (const tessel::Error& e) {
    std::cout << "ERROR " << e.what() << "\n";
  }
  return 0;
}

// libFuzzer target for mergekit YAML: any text must give a MergeConfig or a
// tessel::Error (E4001), never a crash; a config that parses is planned
// against small made-up models (resolving every parameter, gradient and
// filter), which must also succeed or raise a tessel::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

namespace {

tessel::merge::ModelSummary small_model(std::int64_t layers) {
  tessel::merge::ModelSummary s;
  s.config.num_hidden_layers = layers;
  s.shapes["model.embed_tokens.weight"] = tessel::Shape{8, 4};
  s.shapes["model.norm.weight"] = tessel::Shape{4};
  for (std::int64_t i = 0; i < layers; ++i) {
    s.shapes["model.layers." + std::to_string(i) + ".mlp.up_proj.weight"] =
        tessel::Shape{6, 4};
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::merge::MergeConfig c = tessel::merge::MergeConfig::parse(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.yml");
    std::vector<tessel::merge::ModelSummary> models;
    for (std::size_t i = 0; i < c.referenced_models().size(); ++i) {
      models.push_back(small_model(static_cast<std::int64_t>(2 + i % 3)));
    }
    const tessel::merge::MergePlan p = tessel::merge::plan_merge(c, models);
    if (p.tensors.empty()) __builtin_trap();
  } catch (const tessel::Error&) {
  }
  return 0;
}

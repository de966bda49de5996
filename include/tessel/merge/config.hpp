// A mergekit YAML configuration as mergekit 0.1.5 reads it (config.py,
// parameter_resolver.py), for the methods of merge/methods.hpp: `models`
// with per-model `parameters`, or `slices` of `sources` with
// `layer_range`; `base_model`, `merge_method`, global `parameters`,
// `dtype`, `out_dtype`, `tokenizer_source: base`. A parameter is a
// scalar, a gradient (a list of numbers interpolated across the layers of
// a slice) or a list of `{filter, value}` cases chosen by substring of the
// tensor name. Anything else — an unknown key, a parameter the method
// does not take, a value of the wrong type — is E4001 naming the key and
// its line: a config is never half-understood.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessel/core/dtype.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

using Value = std::variant<double, bool, std::string>;

struct Setting {
  int line = 0;
  // A scalar (one value) or a gradient (several numbers).
  std::vector<Value> values;
  // Or, when `cases` is non-empty, the first case whose filter is empty,
  // "*" or a substring of the tensor name.
  struct Case;
  std::vector<Case> cases;
};
struct Setting::Case {
  std::string filter;
  Setting value;
};

using Parameters = std::map<std::string, Setting>;

// The value of `setting` for tensor `tensor_name` at position t in [0, 1]
// of its slice (mergekit's evaluate_setting): numbers of a gradient
// interpolate linearly between neighbours; booleans and strings pick the
// entry at floor(t * (n - 1)). nullopt when no case matches.
std::optional<Value> evaluate(const Setting& setting,
                              const std::string& tensor_name, double t);

struct InputModel {
  std::string model;
  Parameters parameters;
  int line = 0;
};

struct InputSlice {
  std::string model;
  std::int64_t layer_begin = 0;  // layer_range [begin, end)
  std::int64_t layer_end = 0;
  Parameters parameters;
  int line = 0;
};

struct OutputSlice {
  std::vector<InputSlice> sources;
  std::optional<std::string> base_model;
  Parameters parameters;
  int line = 0;
};

struct MergeConfig {
  Method method = Method::Linear;
  // Exactly one of the two is non-empty.
  std::vector<InputModel> models;
  std::vector<OutputSlice> slices;
  std::optional<std::string> base_model;
  Parameters parameters;
  // `dtype`: the precision inputs are rounded to before merging (mergekit
  // loads them in it); the arithmetic itself is f32 either way.
  std::optional<DType> dtype;
  std::optional<DType> out_dtype;
  bool tokenizer_from_base = false;  // tokenizer_source: base

  // E4001 as the header says; `origin` names the file in messages.
  static MergeConfig parse(const std::string& yaml, const std::string& origin);
  static MergeConfig load(const std::filesystem::path& path);
  // Every model the config names, base first when there is one, each once.
  std::vector<std::string> referenced_models() const;
};

// The parameters `method` takes, as mergekit declares them.
enum class ParameterScope {
  Shared,   // one value for the whole tensor (t, normalize, lambda)
  Input,    // one per input model, the base included (linear's weight)
  NonBase,  // one per non-base model (weight, density of ties)
};
struct ParameterSpec {
  std::string name;
  ParameterScope scope;
  // The default when `required` is false (none at all: nullopt).
  std::optional<Value> fallback;
  enum class Type { Number, Bool } type = Type::Number;
  bool required = false;
};
std::vector<ParameterSpec> method_parameters(Method method);

// "float32", "bfloat16", "float16" (also "torch.float32", "fp32", "f32",
// "bf16", "fp16", "f16"). nullopt for anything else.
std::optional<DType> parse_merge_dtype(const std::string& name);

}  // namespace tessel::merge

// mergekit's YAML, read with yaml-cpp. Scalars are typed as PyYAML types
// them (plain true/false/yes/no/on/off are booleans, plain numbers are
// numbers, quoted text is text), and a numeric parameter also takes text
// that reads as a number, as mergekit's pydantic validation does ("1e-5"
// is text to PyYAML).
#include "tessel/merge/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "io/read_file.hpp"
#include "tessel/core/error.hpp"

namespace tessel::merge {

namespace {

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    fail_line(line(at), what);
  }
  [[noreturn]] void fail_line(int line, const std::string& what) const {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[merge] {}:{}: {}", origin_, line, what));
  }
  static int line(const YAML::Node& n) { return n.Mark().line + 1; }

  void only_keys(const YAML::Node& map, std::initializer_list<const char*> keys,
                 const std::string& where) const {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::none_of(keys.begin(), keys.end(),
                       [&](const char* k) { return key == k; })) {
        std::string known;
        for (const char* k : keys)
          known += (known.empty() ? "" : ", ") + std::string(k);
        fail(kv.first, fmt::format("'{}' is not a key tessel merge supports "
                                   "in {} (supported: {})",
                                   key, where, known));
      }
    }
  }

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, fmt::format("'{}' must be a string", key));
    return n.Scalar();
  }

  Value scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) {
      fail(n, fmt::format("'{}' must be a number, boolean or string", key));
    }
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return s;  // quoted
    std::string lower = s;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (lower == "true" || lower == "yes" || lower == "on") return true;
    if (lower == "false" || lower == "no" || lower == "off") return false;
    if (const auto d = number(s)) return *d;
    return s;
  }

  static std::optional<double> number(const std::string& s) {
    if (s.empty()) return std::nullopt;
    std::string t = s;
    t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
    const char* b = t.data();
    const char* e = b + t.size();
    if (*b == '+') ++b;
    double d = 0;
    const auto [p, ec] = std::from_chars(b, e, d);
    if (ec != std::errc() || p != e) {
      std::string lower = t;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (lower == ".inf" || lower == "+.inf") return INFINITY;
      if (lower == "-.inf") return -INFINITY;
      if (lower == ".nan") return NAN;
      return std::nullopt;
    }
    return d;
  }

  // scalar, list of scalars (gradient), {filter, value} or a list of them.
  Setting setting(const YAML::Node& n, const std::string& key,
                  bool allow_cases) const {
    Setting s;
    s.line = line(n);
    const auto conditional = [&](const YAML::Node& c) {
      only_keys(c, {"filter", "value"}, fmt::format("parameter '{}'", key));
      if (!c["value"]) fail(c, fmt::format("'{}': a case needs a value", key));
      Setting::Case out;
      if (c["filter"] && !c["filter"].IsNull()) {
        out.filter = text(c["filter"], "filter");
      }
      out.value = setting(c["value"], key, false);
      return out;
    };
    if (n.IsScalar()) {
      s.values.push_back(scalar(n, key));
    } else if (n.IsMap() && allow_cases) {
      s.cases.push_back(conditional(n));
    } else if (n.IsSequence() && n.size() > 0) {
      if (n[0].IsMap()) {
        if (!allow_cases) {
          fail(n, fmt::format("'{}': a case's value cannot hold cases", key));
        }
        for (const auto& c : n) {
          if (!c.IsMap())
            fail(c, fmt::format("'{}': mix of cases and values", key));
          s.cases.push_back(conditional(c));
        }
      } else {
        for (const auto& v : n) s.values.push_back(scalar(v, key));
      }
    } else {
      fail(n, fmt::format("'{}' must be a value, a list of values or a list "
                          "of {{filter, value}} cases",
                          key));
    }
    return s;
  }

  Parameters parameters(const YAML::Node& n, const std::string& where) const {
    Parameters out;
    if (!n || n.IsNull()) return out;
    if (!n.IsMap())
      fail(n, fmt::format("'parameters' of {} must be a map", where));
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      out[key] = setting(kv.second, key, true);
    }
    return out;
  }

  std::string origin_;
};

// Also turns text that reads as a number into the number, for numeric
// parameters ("1e-5", which PyYAML leaves as text).
void check_type(const Reader& r, const ParameterSpec& spec, Setting& s) {
  if (!s.cases.empty()) {
    for (auto& c : s.cases) check_type(r, spec, c.value);
    return;
  }
  for (Value& v : s.values) {
    const bool ok =
        spec.type == ParameterSpec::Type::Bool
            ? std::holds_alternative<bool>(v) ||
                  (std::holds_alternative<double>(v) &&
                   (std::get<double>(v) == 0 || std::get<double>(v) == 1))
            : std::holds_alternative<double>(v) ||
                  (std::holds_alternative<std::string>(v) &&
                   Reader::number(std::get<std::string>(v)));
    if (!ok) {
      r.fail_line(s.line, fmt::format("'{}' must be a {}", spec.name,
                                      spec.type == ParameterSpec::Type::Bool
                                          ? "boolean"
                                          : "number"));
    }
    if (std::holds_alternative<std::string>(v)) {
      v = *Reader::number(std::get<std::string>(v));
    }
  }
}

// Each parameter named must be one the method takes, and at a level that
// reaches it: mergekit reads shared parameters (t, normalize, ...) only
// from the slice and global levels and silently skips them under a model.
void check_parameters(const Reader& r, Method method, Parameters& ps,
                      bool per_model) {
  const std::vector<ParameterSpec> specs = method_parameters(method);
  for (auto& entry : ps) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture
    // one in a lambda.
    const std::string& name = entry.first;
    Setting& setting = entry.second;
    const auto it = std::find_if(specs.begin(), specs.end(),
                                 [&](const auto& s) { return s.name == name; });
    if (it == specs.end()) {
      std::string known;
      for (const auto& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      r.fail_line(setting.line,
                  fmt::format("{} takes no parameter '{}' (it takes: {})",
                              method_name(method), name,
                              known.empty() ? "none" : known));
    }
    if (per_model && it->scope == ParameterScope::Shared) {
      r.fail_line(setting.line,
                  fmt::format("'{}' is one value for the whole merge: put it "
                              "under the top-level (or the slice's) "
                              "parameters, not a model's",
                              name));
    }
    check_type(r, *it, setting);
  }
}

}  // namespace

std::optional<Value> evaluate(const Setting& setting,
                              const std::string& tensor_name, double t) {
  if (!setting.cases.empty()) {
    for (const auto& c : setting.cases) {
      if (c.filter.empty() || c.filter == "*" ||
          (!tensor_name.empty() &&
           tensor_name.find(c.filter) != std::string::npos)) {
        return evaluate(c.value, tensor_name, t);
      }
    }
    return std::nullopt;
  }
  if (setting.values.empty()) return std::nullopt;
  if (setting.values.size() == 1) return setting.values[0];
  const auto n = setting.values.size();
  const auto as_number = [](const Value& v) -> std::optional<double> {
    if (std::holds_alternative<double>(v)) return std::get<double>(v);
    if (std::holds_alternative<std::string>(v)) {
      return Reader::number(std::get<std::string>(v));
    }
    return std::nullopt;
  };
  std::vector<double> numbers;
  for (const Value& v : setting.values) {
    const auto d = as_number(v);
    if (!d) {
      return setting.values[static_cast<std::size_t>(t * double(n - 1))];
    }
    numbers.push_back(*d);
  }
  const double scaled = t * double(n - 1);
  const auto i0 = static_cast<std::size_t>(scaled);
  const std::size_t i1 = std::min(n - 1, i0 + 1);
  const double frac = scaled - double(i0);
  return (1 - frac) * numbers[i0] + frac * numbers[i1];
}

std::vector<ParameterSpec> method_parameters(Method method) {
  using S = ParameterScope;
  using T = ParameterSpec::Type;
  switch (method) {
    case Method::Linear:
      return {{"weight", S::Input, std::nullopt, T::Number, true},
              {"normalize", S::Shared, Value(true), T::Bool}};
    case Method::Slerp:
      return {{"t", S::Shared, std::nullopt, T::Number, true}};
    case Method::Nuslerp:
      return {{"weight", S::NonBase, std::nullopt, T::Number, true},
              {"nuslerp_row_wise", S::Shared, Value(false), T::Bool},
              {"nuslerp_flatten", S::Shared, Value(true), T::Bool}};
    case Method::ModelStock:
      return {{"filter_wise", S::Shared, Value(false), T::Bool}};
    case Method::Passthrough:
      return {{"scale", S::Input, std::nullopt, T::Number}};
    default: break;
  }
  const TaskArithmeticOptions d = *task_arithmetic_defaults(method);
  std::vector<ParameterSpec> out{
      {"int8_mask", S::Shared, Value(false), T::Bool},
      {"normalize", S::Shared, Value(d.normalize), T::Bool},
      {"rescale", S::Shared, Value(d.rescale), T::Bool},
      {"lambda", S::Shared, Value(1.0), T::Number},
      {"weight", S::NonBase, std::nullopt, T::Number, true},
      {"density", S::NonBase, Value(1.0), T::Number}};
  if (d.sparsification == Sparsification::MagnitudeOutliers) {
    out.push_back({"gamma", S::NonBase, Value(0.01), T::Number});
  }
  if (d.sparsification == Sparsification::DellaMagprune) {
    out.push_back({"epsilon", S::NonBase, Value(0.15), T::Number});
  }
  return out;
}

std::optional<DType> parse_merge_dtype(const std::string& name) {
  std::string n = name;
  if (n.starts_with("torch.")) n = n.substr(6);
  if (n == "float32" || n == "fp32" || n == "f32") return DType::F32;
  if (n == "bfloat16" || n == "bf16") return DType::BF16;
  if (n == "float16" || n == "fp16" || n == "f16") return DType::F16;
  return std::nullopt;
}

namespace {

MergeConfig parse_config(const YAML::Node& root, const Reader& r);

}  // namespace

MergeConfig MergeConfig::parse(const std::string& yaml,
                               const std::string& origin) {
  const Reader r(origin);
  // yaml-cpp reports malformed text, and nesting past its depth guard, by
  // its own exceptions.
  try {
    return parse_config(YAML::Load(yaml), r);
  } catch (const YAML::Exception& e) {
    r.fail_line(e.mark.line + 1, "not valid YAML: " + e.msg);
  }
}

namespace {

MergeConfig parse_config(const YAML::Node& root, const Reader& r) {
  if (!root.IsMap()) r.fail(root, "a merge config is a YAML map");
  r.only_keys(root,
              {"merge_method", "models", "slices", "base_model", "parameters",
               "dtype", "out_dtype", "tokenizer_source"},
              "the config");
  MergeConfig c;
  if (!root["merge_method"]) r.fail_line(1, "'merge_method' is missing");
  const std::string method = r.text(root["merge_method"], "merge_method");
  const auto m = parse_method(method);
  if (!m) {
    r.fail(root["merge_method"],
           fmt::format("merge_method '{}' is not one tessel merge implements "
                       "(supported: {})",
                       method, supported_methods()));
  }
  c.method = *m;
  const auto dtype_key = [&](const char* key) -> std::optional<DType> {
    const YAML::Node n = root[key];
    if (!n || n.IsNull()) return std::nullopt;
    const std::string s = r.text(n, key);
    const auto d = parse_merge_dtype(s);
    if (!d) {
      r.fail(n, fmt::format("{} '{}' is not float32, bfloat16 or float16", key,
                            s));
    }
    return d;
  };
  c.dtype = dtype_key("dtype");
  c.out_dtype = dtype_key("out_dtype");
  if (const YAML::Node t = root["tokenizer_source"]; t && !t.IsNull()) {
    if (r.text(t, "tokenizer_source") != "base") {
      r.fail(t, fmt::format("tokenizer_source '{}' is not supported: tessel "
                            "merge takes the base model's tokenizer "
                            "(tokenizer_source: base) and does not build "
                            "union vocabularies",
                            t.Scalar()));
    }
    c.tokenizer_from_base = true;
  }
  if (const YAML::Node b = root["base_model"]; b && !b.IsNull()) {
    c.base_model = r.text(b, "base_model");
  }
  c.parameters = r.parameters(root["parameters"], "the config");
  check_parameters(r, c.method, c.parameters, false);

  const YAML::Node models = root["models"];
  const YAML::Node slices = root["slices"];
  const bool has_models = models && !models.IsNull();
  const bool has_slices = slices && !slices.IsNull();
  if (has_models == has_slices) {
    r.fail(root, "exactly one of 'models' and 'slices' must be given");
  }
  const auto model_ref = [&](const YAML::Node& n) {
    if (!n["model"]) r.fail(n, "an entry needs 'model'");
    return r.text(n["model"], "model");
  };
  if (has_models) {
    if (!models.IsSequence() || models.size() == 0) {
      r.fail(models, "'models' must be a non-empty list");
    }
    for (const auto& e : models) {
      if (!e.IsMap()) r.fail(e, "each entry of 'models' is a map with 'model'");
      r.only_keys(e, {"model", "parameters"}, "a model entry");
      InputModel in{model_ref(e), r.parameters(e["parameters"], "a model"),
                    Reader::line(e)};
      check_parameters(r, c.method, in.parameters, true);
      c.models.push_back(std::move(in));
    }
  } else {
    if (!slices.IsSequence() || slices.size() == 0) {
      r.fail(slices, "'slices' must be a non-empty list");
    }
    for (const auto& s : slices) {
      if (!s.IsMap()) r.fail(s, "each slice is a map with 'sources'");
      r.only_keys(s, {"sources", "base_model", "parameters"}, "a slice");
      OutputSlice out;
      out.line = Reader::line(s);
      if (s["base_model"] && !s["base_model"].IsNull()) {
        out.base_model = r.text(s["base_model"], "base_model");
      }
      out.parameters = r.parameters(s["parameters"], "a slice");
      check_parameters(r, c.method, out.parameters, false);
      const YAML::Node sources = s["sources"];
      if (!sources || !sources.IsSequence() || sources.size() == 0) {
        r.fail(s, "a slice needs a non-empty list of 'sources'");
      }
      for (const auto& src : sources) {
        if (!src.IsMap()) r.fail(src, "a source is a map with 'model'");
        r.only_keys(src, {"model", "layer_range", "parameters"}, "a source");
        InputSlice in;
        in.model = model_ref(src);
        in.line = Reader::line(src);
        const YAML::Node range = src["layer_range"];
        if (!range || !range.IsSequence() || range.size() != 2) {
          r.fail(src, "a source needs 'layer_range: [begin, end]'");
        }
        const auto bound = [&](const YAML::Node& n) {
          const auto d = Reader::number(r.text(n, "layer_range"));
          if (!d || *d != std::floor(*d) || *d < 0 || *d > 1e9) {
            r.fail(n, "layer_range holds layer numbers (whole, from 0)");
          }
          return static_cast<std::int64_t>(*d);
        };
        in.layer_begin = bound(range[0]);
        in.layer_end = bound(range[1]);
        if (in.layer_end <= in.layer_begin) {
          r.fail(range, "layer_range [begin, end) must hold a layer");
        }
        in.parameters = r.parameters(src["parameters"], "a source");
        check_parameters(r, c.method, in.parameters, true);
        out.sources.push_back(std::move(in));
      }
      c.slices.push_back(std::move(out));
    }
  }
  return c;
}

}  // namespace

MergeConfig MergeConfig::load(const std::filesystem::path& path) {
  return parse(io::read_text_file(path), path.string());
}

std::vector<std::string> MergeConfig::referenced_models() const {
  std::vector<std::string> out;
  const auto add = [&](const std::string& m) {
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  };
  if (base_model) add(*base_model);
  for (const auto& m : models) add(m.model);
  for (const auto& s : slices) {
    if (s.base_model) add(*s.base_model);
    for (const auto& src : s.sources) add(src.model);
  }
  return out;
}

}  // namespace tessel::merge

#include "tessel/merge/plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tessel/core/error.hpp"

namespace tessel::merge {

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[merge] " + what);
}

constexpr const char* kLayers = "model.layers.";
constexpr const char* kEmbedding = "model.embed_tokens.weight";
constexpr const char* kFinalNorm = "model.norm.weight";
constexpr const char* kHead = "lm_head.weight";

enum class BasePolicy { Ignored, Optional, Required };

BasePolicy base_policy(Method m) {
  switch (m) {
    case Method::Linear:
    case Method::Passthrough: return BasePolicy::Ignored;
    case Method::Nuslerp: return BasePolicy::Optional;
    default: return BasePolicy::Required;
  }
}

std::string layer_name(std::int64_t layer, const std::string& suffix) {
  return fmt::format("{}{}.{}", kLayers, layer, suffix);
}

class Planner {
 public:
  Planner(const MergeConfig& c, const std::vector<ModelSummary>& m)
      : config_(c), summaries_(m), specs_(method_parameters(c.method)) {
    plan_.method = c.method;
    plan_.models = c.referenced_models();
    if (summaries_.size() != plan_.models.size()) {
      refuse("internal: one summary per referenced model expected");
    }
    plan_.donor = 0;  // the base when there is one, else the first model
  }

  MergePlan run() {
    std::vector<OutputSlice> slices = config_.slices;
    if (!config_.models.empty()) slices = {models_as_slice()};
    for (std::size_t i = 0; i < slices.size(); ++i) check_slice(slices[i], i);

    const ModelSummary& donor = summaries_[plan_.donor];
    for (std::size_t m = 0; m < summaries_.size(); ++m) {
      const std::string& type = summaries_[m].config.model_type;
      if (type != donor.config.model_type) {
        refuse(
            fmt::format("{} is a {} model and {} a {} one: models of one "
                        "architecture merge",
                        plan_.models[m], type, plan_.models[plan_.donor],
                        donor.config.model_type));
      }
    }
    // The layer's tensors, as the donor names them.
    std::vector<std::string> suffixes;
    const std::string first = std::string(kLayers) + "0.";
    for (const auto& [name, shape] : donor.shapes) {
      if (name.starts_with(first))
        suffixes.push_back(name.substr(first.size()));
    }

    plan_tensor(
        kEmbedding, slices.front(),
        [](const InputSlice&) { return std::string(kEmbedding); }, 0.0);
    std::int64_t out_layer = 0;
    for (const OutputSlice& s : slices) {
      const std::int64_t layers =
          s.sources[0].layer_end - s.sources[0].layer_begin;
      for (std::int64_t i = 0; i < layers; ++i) {
        const double t = layers > 1 ? double(i) / double(layers - 1) : 1.0;
        for (const std::string& suffix : suffixes) {
          plan_tensor(
              layer_name(out_layer, suffix), s,
              [&](const InputSlice& src) {
                return layer_name(src.layer_begin + i, suffix);
              },
              t);
        }
        plan_.layers.push_back(
            {model_index(s.sources[0].model), s.sources[0].layer_begin + i});
        ++out_layer;
      }
    }
    plan_tensor(
        kFinalNorm, slices.back(),
        [](const InputSlice&) { return std::string(kFinalNorm); }, 0.0);
    // The head is optional: planned when any input has one, taking a tied
    // model's embedding in its place (mergekit's tied_names).
    bool any_head = false;
    for (const InputSlice& src : slices.back().sources) {
      any_head |= summary(src.model).shapes.contains(kHead);
    }
    if (any_head) {
      plan_tensor(
          kHead, slices.back(),
          [&](const InputSlice& src) {
            return std::string(
                summary(src.model).shapes.contains(kHead) ? kHead : kEmbedding);
          },
          0.0);
    }

    plan_.config = donor.config;
    plan_.config.num_hidden_layers = out_layer;
    plan_.config.tie_word_embeddings = !any_head;
    plan_.config.rope_interleaved = false;
    return std::move(plan_);
  }

 private:
  std::size_t model_index(const std::string& model) const {
    const auto it = std::find(plan_.models.begin(), plan_.models.end(), model);
    return static_cast<std::size_t>(it - plan_.models.begin());
  }
  const ModelSummary& summary(const std::string& model) const {
    return summaries_[model_index(model)];
  }

  // `models:` as mergekit normalises it: one slice over every layer of
  // each model, the base added when it is not listed.
  OutputSlice models_as_slice() const {
    OutputSlice s;
    bool base_listed = false;
    for (const InputModel& m : config_.models) {
      base_listed |= config_.base_model && m.model == *config_.base_model;
      s.sources.push_back({m.model, 0,
                           summary(m.model).config.num_hidden_layers,
                           m.parameters, m.line});
    }
    if (config_.base_model && !base_listed) {
      s.sources.push_back(
          {*config_.base_model,
           0,
           summary(*config_.base_model).config.num_hidden_layers,
           {},
           0});
    }
    return s;
  }

  std::optional<std::string> slice_base(const OutputSlice& s) const {
    return s.base_model ? s.base_model : config_.base_model;
  }

  void check_slice(const OutputSlice& s, std::size_t index) const {
    const std::string where =
        config_.models.empty() ? fmt::format("slice {}", index) : "models";
    for (const InputSlice& src : s.sources) {
      const std::int64_t layers = summary(src.model).config.num_hidden_layers;
      if (src.layer_end > layers) {
        refuse(fmt::format(
            "{}: layer_range [{}, {}) of {} goes past its {} "
            "layers",
            where, src.layer_begin, src.layer_end, src.model, layers));
      }
      const std::int64_t n = src.layer_end - src.layer_begin;
      const std::int64_t n0 = s.sources[0].layer_end - s.sources[0].layer_begin;
      if (n != n0) {
        refuse(
            fmt::format("{}: all inputs must hold the same number of "
                        "layers, but {} has {} and {} has {}",
                        where, s.sources[0].model, n0, src.model, n));
      }
    }
    std::vector<std::string> ids;
    for (const InputSlice& src : s.sources) {
      if (std::find(ids.begin(), ids.end(), src.model) != ids.end()) {
        refuse(fmt::format("{}: {} is an input twice", where, src.model));
      }
      ids.push_back(src.model);
    }
    const BasePolicy policy = base_policy(config_.method);
    const std::optional<std::string> base =
        policy == BasePolicy::Ignored ? std::nullopt : slice_base(s);
    const bool has_base =
        base && std::find(ids.begin(), ids.end(), *base) != ids.end();
    const std::string method(method_name(config_.method));
    if (base && !has_base) {
      refuse(fmt::format("{}: the base model {} is not among the inputs", where,
                         *base));
    }
    if (policy == BasePolicy::Required && !has_base) {
      refuse(fmt::format("{} needs a base_model ({})", method, where));
    }
    const std::size_t count = ids.size();
    const std::size_t non_base = count - (has_base ? 1 : 0);
    const auto need = [&](bool ok, const std::string& what) {
      if (!ok) {
        refuse(fmt::format("{} takes {}; {} has {} input{}{}", method, what,
                           where, count, count == 1 ? "" : "s",
                           has_base ? " counting the base" : ""));
      }
    };
    switch (config_.method) {
      case Method::Slerp:
        need(count == 2, "exactly two models, one of them the base");
        break;
      case Method::Nuslerp:
        need(non_base == 2, "exactly two models besides the base");
        break;
      case Method::ModelStock:
        need(count >= 3, "a base model and at least two others");
        break;
      case Method::Passthrough: need(count == 1, "one model per slice"); break;
      default: break;
    }
  }

  // mergekit's precedence: the model's own settings (every source of the
  // slice naming it), the slice's, the config's.
  std::vector<const Parameters*> sources_for(const OutputSlice& s,
                                             const std::string* model) const {
    std::vector<const Parameters*> out;
    if (model) {
      for (const InputSlice& src : s.sources) {
        if (src.model == *model) out.push_back(&src.parameters);
      }
    }
    out.push_back(&s.parameters);
    out.push_back(&config_.parameters);
    return out;
  }

  std::optional<Value> resolve(const ParameterSpec& spec,
                               const std::vector<const Parameters*>& sources,
                               const std::string& tensor, double t,
                               const std::string& who) const {
    for (const Parameters* ps : sources) {
      const auto it = ps->find(spec.name);
      if (it == ps->end()) continue;
      if (auto v = evaluate(it->second, tensor, t)) return v;
    }
    if (spec.required) {
      refuse(
          fmt::format("{} needs parameter '{}' for {}{} and none of the "
                      "config's settings gives one",
                      method_name(config_.method), spec.name, who, tensor));
    }
    return spec.fallback;
  }

  template <class InputName>
  void plan_tensor(const std::string& name, const OutputSlice& s,
                   InputName&& input_name, double t) {
    PlannedTensor out;
    out.name = name;
    for (const ParameterSpec& spec : specs_) {
      if (spec.scope != ParameterScope::Shared) continue;
      if (auto v = resolve(spec, sources_for(s, nullptr), name, t, "")) {
        out.parameters[spec.name] = *v;
      }
    }
    const BasePolicy policy = base_policy(config_.method);
    const std::optional<std::string> base = slice_base(s);
    for (const InputSlice& src : s.sources) {
      PlannedInput in;
      in.model = model_index(src.model);
      in.tensor = input_name(src);
      const bool is_base = base && src.model == *base;
      for (const ParameterSpec& spec : specs_) {
        if (spec.scope == ParameterScope::Shared) continue;
        if (is_base && spec.scope != ParameterScope::Input) continue;
        if (auto v = resolve(spec, sources_for(s, &src.model), in.tensor, t,
                             src.model + ".")) {
          in.parameters[spec.name] = *v;
        }
      }
      const auto& shapes = summaries_[in.model].shapes;
      const auto it = shapes.find(in.tensor);
      if (it == shapes.end()) {
        refuse(fmt::format("{} has no tensor {} (needed for {})", src.model,
                           in.tensor, name));
      }
      if (out.inputs.empty()) {
        out.shape = it->second;
      } else if (it->second != out.shape) {
        const PlannedInput& first = out.inputs.front();
        refuse(
            fmt::format("the models disagree on {}: {} in {} is {}, {} in "
                        "{} is {}",
                        name, first.tensor, plan_.models[first.model],
                        shape_string(out.shape), in.tensor, src.model,
                        shape_string(it->second)));
      }
      if (is_base && policy != BasePolicy::Ignored) {
        out.base = out.inputs.size();
      }
      out.inputs.push_back(std::move(in));
    }
    plan_.tensors.push_back(std::move(out));
  }

  const MergeConfig& config_;
  const std::vector<ModelSummary>& summaries_;
  std::vector<ParameterSpec> specs_;
  MergePlan plan_;
};

const Value* find(const ResolvedParameters& p, const std::string& name) {
  const auto it = p.find(name);
  return it == p.end() ? nullptr : &it->second;
}

double as_number(const Value& v) {
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) ? 1.0 : 0.0;
  // The parser turned numeric text into numbers; text is a caller's bug.
  refuse("parameter '" + std::get<std::string>(v) + "' is not a number");
}

}  // namespace

MergePlan plan_merge(const MergeConfig& config,
                     const std::vector<ModelSummary>& models) {
  return Planner(config, models).run();
}

double number_parameter(const ResolvedParameters& p, const std::string& name) {
  const Value* v = find(p, name);
  if (!v) refuse(fmt::format("parameter '{}' has no value", name));
  return as_number(*v);
}

bool flag_parameter(const ResolvedParameters& p, const std::string& name) {
  return number_parameter(p, name) != 0.0;
}

std::optional<double> optional_number(const ResolvedParameters& p,
                                      const std::string& name) {
  const Value* v = find(p, name);
  if (!v) return std::nullopt;
  return as_number(*v);
}

}  // namespace tessel::merge

#include "tessel/models/config.hpp"

#include <fmt/ranges.h>

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "io/json_strict.hpp"
#include "io/read_file.hpp"

namespace tessel {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) {
  detail::fail(ErrorCode::BadConfig, "DecoderConfig", "{}", what);
}

std::int64_t get_int(const json& j, const char* key, std::int64_t fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number_integer())
    bad(fmt::format("'{}' must be an integer", key));
  return it->get<std::int64_t>();
}

double get_double(const json& j, const char* key, double fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_number()) bad(fmt::format("'{}' must be a number", key));
  return it->get<double>();
}

bool get_bool(const json& j, const char* key, bool fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) bad(fmt::format("'{}' must be true or false", key));
  return it->get<bool>();
}

// A token id; HF allows a list of ids for eos, of which we keep the first.
std::optional<std::int64_t> get_token(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_array() && !it->empty() && (*it)[0].is_number_integer()) {
    return (*it)[0].get<std::int64_t>();
  }
  if (!it->is_number_integer())
    bad(fmt::format("'{}' must be a token id", key));
  return it->get<std::int64_t>();
}

// The integer sizes by their config.json keys.
constexpr std::pair<const char*, std::int64_t DecoderConfig::*> kSizes[] = {
    {"vocab_size", &DecoderConfig::vocab_size},
    {"hidden_size", &DecoderConfig::hidden_size},
    {"intermediate_size", &DecoderConfig::intermediate_size},
    {"num_hidden_layers", &DecoderConfig::num_hidden_layers},
    {"num_attention_heads", &DecoderConfig::num_attention_heads},
    {"num_key_value_heads", &DecoderConfig::num_key_value_heads},
    {"head_dim", &DecoderConfig::head_dim},
    {"max_position_embeddings", &DecoderConfig::max_position_embeddings},
};

// rope_scaling (transformers 4) or rope_parameters (transformers 5): none,
// "default", or "llama3"; other types are refused rather than ignored,
// since ignoring them gives wrong logits past the original context.
std::optional<Llama3RopeScaling> rope_scaling_of(const json& r) {
  if (!r.is_object()) bad("'rope_scaling' must be an object");
  std::string type = "default";
  for (const char* key : {"rope_type", "type"}) {
    if (const auto it = r.find(key); it != r.end()) {
      if (!it->is_string())
        bad(fmt::format("rope_scaling '{}' must be a string", key));
      type = it->get<std::string>();
      break;
    }
  }
  if (type == "default") return std::nullopt;
  if (type != "llama3") {
    bad(fmt::format("rope_scaling type '{}' is not supported (default, llama3)",
                    type));
  }
  Llama3RopeScaling s;
  s.factor = get_double(r, "factor", s.factor);
  s.low_freq_factor = get_double(r, "low_freq_factor", s.low_freq_factor);
  s.high_freq_factor = get_double(r, "high_freq_factor", s.high_freq_factor);
  s.original_max_position_embeddings =
      get_int(r, "original_max_position_embeddings",
              s.original_max_position_embeddings);
  return s;
}

// E4001 unless the product of the sizes `keys` names (each at most
// kMaxDecoderSize, so the product in double is exact enough for the bound)
// is at most kMaxDecoderProduct.
void check_product(std::initializer_list<std::pair<const char*, double>> keys,
                   const char* what) {
  double product = 1;
  std::string names;
  std::string values;
  for (const auto& [key, factor] : keys) {
    product *= factor;
    names += fmt::format("{}'{}'", names.empty() ? "" : " * ", key);
    values += fmt::format("{}{}", values.empty() ? "" : " * ", factor);
  }
  if (product > static_cast<double>(kMaxDecoderProduct)) {
    bad(
        fmt::format("{} ({} = {}, {}) is past tessel's bound of 2^48 "
                    "elements",
                    names, values, product, what));
  }
}

}  // namespace

bool is_supported_architecture(std::string_view model_type) {
  for (const std::string_view a : kDecoderArchitectures) {
    if (a == model_type) return true;
  }
  return false;
}

std::string supported_architectures() {
  return fmt::format("{}", fmt::join(kDecoderArchitectures, ", "));
}

void DecoderConfig::validate() const {
  if (!is_supported_architecture(model_type)) {
    bad(fmt::format("model_type '{}' is not a supported decoder ({})",
                    model_type, supported_architectures()));
  }
  for (const auto& [key, member] : kSizes) {
    if (this->*member <= 0) {
      bad(fmt::format("'{}' must be positive, not {}", key, this->*member));
    }
    if (this->*member > kMaxDecoderSize) {
      bad(fmt::format("'{}' {} is past tessel's bound of 2^31", key,
                      this->*member));
    }
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    bad(
        fmt::format("num_attention_heads ({}) must be a multiple of "
                    "num_key_value_heads ({})",
                    num_attention_heads, num_key_value_heads));
  }
  // Every tensor the decoder forms, in elements.
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  check_product(
      {{"vocab_size", d(vocab_size)}, {"hidden_size", d(hidden_size)}},
      "the embedding");
  check_product({{"num_attention_heads", d(num_attention_heads)},
                 {"head_dim", d(head_dim)},
                 {"hidden_size", d(hidden_size)}},
                "q_proj and o_proj");
  check_product({{"intermediate_size", d(intermediate_size)},
                 {"hidden_size", d(hidden_size)}},
                "the MLP's projections");
  check_product({{"max_position_embeddings", d(max_position_embeddings)},
                 {"num_key_value_heads", d(num_key_value_heads)},
                 {"head_dim", d(head_dim)}},
                "a layer's KV cache");
  // And all the parameters together.
  const double per_layer =
      d(hidden_size) * (d(num_attention_heads) + d(num_key_value_heads)) *
          d(head_dim) * 2 +
      3 * d(intermediate_size) * d(hidden_size);
  check_product({{"num_hidden_layers", d(num_hidden_layers)},
                 {"parameters per layer", per_layer}},
                "the parameters of all layers");
  if (head_dim % 2 != 0) {
    bad(fmt::format("head_dim ({}) must be even for RoPE", head_dim));
  }
  if (!(rms_norm_eps > 0) || !(rope_theta > 0)) {
    bad("rms_norm_eps and rope_theta must be positive");
  }
  if (rope_scaling) {
    const Llama3RopeScaling& s = *rope_scaling;
    if (!(s.factor > 0) || !(s.low_freq_factor > 0) ||
        !(s.high_freq_factor > s.low_freq_factor) ||
        s.original_max_position_embeddings <= 0) {
      bad("rope_scaling (llama3) needs factor > 0, 0 < low_freq_factor < "
          "high_freq_factor and original_max_position_embeddings > 0");
    }
  }
  for (const auto& [key, id] : {std::pair{"bos_token_id", bos_token_id},
                                std::pair{"eos_token_id", eos_token_id}}) {
    if (id && (*id < 0 || *id >= vocab_size)) {
      bad(fmt::format("'{}' {} is outside the vocabulary of {}", key, *id,
                      vocab_size));
    }
  }
}

DecoderConfig DecoderConfig::from_json(const std::string& text) {
  json j;
  if (const auto defect = io::parse_json_strict(text, j)) {
    bad(fmt::format("config.json is not valid JSON: {}{}", defect->message,
                    defect->byte >= 0 ? fmt::format(" (byte {})", defect->byte)
                                      : std::string()));
  }
  if (!j.is_object()) bad("config.json is not a JSON object");
  DecoderConfig c;
  if (const auto it = j.find("model_type"); it != j.end()) {
    if (!it->is_string()) bad("'model_type' must be a string");
    c.model_type = it->get<std::string>();
  }
  if (!is_supported_architecture(c.model_type)) {
    c.validate();  // names the type
  }
  // HuggingFace's defaults of the model_type's class where a key is absent.
  const bool qwen = c.model_type != "llama";
  c.vocab_size = get_int(j, "vocab_size", qwen ? 151936 : 32000);
  c.hidden_size = get_int(j, "hidden_size", 4096);
  c.intermediate_size = get_int(j, "intermediate_size", qwen ? 22016 : 11008);
  c.num_hidden_layers = get_int(j, "num_hidden_layers", 32);
  c.num_attention_heads = get_int(j, "num_attention_heads", 32);
  c.num_key_value_heads =
      get_int(j, "num_key_value_heads", c.num_attention_heads);
  // Qwen3Config's head_dim defaults to 128; Llama and Qwen2 derive it.
  c.head_dim = get_int(j, "head_dim",
                       c.model_type == "qwen3" ? 128
                       : c.num_attention_heads > 0
                           ? c.hidden_size / c.num_attention_heads
                           : 0);
  c.max_position_embeddings =
      get_int(j, "max_position_embeddings", qwen ? 32768 : 2048);
  c.rms_norm_eps = get_double(j, "rms_norm_eps", 1e-6);
  c.rope_theta = get_double(j, "rope_theta", 10000.0);
  c.initializer_range = get_double(j, "initializer_range", 0.02);
  c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", false);
  // Qwen2's attention always has q/k/v biases (its config has no key).
  c.attention_bias =
      c.model_type == "qwen2" || get_bool(j, "attention_bias", false);
  c.bos_token_id = get_token(j, "bos_token_id");
  c.eos_token_id = get_token(j, "eos_token_id");
  // transformers 5 moved rope_theta and the scaling into rope_parameters.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (it->is_object()) {
      c.rope_theta = get_double(*it, "rope_theta", c.rope_theta);
    }
    c.rope_scaling = rope_scaling_of(*it);
  }
  if (const auto it = j.find("hidden_act"); it != j.end() && *it != "silu") {
    bad(fmt::format("hidden_act {} is not supported (only silu)", it->dump()));
  }
  if (get_bool(j, "mlp_bias", false)) bad("'mlp_bias' true is not supported");
  if (get_bool(j, "use_sliding_window", false)) {
    bad("'use_sliding_window' true is not supported (full attention only)");
  }
  c.validate();
  return c;
}

DecoderConfig DecoderConfig::load(const std::filesystem::path& path) {
  return from_json(io::read_text_file(path));
}

std::string DecoderConfig::to_json() const {
  json j = {
      {"architectures",
       {model_type == "qwen3"   ? "Qwen3ForCausalLM"
        : model_type == "qwen2" ? "Qwen2ForCausalLM"
                                : "LlamaForCausalLM"}},
      {"model_type", model_type},
      {"rms_norm_eps", rms_norm_eps},
      {"rope_theta", rope_theta},
      {"initializer_range", initializer_range},
      {"tie_word_embeddings", tie_word_embeddings},
      {"attention_bias", attention_bias},
      {"hidden_act", "silu"},
      {"torch_dtype", "float32"},
      {"bos_token_id", bos_token_id ? json(*bos_token_id) : json(nullptr)},
      {"eos_token_id", eos_token_id ? json(*eos_token_id) : json(nullptr)},
  };
  for (const auto& [key, member] : kSizes) j[key] = this->*member;
  if (rope_scaling) {
    j["rope_scaling"] = {{"rope_type", "llama3"},
                         {"factor", rope_scaling->factor},
                         {"low_freq_factor", rope_scaling->low_freq_factor},
                         {"high_freq_factor", rope_scaling->high_freq_factor},
                         {"original_max_position_embeddings",
                          rope_scaling->original_max_position_embeddings}};
  }
  return j.dump(2) + "\n";
}

}  // namespace tessel

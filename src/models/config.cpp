#include "tessel/models/config.hpp"

#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "io/atomic_file.hpp"

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

}  // namespace

void DecoderConfig::validate() const {
  if (model_type != "qwen3" && model_type != "llama") {
    bad(
        fmt::format("model_type '{}' is not a supported decoder (qwen3, "
                    "llama)",
                    model_type));
  }
  for (const auto& [key, member] : kSizes) {
    if (this->*member <= 0) {
      bad(fmt::format("'{}' must be positive, not {}", key, this->*member));
    }
  }
  if (num_attention_heads % num_key_value_heads != 0) {
    bad(
        fmt::format("num_attention_heads ({}) must be a multiple of "
                    "num_key_value_heads ({})",
                    num_attention_heads, num_key_value_heads));
  }
  if (head_dim % 2 != 0) {
    bad(fmt::format("head_dim ({}) must be even for RoPE", head_dim));
  }
  if (!(rms_norm_eps > 0) || !(rope_theta > 0)) {
    bad("rms_norm_eps and rope_theta must be positive");
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
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    bad(fmt::format("config.json is not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) bad("config.json is not a JSON object");
  DecoderConfig c;
  if (const auto it = j.find("model_type"); it != j.end()) {
    if (!it->is_string()) bad("'model_type' must be a string");
    c.model_type = it->get<std::string>();
  }
  // HuggingFace's defaults of the model_type's class where a key is absent.
  const bool qwen = c.model_type == "qwen3";
  c.vocab_size = get_int(j, "vocab_size", qwen ? 151936 : 32000);
  c.hidden_size = get_int(j, "hidden_size", 4096);
  c.intermediate_size = get_int(j, "intermediate_size", qwen ? 22016 : 11008);
  c.num_hidden_layers = get_int(j, "num_hidden_layers", 32);
  c.num_attention_heads = get_int(j, "num_attention_heads", 32);
  c.num_key_value_heads =
      get_int(j, "num_key_value_heads", c.num_attention_heads);
  // Qwen3Config's head_dim defaults to 128; Llama derives it.
  c.head_dim = get_int(j, "head_dim",
                       qwen ? 128
                       : c.num_attention_heads > 0
                           ? c.hidden_size / c.num_attention_heads
                           : 0);
  c.max_position_embeddings =
      get_int(j, "max_position_embeddings", qwen ? 32768 : 2048);
  c.rms_norm_eps = get_double(j, "rms_norm_eps", 1e-6);
  c.rope_theta = get_double(j, "rope_theta", 10000.0);
  c.initializer_range = get_double(j, "initializer_range", 0.02);
  c.tie_word_embeddings = get_bool(j, "tie_word_embeddings", false);
  c.attention_bias = get_bool(j, "attention_bias", false);
  c.bos_token_id = get_token(j, "bos_token_id");
  c.eos_token_id = get_token(j, "eos_token_id");
  if (const auto it = j.find("rope_scaling"); it != j.end() && !it->is_null()) {
    bad("'rope_scaling' is not supported (only plain RoPE)");
  }
  if (const auto it = j.find("hidden_act"); it != j.end() && *it != "silu") {
    bad(fmt::format("hidden_act {} is not supported (only silu)", it->dump()));
  }
  c.validate();
  return c;
}

DecoderConfig DecoderConfig::load(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = io::read_file(path);
  return from_json(std::string(bytes.begin(), bytes.end()));
}

std::string DecoderConfig::to_json() const {
  json j = {
      {"architectures",
       {model_type == "qwen3" ? "Qwen3ForCausalLM" : "LlamaForCausalLM"}},
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
  return j.dump(2) + "\n";
}

}  // namespace tessel

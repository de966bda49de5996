// The configuration of a Llama/Qwen-family decoder, read from and written
// to a HuggingFace-style config.json (Qwen3 and Llama keys).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tessel {

// The defaults are the model `tessel train` trains.
struct DecoderConfig {
  // "qwen3" (per-head q_norm/k_norm, explicit head_dim) or "llama".
  std::string model_type = "qwen3";
  std::int64_t vocab_size = 256;
  std::int64_t hidden_size = 128;
  std::int64_t intermediate_size = 384;
  std::int64_t num_hidden_layers = 3;
  std::int64_t num_attention_heads = 8;
  std::int64_t num_key_value_heads = 4;
  // A Llama config without it means hidden_size / num_attention_heads.
  std::int64_t head_dim = 16;
  std::int64_t max_position_embeddings = 64;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  double initializer_range = 0.02;
  bool tie_word_embeddings = true;
  bool attention_bias = false;
  std::optional<std::int64_t> bos_token_id;
  std::optional<std::int64_t> eos_token_id;

  // Qwen3 normalises each head's queries and keys before RoPE.
  bool qk_norm() const { return model_type == "qwen3"; }

  // E4001 naming the key for anything a decoder cannot be built from
  // (non-positive sizes, heads not dividing, unknown model_type, RoPE
  // scaling, which is not supported).
  void validate() const;

  // Unknown keys are ignored; missing ones take the defaults of the
  // model_type's HuggingFace class. E4001 for malformed JSON or a key of
  // the wrong type (naming the key).
  static DecoderConfig from_json(const std::string& text);
  static DecoderConfig load(const std::filesystem::path& path);
  std::string to_json() const;
};

}  // namespace tessel

// The configuration of a Llama/Qwen-family decoder, read from and written
// to a HuggingFace-style config.json (Llama, Qwen2 and Qwen3 keys), or
// made from a GGUF file's metadata (models/gguf_model.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tessel {

// Llama 3's frequency-dependent RoPE scaling (HF rope_type "llama3"):
// wavelengths longer than original_max / low_freq_factor are divided by
// `factor`, shorter than original_max / high_freq_factor kept, and those
// between blended smoothly.
struct Llama3RopeScaling {
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_max_position_embeddings = 8192;
};

// The defaults are the model `tessel train` trains.
struct DecoderConfig {
  // "llama", "qwen2" (q/k/v biases) or "qwen3" (per-head q_norm/k_norm,
  // explicit head_dim).
  std::string model_type = "qwen3";
  std::int64_t vocab_size = 256;
  std::int64_t hidden_size = 128;
  std::int64_t intermediate_size = 384;
  std::int64_t num_hidden_layers = 3;
  std::int64_t num_attention_heads = 8;
  std::int64_t num_key_value_heads = 4;
  // A Llama or Qwen2 config without it means hidden_size /
  // num_attention_heads.
  std::int64_t head_dim = 16;
  std::int64_t max_position_embeddings = 64;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::optional<Llama3RopeScaling> rope_scaling;
  double initializer_range = 0.02;
  bool tie_word_embeddings = true;
  // q/k/v projections carry biases (always for qwen2).
  bool attention_bias = false;
  std::optional<std::int64_t> bos_token_id;
  std::optional<std::int64_t> eos_token_id;
  // The rows of q_proj and k_proj are in Meta's interleaved rotary order
  // (what llama.cpp's converter writes for llama files): RoPE then pairs
  // adjacent dimensions instead of the halves. Not a config.json key: it
  // describes the weights a GGUF file holds.
  bool rope_interleaved = false;

  // Qwen3 normalises each head's queries and keys before RoPE.
  bool qk_norm() const { return model_type == "qwen3"; }

  // E4001 naming the key for anything a decoder cannot be built from
  // (non-positive sizes, heads not dividing, unknown model_type listing the
  // supported ones, bad RoPE scaling).
  void validate() const;

  // Unknown keys are ignored; missing ones take the defaults of the
  // model_type's HuggingFace class. E4001 for malformed JSON, a key of the
  // wrong type (naming the key), and what tessel does not implement
  // (rope_scaling other than llama3, hidden_act other than silu, MLP
  // biases, sliding-window attention).
  static DecoderConfig from_json(const std::string& text);
  static DecoderConfig load(const std::filesystem::path& path);
  std::string to_json() const;
};

// The architectures tessel builds, as a list for error messages.
inline constexpr const char* kSupportedArchitectures = "llama, qwen2, qwen3";

}  // namespace tessel

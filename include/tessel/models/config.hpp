// The configuration of a Llama/Qwen-family decoder, read from and written
// to a HuggingFace-style config.json (Llama, Qwen2 and Qwen3 keys), or
// made from a GGUF file's metadata (models/gguf_model.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

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
  // (non-positive sizes, sizes or products of sizes past the bounds
  // below, heads not dividing, unknown model_type listing the supported
  // ones, bad RoPE scaling).
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

// The architectures tessel builds (config.json's model_type, GGUF's
// general.architecture): the one list every check and message uses.
inline constexpr std::array<std::string_view, 3> kDecoderArchitectures{
    "llama", "qwen2", "qwen3"};
bool is_supported_architecture(std::string_view model_type);
// "llama, qwen2, qwen3", for messages.
std::string supported_architectures();

// The bounds DecoderConfig::validate() puts on the sizes: each at most
// kMaxDecoderSize, and each product of two the decoder forms (hidden *
// vocab, heads * head_dim, ...) at most kMaxDecoderProduct elements, so
// that every shape, element and byte count derived from them stays far
// inside int64 (the largest real models are near 2^18 and 2^32).
inline constexpr std::int64_t kMaxDecoderSize = std::int64_t{1} << 31;
inline constexpr std::int64_t kMaxDecoderProduct = std::int64_t{1} << 48;

}  // namespace tessel

// The llama.cpp side of a decoder: names, metadata keys and q/k row order
// (gguf-py's constants.py and tensor_mapping.py, llama.cpp's converter).
#include "tessel/models/gguf_model.hpp"

#include <array>
#include <charconv>
#include <cstring>

#include "core/check.hpp"
#include "models/gguf_values.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// HF name -> GGUF name, for the tensors of one layer (after "model.layers.
// {i}." and "blk.{i}.") and for the whole model.
constexpr std::array<std::pair<std::string_view, std::string_view>, 16>
    kLayerNames{{
        {"input_layernorm.weight", "attn_norm.weight"},
        {"self_attn.q_proj.weight", "attn_q.weight"},
        {"self_attn.q_proj.bias", "attn_q.bias"},
        {"self_attn.k_proj.weight", "attn_k.weight"},
        {"self_attn.k_proj.bias", "attn_k.bias"},
        {"self_attn.v_proj.weight", "attn_v.weight"},
        {"self_attn.v_proj.bias", "attn_v.bias"},
        {"self_attn.o_proj.weight", "attn_output.weight"},
        {"self_attn.q_norm.weight", "attn_q_norm.weight"},
        {"self_attn.k_norm.weight", "attn_k_norm.weight"},
        {"post_attention_layernorm.weight", "ffn_norm.weight"},
        {"mlp.gate_proj.weight", "ffn_gate.weight"},
        {"mlp.up_proj.weight", "ffn_up.weight"},
        {"mlp.down_proj.weight", "ffn_down.weight"},
        {"self_attn.o_proj.bias", "attn_output.bias"},
        {"mlp.down_proj.bias", "ffn_down.bias"},
    }};
constexpr std::array<std::pair<std::string_view, std::string_view>, 3>
    kModelNames{{
        {"model.embed_tokens.weight", "token_embd.weight"},
        {"model.norm.weight", "output_norm.weight"},
        {"lm_head.weight", "output.weight"},
    }};

// "12.rest" -> 12 and "rest"; nullopt unless a canonical decimal (no sign,
// no leading zero) is followed by a dot.
std::optional<std::pair<std::int64_t, std::string_view>> split_index(
    std::string_view s) {
  const std::size_t dot = s.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 9) return std::nullopt;
  if (s[0] == '0' && dot > 1) return std::nullopt;
  std::int64_t i = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + dot, i);
  if (ec != std::errc() || end != s.data() + dot) return std::nullopt;
  return std::pair{i, s.substr(dot + 1)};
}

// Maps `name` from one naming to the other: `from_hf` says whether `name`
// is an HF name (the tables' first column) or a GGUF one.
std::optional<std::string> map_name(std::string_view name, bool from_hf) {
  for (const auto& [hf, gguf] : kModelNames) {
    if (name == (from_hf ? hf : gguf)) return std::string(from_hf ? gguf : hf);
  }
  const std::string_view prefix = from_hf ? "model.layers." : "blk.";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  const auto split = split_index(name.substr(prefix.size()));
  if (!split) return std::nullopt;
  for (const auto& [hf, gguf] : kLayerNames) {
    if (split->second == (from_hf ? hf : gguf)) {
      return fmt::format("{}{}.{}", from_hf ? "blk." : "model.layers.",
                         split->first, from_hf ? gguf : hf);
    }
  }
  return std::nullopt;
}

[[noreturn]] void bad_key(const std::string& key, const std::string& why) {
  detail::fail(ErrorCode::BadConfig, "GGUF model", "metadata '{}' {}", key,
               why);
}

const GgufValue* find_key(const GgufFile& f, const std::string& key,
                          bool required) {
  const GgufValue* v = f.find(key);
  if (v == nullptr && required) bad_key(key, "is missing");
  return v;
}

std::optional<std::int64_t> int_key(const GgufFile& f, const std::string& key,
                                    bool required = true) {
  const GgufValue* v = find_key(f, key, required);
  if (v == nullptr) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&v->value)) {
    if (*u > static_cast<std::uint64_t>(INT64_MAX))
      bad_key(key, "is too large");
    return static_cast<std::int64_t>(*u);
  }
  if (const auto* i = std::get_if<std::int64_t>(&v->value)) return *i;
  bad_key(key, "must be an integer");
}

// A size (a dimension or a count): positive and at most kMaxDecoderSize,
// E4001 naming the file's key otherwise (DecoderConfig::validate bounds
// their products).
std::optional<std::int64_t> size_key(const GgufFile& f, const std::string& key,
                                     bool required = true) {
  const std::optional<std::int64_t> v = int_key(f, key, required);
  if (v && (*v <= 0 || *v > kMaxDecoderSize)) {
    bad_key(key, fmt::format("is {}: a size must be positive and at most "
                             "2^31",
                             *v));
  }
  return v;
}

std::optional<double> float_key(const GgufFile& f, const std::string& key,
                                bool required = true) {
  const GgufValue* v = find_key(f, key, required);
  if (v == nullptr) return std::nullopt;
  if (const auto* d = std::get_if<double>(&v->value)) return *d;
  bad_key(key, "must be a number");
}

std::optional<std::string> string_key(const GgufFile& f, const std::string& key,
                                      bool required = true) {
  const GgufValue* v = find_key(f, key, required);
  if (v == nullptr) return std::nullopt;
  if (const auto* s = std::get_if<std::string>(&v->value)) return *s;
  bad_key(key, "must be a string");
}

const Tensor* find_tensor(const GgufFile& f, std::string_view name) {
  for (const Tensor& t : f.tensors) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

GgufValue f32(double v) {
  return {GgufValue::Type::F32, GgufValue::Type::U8, v};
}
GgufValue str(std::string v) {
  return {GgufValue::Type::String, GgufValue::Type::U8, std::move(v)};
}

// Row r of the result is row rope_row_source(r) of w, whole rows of bytes
// (so block-quantised rows move as they are).
Tensor reorder_rows(const Tensor& w, std::int64_t heads, const char* op,
                    bool interleave) {
  const std::int64_t rows = w.rank() > 0 ? w.size(0) : 0;
  TESSEL_CHECK(w.rank() >= 1 && heads > 0 && rows % (2 * heads) == 0, BadShape,
               op,
               "needs rows in whole pairs of halves per head: {} rows, {} "
               "heads",
               rows, heads);
  const Tensor src = w.contiguous();
  Tensor out = empty(w.shape(), w.dtype());
  const std::size_t row_bytes =
      rows == 0 ? 0 : static_cast<std::size_t>(src.nbytes() / rows);
  const auto* from = static_cast<const std::uint8_t*>(src.raw_data());
  auto* to = static_cast<std::uint8_t*>(out.mutable_raw_data());
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t s = rope_row_source(r, rows, heads, interleave);
    std::memcpy(to + static_cast<std::size_t>(r) * row_bytes,
                from + static_cast<std::size_t>(s) * row_bytes, row_bytes);
  }
  out.set_name(w.name());
  return out;
}

}  // namespace

std::optional<std::string> gguf_tensor_name(std::string_view hf_name) {
  return map_name(hf_name, true);
}

std::optional<std::string> hf_tensor_name(std::string_view gguf_name) {
  return map_name(gguf_name, false);
}

DecoderConfig decoder_config_from_gguf(const GgufFile& f) {
  const std::string arch = *string_key(f, "general.architecture");
  DecoderConfig c;
  c.model_type = arch;
  if (!is_supported_architecture(arch)) {
    bad_key("general.architecture",
            fmt::format("'{}' is not a supported decoder ({})", arch,
                        supported_architectures()));
  }
  const std::string a = arch + ".";
  c.hidden_size = *size_key(f, a + "embedding_length");
  c.intermediate_size = *size_key(f, a + "feed_forward_length");
  c.num_hidden_layers = *size_key(f, a + "block_count");
  c.num_attention_heads = *size_key(f, a + "attention.head_count");
  c.num_key_value_heads = size_key(f, a + "attention.head_count_kv", false)
                              .value_or(c.num_attention_heads);
  c.max_position_embeddings = *size_key(f, a + "context_length");
  c.rms_norm_eps = *float_key(f, a + "attention.layer_norm_rms_epsilon");
  c.rope_theta = float_key(f, a + "rope.freq_base", false).value_or(10000.0);
  c.head_dim = size_key(f, a + "attention.key_length", false)
                   .value_or(c.hidden_size / c.num_attention_heads);
  if (const auto v = int_key(f, a + "attention.value_length", false);
      v && *v != c.head_dim) {
    bad_key(
        a + "attention.value_length",
        fmt::format("({}) differs from the key length ({})", *v, c.head_dim));
  }
  if (const auto r = int_key(f, a + "rope.dimension_count", false);
      r && *r != c.head_dim) {
    bad_key(a + "rope.dimension_count",
            fmt::format("({}) is not the head dimension ({}): partial "
                        "rotary embeddings are not supported",
                        *r, c.head_dim));
  }
  if (const auto s = string_key(f, a + "rope.scaling.type", false);
      s && *s != "none") {
    bad_key(a + "rope.scaling.type",
            fmt::format("'{}' is not supported (none; Llama 3's scaling "
                        "comes as rope_freqs.weight)",
                        *s));
  }
  const Tensor* embd = find_tensor(f, "token_embd.weight");
  if (const auto v = size_key(f, a + "vocab_size", false)) {
    c.vocab_size = *v;
  } else if (embd != nullptr && embd->rank() == 2) {
    c.vocab_size = embd->size(0);
  } else {
    bad_key(a + "vocab_size", "is missing and there is no token_embd.weight");
  }
  c.tie_word_embeddings = find_tensor(f, "output.weight") == nullptr;
  c.attention_bias =
      arch == "qwen2" || find_tensor(f, "blk.0.attn_q.bias") != nullptr;
  c.rope_interleaved = arch == "llama";
  c.bos_token_id = int_key(f, "tokenizer.ggml.bos_token_id", false);
  c.eos_token_id = int_key(f, "tokenizer.ggml.eos_token_id", false);
  c.validate();
  return c;
}

std::vector<std::pair<std::string, GgufValue>> gguf_decoder_metadata(
    const DecoderConfig& c, const GgufModelInfo& info) {
  const std::string a = c.model_type + ".";
  std::vector<std::pair<std::string, GgufValue>> m{
      {"general.architecture", str(c.model_type)}};
  if (!info.name.empty()) {
    m.emplace_back("general.type", str("model"));
    m.emplace_back("general.name", str(info.name));
  }
  if (!info.size_label.empty()) {
    m.emplace_back("general.size_label", str(info.size_label));
  }
  const auto u32 = [&](const std::string& key, std::int64_t v) {
    m.emplace_back(key, gguf_u32(key, v));
  };
  u32(a + "block_count", c.num_hidden_layers);
  u32(a + "context_length", c.max_position_embeddings);
  u32(a + "embedding_length", c.hidden_size);
  u32(a + "feed_forward_length", c.intermediate_size);
  u32(a + "attention.head_count", c.num_attention_heads);
  u32(a + "attention.head_count_kv", c.num_key_value_heads);
  m.emplace_back(a + "rope.freq_base", f32(c.rope_theta));
  m.emplace_back(a + "attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps));
  if (info.head_dim_keys.value_or(c.model_type == "qwen3")) {
    u32(a + "attention.key_length", c.head_dim);
    u32(a + "attention.value_length", c.head_dim);
  }
  if (info.file_type) u32("general.file_type", *info.file_type);
  if (c.model_type == "llama") {
    u32(a + "vocab_size", c.vocab_size);
    u32(a + "rope.dimension_count", c.head_dim);
  }
  if (info.file_type) u32("general.quantization_version", 2);
  return m;
}

std::vector<Tensor> gguf_tensors_as_hf(const GgufFile& file) {
  std::vector<Tensor> out;
  out.reserve(file.tensors.size());
  for (const Tensor& t : file.tensors) {
    // A new handle over the same bytes: renaming it leaves the file's
    // tensor (shared with other users of `file`) as it is.
    Tensor view(t.storage(), t.shape(), t.strides(), t.storage_offset(),
                t.dtype());
    view.set_name(hf_tensor_name(t.name()).value_or(t.name()));
    out.push_back(std::move(view));
  }
  return out;
}

std::optional<std::int64_t> rope_interleave_heads(const DecoderConfig& config,
                                                  std::string_view hf_name) {
  if (config.model_type != "llama") return std::nullopt;
  constexpr std::string_view layers = "model.layers.";
  if (!hf_name.starts_with(layers)) return std::nullopt;
  const auto split = split_index(hf_name.substr(layers.size()));
  if (!split) return std::nullopt;
  const std::string_view rest = split->second;
  if (rest == "self_attn.q_proj.weight" || rest == "self_attn.q_proj.bias") {
    return config.num_attention_heads;
  }
  if (rest == "self_attn.k_proj.weight" || rest == "self_attn.k_proj.bias") {
    return config.num_key_value_heads;
  }
  return std::nullopt;
}

std::int64_t rope_row_source(std::int64_t row, std::int64_t rows,
                             std::int64_t heads, bool interleave) {
  const std::int64_t half = rows / heads / 2;
  const std::int64_t head = row / (2 * half);
  const std::int64_t within = row % (2 * half);
  // Interleaved row (h, i, j), i < half, j < 2, is HF's row (h, j, i).
  return interleave ? head * 2 * half + (within % 2) * half + within / 2
                    : head * 2 * half + (within % half) * 2 + within / half;
}

Tensor interleave_rope_rows(const Tensor& w, std::int64_t heads) {
  return reorder_rows(w, heads, "interleave_rope_rows", true);
}

Tensor deinterleave_rope_rows(const Tensor& w, std::int64_t heads) {
  return reorder_rows(w, heads, "deinterleave_rope_rows", false);
}

}  // namespace tessel

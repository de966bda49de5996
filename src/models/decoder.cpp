#include "tessel/models/decoder.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/check.hpp"
#include "io/atomic_file.hpp"
#include "nn/value_kind.hpp"
#include "ops/operands.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/io/safetensors.hpp"
#include "tessel/models/gguf_model.hpp"
#include "tessel/ops/attention.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/embedding.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/linalg.hpp"

namespace tessel {

namespace nn {

// ---- layers ---------------------------------------------------------------

Attention::Attention(const DecoderConfig& c, const Weights& w)
    : heads(c.num_attention_heads),
      kv_heads(c.num_key_value_heads),
      head_dim(c.head_dim),
      q_proj(w["q_proj"], c.hidden_size, heads * head_dim, c.attention_bias),
      k_proj(w["k_proj"], c.hidden_size, kv_heads * head_dim, c.attention_bias),
      v_proj(w["v_proj"], c.hidden_size, kv_heads * head_dim, c.attention_bias),
      o_proj(w["o_proj"], heads * head_dim, c.hidden_size, false),
      rope_style(c.rope_interleaved ? RopeStyle::GPTJ : RopeStyle::NeoX) {
  register_module("q_proj", q_proj);
  register_module("k_proj", k_proj);
  register_module("v_proj", v_proj);
  register_module("o_proj", o_proj);
  if (c.qk_norm()) {
    q_norm = std::make_unique<RMSNorm>(w["q_norm"], head_dim, c.rms_norm_eps);
    k_norm = std::make_unique<RMSNorm>(w["k_norm"], head_dim, c.rms_norm_eps);
    register_module("q_norm", *q_norm);
    register_module("k_norm", *k_norm);
  }
}

namespace {

template <class T>
T attention_forward(const Attention& a, const T& x, const Tensor& cos,
                    const Tensor& sin, KVCache* cache, std::int64_t layer) {
  const std::int64_t batch = x.size(0);
  const std::int64_t seq = x.size(1);
  // Projections stay (B, S, heads, head_dim); RoPE tables (S, 1, D/2)
  // broadcast over the heads, and the transposes to (B, heads, S, D) are
  // views the attention kernel reads in place.
  const Linear* qkv[] = {&a.q_proj, &a.k_proj, &a.v_proj};
  const std::vector<T> h = forward_shared(qkv, x);
  T q = h[0].reshape({batch, seq, a.heads, a.head_dim});
  T k = h[1].reshape({batch, seq, a.kv_heads, a.head_dim});
  T v = h[2].reshape({batch, seq, a.kv_heads, a.head_dim});
  if (a.q_norm) {
    q = a.q_norm->forward(q);
    k = a.k_norm->forward(k);
  }
  // Interleaved rows (llama GGUF files) rotate adjacent pairs: the same
  // attention as HF's halves, since q and k share the order.
  q = rope_with_tables(q, cos, sin, a.rope_style);
  k = rope_with_tables(k, cos, sin, a.rope_style);
  // A quantised cache's rotations (KVCache::key_rotation_block): by the
  // butterflies, log2(n) adds a value where a product with the matrix
  // (llama.cpp's) takes n multiply-adds.
  const std::int64_t key_block = cache ? cache->key_rotation_block() : 0;
  const std::int64_t value_block = cache ? cache->value_rotation_block() : 0;
  if (key_block != 0) {
    q = hadamard_transform(q, key_block);
    k = hadamard_transform(k, key_block);
    v = hadamard_transform(v, value_block);
  }
  q = q.transpose(1, 2);
  k = k.transpose(1, 2);
  v = v.transpose(1, 2);
  AttentionOptions options;
  options.causal = true;
  T out;
  if (cache != nullptr) {
    auto [keys, values] =
        cache->append(layer, detail::tensor_of(k), detail::tensor_of(v));
    out = scaled_dot_product_attention(q, detail::as<T>(keys),
                                       detail::as<T>(values), options);
  } else {
    out = scaled_dot_product_attention(q, k, v, options);
  }
  out = out.transpose(1, 2);
  if (value_block != 0) out = hadamard_transform(out, value_block);
  return a.o_proj.forward(out.reshape({batch, seq, a.heads * a.head_dim}));
}

template <class T>
T layer_forward(const DecoderLayer& l, const T& x, const Tensor& cos,
                const Tensor& sin, KVCache* cache, std::int64_t layer) {
  const T h = x + l.self_attn.forward(l.input_layernorm.forward(x), cos, sin,
                                      cache, layer);
  return h + l.mlp.forward(l.post_attention_layernorm.forward(h));
}

}  // namespace

Variable Attention::forward(const Variable& x, const Tensor& cos,
                            const Tensor& sin, KVCache* cache,
                            std::int64_t layer) const {
  return attention_forward(*this, x, cos, sin, cache, layer);
}
Tensor Attention::forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                          KVCache* cache, std::int64_t layer) const {
  return attention_forward(*this, x, cos, sin, cache, layer);
}

DecoderLayer::DecoderLayer(const DecoderConfig& c, const Weights& w)
    : input_layernorm(w["input_layernorm"], c.hidden_size, c.rms_norm_eps),
      self_attn(c, w["self_attn"]),
      post_attention_layernorm(w["post_attention_layernorm"], c.hidden_size,
                               c.rms_norm_eps),
      mlp(w["mlp"], c.hidden_size, c.intermediate_size) {
  register_module("input_layernorm", input_layernorm);
  register_module("self_attn", self_attn);
  register_module("post_attention_layernorm", post_attention_layernorm);
  register_module("mlp", mlp);
}

Variable DecoderLayer::forward(const Variable& x, const Tensor& cos,
                               const Tensor& sin, KVCache* cache,
                               std::int64_t layer) const {
  return layer_forward(*this, x, cos, sin, cache, layer);
}
Tensor DecoderLayer::forward(const Tensor& x, const Tensor& cos,
                             const Tensor& sin, KVCache* cache,
                             std::int64_t layer) const {
  return layer_forward(*this, x, cos, sin, cache, layer);
}

DecoderModel::DecoderModel(const DecoderConfig& c, const Weights& w)
    : embed_tokens(w["embed_tokens"], c.vocab_size, c.hidden_size),
      norm(w["norm"], c.hidden_size, c.rms_norm_eps) {
  register_module("embed_tokens", embed_tokens);
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    layers.push_back(
        std::make_unique<DecoderLayer>(c, w["layers." + std::to_string(i)]));
    register_module("layers." + std::to_string(i), *layers.back());
  }
  register_module("norm", norm);
}

}  // namespace nn

// ---- the language model ----------------------------------------------------

namespace {

const DecoderConfig& validated(const DecoderConfig& c) {
  c.validate();
  return c;
}

// theta^(-2i / head_dim) in f64, with Llama 3's scaling (HF's
// _compute_llama3_parameters) and then divided by a GGUF file's factors.
Tensor rope_inverse_frequencies(const DecoderConfig& c, const Tensor& factors) {
  const std::int64_t half = c.head_dim / 2;
  std::vector<double> inv(static_cast<std::size_t>(half));
  for (std::int64_t i = 0; i < half; ++i) {
    inv[static_cast<std::size_t>(i)] =
        std::pow(c.rope_theta, -2.0 * static_cast<double>(i) /
                                   static_cast<double>(c.head_dim));
  }
  if (c.rope_scaling) {
    const Llama3RopeScaling& s = *c.rope_scaling;
    const double old_context =
        static_cast<double>(s.original_max_position_embeddings);
    const double low_wavelen = old_context / s.low_freq_factor;
    const double high_wavelen = old_context / s.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2.0 * std::numbers::pi / f;
      if (wavelen > low_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_context / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
  }
  Tensor out = from_vector(inv, {half});
  if (factors.defined()) out = div(out, factors.to(DType::F64));
  return out;
}

// What the decoder's products read: float parameters (computed in f32),
// and GGUF blocks as matrices only (the quantised matmul and embedding
// rows); anything else fails here, not in the first forward.
void check_parameter_dtypes(const nn::Module& m) {
  for (const auto& [name, p] : m.named_parameters()) {
    const DType d = p.dtype();
    const bool is_float = d == DType::F32 || d == DType::F16 ||
                          d == DType::BF16 || d == DType::F64;
    TESSEL_CHECK(is_float || (is_block_quantized(d) && p.rank() == 2), BadDType,
                 "load model",
                 "parameter '{}' is {} of shape [{}]: the decoder takes f32, "
                 "f16, bf16 or f64 parameters, and GGUF blocks for "
                 "matrices only",
                 name, dtype_name(d), fmt::join(p.shape(), ", "));
  }
}

// A GGUF file's per-frequency divisors: floats, each finite and positive
// (a zero or negative one would make RoPE's angles infinite or reversed).
Tensor checked_rope_freqs(const Tensor& t) {
  const DType d = t.dtype();
  TESSEL_CHECK(
      d == DType::F32 || d == DType::F16 || d == DType::BF16 || d == DType::F64,
      BadConfig, "load model",
      "{} is {}: RoPE's frequency divisors must be f32, f16, bf16 "
      "or f64",
      kRopeFreqsTensor, dtype_name(d));
  const Tensor f64 = t.to(DType::F64).contiguous();
  const double* v = f64.const_data<double>();
  for (std::int64_t i = 0; i < f64.numel(); ++i) {
    TESSEL_CHECK(std::isfinite(v[i]) && v[i] > 0, BadConfig, "load model",
                 "{}[{}] is {}: RoPE's frequency divisors must be finite "
                 "and positive",
                 kRopeFreqsTensor, i, v[i]);
  }
  return f64;
}

}  // namespace

CausalLM::CausalLM(const DecoderConfig& config, std::uint64_t seed)
    : CausalLM(config,
               *random_weights(seed, validated(config).initializer_range)) {}

CausalLM::CausalLM(const DecoderConfig& config, WeightSource& source)
    : model(validated(config), Weights(source)["model"]), config_(config) {
  if (config.tie_word_embeddings) {
    lm_head = model.embed_tokens.weight;
  } else {
    lm_head = register_parameter(
        "lm_head.weight",
        Weights(source)["lm_head"].take(
            "weight", {config.vocab_size, config.hidden_size}));
  }
  register_module("model", model);
  check_parameter_dtypes(*this);
  for (const Variable& p : parameters()) {
    const DType d = p.dtype();
    if (p.rank() == 2 && std::find(matrix_dtypes_.begin(), matrix_dtypes_.end(),
                                   d) == matrix_dtypes_.end()) {
      matrix_dtypes_.push_back(d);
    }
  }
  Tensor factors;
  // A GGUF file's per-frequency divisors (llama.cpp's rope_freqs, which
  // its converter writes for Llama 3's scaling).
  if (source.contains(kRopeFreqsTensor)) {
    factors = checked_rope_freqs(
        source.take(kRopeFreqsTensor, {config.head_dim / 2}, WeightInit::Ones));
    const double* f = factors.const_data<double>();
    rope_freqs_scaled_ =
        std::any_of(f, f + factors.numel(), [](double v) { return v != 1; });
  }
  inv_freq_ = rope_inverse_frequencies(config, factors);
}

Variable CausalLM::forward(const Tensor& ids, KVCache* cache) const {
  return run<Variable>(ids, cache, false);
}

Tensor CausalLM::logits(const Tensor& ids, KVCache* cache) const {
  return run<Tensor>(ids, cache, false);
}

Tensor CausalLM::next_token_logits(const Tensor& ids, KVCache* cache) const {
  return run<Tensor>(ids, cache, true).select(1, 0);
}

template <class T>
T CausalLM::run(const Tensor& ids, KVCache* cache, bool last_only) const {
  TESSEL_CHECK(ids.rank() == 2, BadShape, "CausalLM",
               "token ids must be (batch, sequence), not shape [{}]",
               fmt::join(ids.shape(), ", "));
  const std::int64_t seq = ids.size(1);
  const std::int64_t start = cache != nullptr ? cache->length() : 0;
  TESSEL_CHECK(start + seq <= config_.max_position_embeddings, OutOfRange,
               "CausalLM",
               "positions up to {} exceed max_position_embeddings ({})",
               start + seq, config_.max_position_embeddings);
  TESSEL_CHECK(cache == nullptr || cache->batch() == ids.size(0), BadShape,
               "CausalLM", "the cache holds batch {} but the ids have {}",
               cache ? cache->batch() : 0, ids.size(0));
  const std::int64_t half = config_.head_dim / 2;
  const Tensor angles =
      mul(arange(start, start + seq, 1, DType::F64).unsqueeze(1), inv_freq_);
  const Tensor cos = tessel::cos(angles).to(DType::F32).reshape({seq, 1, half});
  const Tensor sin = tessel::sin(angles).to(DType::F32).reshape({seq, 1, half});
  T out;
  const auto layers = [&] {
    T h;
    if constexpr (nn::detail::kRecords<T>) {
      h = model.embed_tokens.forward(ids);
    } else {
      // Inference computes in f32 whatever the file stores.
      h = model.embed_tokens.lookup(ids).to(DType::F32);
    }
    for (std::size_t i = 0; i < model.layers.size(); ++i) {
      h = model.layers[i]->forward(h, cos, sin, cache,
                                   static_cast<std::int64_t>(i));
    }
    if (cache != nullptr) cache->advance(seq);
    if (last_only) h = h.slice(1, seq - 1, seq);
    out = linear(model.norm.forward(h), nn::detail::use<T>(lm_head));
  };
  if (!nn::detail::kRecords<T> && ids.numel() == 1) {
    ops::backend_of(ids).run_decode_step(matrix_dtypes_, layers);
  } else {
    layers();
  }
  return out;
}

void CausalLM::save(const std::filesystem::path& dir) const {
  TESSEL_CHECK(!rope_freqs_scaled_, BadConfig, "CausalLM::save",
               "the model's {} factors (a GGUF file's Llama 3 RoPE "
               "scaling) have no config.json form here; tessel convert "
               "turns the GGUF file into a checkpoint directory with the "
               "scaling recovered as rope_scaling",
               kRopeFreqsTensor);
  std::vector<Tensor> tensors;
  for (Tensor t : state_tensors()) {
    TESSEL_CHECK(!is_block_quantized(t.dtype()), BadConfig, "CausalLM::save",
                 "parameter '{}' is {} blocks, which a checkpoint directory "
                 "does not hold; tessel convert writes a GGUF file as a "
                 "directory of dequantised tensors",
                 t.name(), dtype_name(t.dtype()));
    // A llama GGUF file's q/k rows go back to HF's half-split order.
    if (config_.rope_interleaved) {
      if (const auto heads = rope_interleave_heads(config_, t.name())) {
        t = deinterleave_rope_rows(t, *heads);
      }
    }
    tensors.push_back(std::move(t));
  }
  const std::string json = config_.to_json();
  io::write_file_atomically(
      dir / "config.json",
      {reinterpret_cast<const std::uint8_t*>(json.data()), json.size()}, {});
  save_safetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
}

}  // namespace tessel

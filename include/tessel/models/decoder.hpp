// A Llama/Qwen3-family decoder-only transformer with HuggingFace's module
// tree, so that its parameter names are the canonical ones of DESIGN §1:
//   model.embed_tokens.weight
//   model.layers.{i}.input_layernorm.weight
//   model.layers.{i}.self_attn.{q,k,v,o}_proj.weight   (+ .bias)
//   model.layers.{i}.self_attn.{q,k}_norm.weight         (Qwen3)
//   model.layers.{i}.post_attention_layernorm.weight
//   model.layers.{i}.mlp.{gate,up,down}_proj.weight
//   model.norm.weight
//   lm_head.weight                                       (unless tied)
// Parameters come from a WeightSource: random for training, or the
// tensors of a checkpoint (an HF directory or a GGUF file) as they are
// stored, which is what CausalLM::load builds from.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/core/storage.hpp"
#include "tessel/models/config.hpp"
#include "tessel/models/kv_cache.hpp"
#include "tessel/models/weights.hpp"
#include "tessel/nn/layers.hpp"
#include "tessel/ops/embedding.hpp"

namespace tessel {

namespace nn {

class Attention : public Module {
 public:
  Attention(const DecoderConfig& config, const Weights& w);
  // x (B, S, hidden) at positions given by the RoPE tables (S, head_dim/2).
  Variable forward(const Variable& x, const Tensor& cos, const Tensor& sin,
                   KVCache* cache, std::int64_t layer) const;
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                 KVCache* cache, std::int64_t layer) const;

  std::int64_t heads;
  std::int64_t kv_heads;
  std::int64_t head_dim;
  Linear q_proj;
  Linear k_proj;
  Linear v_proj;
  Linear o_proj;
  std::unique_ptr<RMSNorm> q_norm;  // Qwen3 only
  std::unique_ptr<RMSNorm> k_norm;
  RopeStyle rope_style;  // GPTJ when the q/k rows are interleaved
};

class DecoderLayer : public Module {
 public:
  DecoderLayer(const DecoderConfig& config, const Weights& w);
  Variable forward(const Variable& x, const Tensor& cos, const Tensor& sin,
                   KVCache* cache, std::int64_t layer) const;
  Tensor forward(const Tensor& x, const Tensor& cos, const Tensor& sin,
                 KVCache* cache, std::int64_t layer) const;

  RMSNorm input_layernorm;
  Attention self_attn;
  RMSNorm post_attention_layernorm;
  SwiGLUMLP mlp;
};

// HuggingFace's "model": embeddings, the layers and the final norm.
class DecoderModel : public Module {
 public:
  DecoderModel(const DecoderConfig& config, const Weights& w);

  Embedding embed_tokens;
  std::vector<std::unique_ptr<DecoderLayer>> layers;
  RMSNorm norm;
};

}  // namespace nn

// The decoder with its language-model head (HF's *ForCausalLM).
class CausalLM : public nn::Module {
 public:
  // Weights drawn from N(0, initializer_range) with `seed`; norms at 1.
  explicit CausalLM(const DecoderConfig& config, std::uint64_t seed = 0);
  // Parameters from `source` by canonical name (E4001 for a missing or
  // mis-shaped one; the caller checks what the source holds beyond them,
  // check_no_unexpected_tensors). Each must be f32, f16, bf16 or f64, or
  // GGUF blocks for a matrix: E2201 naming it otherwise. A GGUF file's
  // rope_freqs.weight must be head_dim / 2 finite positive floats (E4001).
  CausalLM(const DecoderConfig& config, WeightSource& source);

  // ids (B, S) integer token ids -> logits (B, S, vocab_size). With a
  // cache, the ids continue the cached positions and are appended to it
  // (E2302 past its capacity or max_position_embeddings).
  // The graph records when grad mode is on (training).
  Variable forward(const Tensor& ids, KVCache* cache = nullptr) const;
  // The same logits on plain tensors: no graph, nothing recorded
  // (inference, generation).
  Tensor logits(const Tensor& ids, KVCache* cache = nullptr) const;
  // The logits of the last position only, (B, vocab): what generation
  // needs, without the head's product for every prompt position (for a
  // 150k vocabulary that product costs more than the layers).
  Tensor next_token_logits(const Tensor& ids, KVCache* cache = nullptr) const;

  const DecoderConfig& config() const { return config_; }

  // config.json + model.safetensors (canonical names; lm_head.weight is
  // omitted when tied) into an existing directory. A llama model loaded
  // from GGUF has its q/k rows put back in HF's order. E4001 for what a
  // checkpoint directory cannot hold: block-quantised parameters and a
  // GGUF file's rope_freqs factors (`tessel convert` dequantises the one
  // and recovers Llama 3's scaling from the other).
  void save(const std::filesystem::path& dir) const;
  // A checkpoint: an HF directory (config.json with model.safetensors, or
  // shards with model.safetensors.index.json) or a GGUF file written by
  // llama.cpp's converter or tessel. The parameters are the file's mapped
  // tensors, not copies: f16/bf16 stay so and GGUF blocks stay quantised
  // (every product still computes in f32). The configuration is checked
  // against every tensor's name and shape before any weight is read:
  // E4001 naming the key or tensor for a missing, unexpected or
  // mis-shaped one. `mode` CopyOnWrite makes the parameters writable
  // (training on from a checkpoint) without touching the file; Resident
  // reads the weights into memory in 2 MiB pages instead of mapping them
  // (faster decode, slower load; Storage::map_file).
  static std::unique_ptr<CausalLM> load(const std::filesystem::path& path,
                                        MapMode mode = MapMode::ReadOnly);

  nn::DecoderModel model;
  Variable lm_head;  // [vocab, hidden]; the embedding matrix when tied

 private:
  // forward (T = Variable) and logits (T = Tensor), written once.
  template <class T>
  T run(const Tensor& ids, KVCache* cache, bool last_only) const;

  DecoderConfig config_;
  // RoPE's angular frequency per pair of head dimensions (head_dim / 2,
  // f64): theta^(-2i / head_dim), Llama 3's scaling and a GGUF file's
  // rope_freqs factors applied.
  Tensor inv_freq_;
  // The source held rope_freqs factors other than 1 (save() refuses).
  bool rope_freqs_scaled_ = false;
  // The dtypes of the matrices, once each: what the backend is told of a
  // single-token step (Backend::run_decode_step).
  std::vector<DType> matrix_dtypes_;
};

// E4001 naming the first tensor of `source` that no parameter of the
// model built from it took: it contradicts `config`, except for a tied
// head's lm_head.weight (the embedding's copy some writers keep).
// `origin` names the file(s), `name_in_file` a GGUF file's own names.
void check_no_unexpected_tensors(
    const WeightSource& source, const DecoderConfig& config,
    const std::string& origin,
    const std::function<std::optional<std::string>(std::string_view)>&
        name_in_file = {});

}  // namespace tessel

// A decoder in llama.cpp's terms (FORMATS.md §3): its tensor names, the
// metadata keys of the llama, qwen2 and qwen3 architectures, and the q/k
// row order its converter writes for llama files. Both directions, so
// that loading a GGUF file and converting to and from one share one map.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/io/gguf.hpp"
#include "tessel/models/config.hpp"

namespace tessel {

// llama.cpp's per-frequency RoPE divisors (its converter writes them for
// Llama 3's scaling instead of metadata). Kept under its GGUF name.
inline constexpr const char* kRopeFreqsTensor = "rope_freqs.weight";

// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight", and
// back; nullopt for a name outside the map.
std::optional<std::string> gguf_tensor_name(std::string_view hf_name);
std::optional<std::string> hf_tensor_name(std::string_view gguf_name);

// The decoder a GGUF file describes: general.architecture (llama, qwen2,
// qwen3; E4001 listing them otherwise) and its `<arch>.*` keys, the vocab
// size from `<arch>.vocab_size` or token_embd, tying from whether
// output.weight exists, BOS/EOS from tokenizer.ggml.*. E4001 naming the
// key for a missing or mistyped required key, and for what tessel does not
// implement (RoPE scaling types, a partial rotary dimension). Reads
// metadata and tensor shapes only.
DecoderConfig decoder_config_from_gguf(const GgufFile& file);

// What llama.cpp's converter writes about a model beside its configuration
// (models/gguf_conversion.hpp makes these values). Left empty, a key is
// not written.
struct GgufModelInfo {
  // general.type "model" and general.name.
  std::string name;
  std::string size_label;  // general.size_label
  // general.file_type (llama.cpp's LlamaFileType), and then
  // general.quantization_version 2, as the converter writes both.
  std::optional<std::uint32_t> file_type;
  // attention.key_length / value_length: the converter writes them when
  // config.json has head_dim; unset, for qwen3 only (whose config.json
  // always has it).
  std::optional<bool> head_dim_keys;
};

// The keys llama.cpp's converter writes for `config` (architecture, sizes,
// RoPE, norms) and `info`, in its order; the caller adds the tokenizer
// (models/gguf_tokenizer_metadata.hpp).
std::vector<std::pair<std::string, GgufValue>> gguf_decoder_metadata(
    const DecoderConfig& config, const GgufModelInfo& info = {});

// The file's tensors renamed to HF names (views of the same bytes; names
// outside the map keep their GGUF names, so a loader can report them).
std::vector<Tensor> gguf_tensors_as_hf(const GgufFile& file);

// llama.cpp's converter reorders the rows of llama's q_proj and k_proj
// (weights and biases; `heads` is the q or the kv head count) from HF's
// half-split rotary layout to Meta's interleaved one. These apply and
// undo it (copies; block-quantised rows move as whole rows).
Tensor interleave_rope_rows(const Tensor& w, std::int64_t heads);
Tensor deinterleave_rope_rows(const Tensor& w, std::int64_t heads);
// The head count to interleave (or de-interleave) the rows of the tensor
// `hf_name` of a `config` decoder by: num_attention_heads for llama's
// model.layers.{i}.self_attn.q_proj weight and bias, num_key_value_heads
// for k_proj's; nullopt for every other tensor and architecture.
std::optional<std::int64_t> rope_interleave_heads(const DecoderConfig& config,
                                                  std::string_view hf_name);
// The row of the input that row `row` of interleave_rope_rows (or, with
// `interleave` false, deinterleave_rope_rows) of a tensor of `rows` rows
// comes from, for code that moves the rows itself (`tessel convert`
// streams them). `rows` must be a multiple of 2 * heads.
std::int64_t rope_row_source(std::int64_t row, std::int64_t rows,
                             std::int64_t heads, bool interleave);

}  // namespace tessel

// HF checkpoint directory -> GGUF model file, as llama.cpp's
// convert_hf_to_gguf.py writes it for llama, qwen2 and qwen3: its tensor
// names, order and dtypes, llama's q/k rows interleaved, Llama 3's
// rope_freqs, its metadata keys and the tokenizer's.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/convert_model.hpp"
#include "cli/model_tensor_source.hpp"
#include "io/json_strict.hpp"

namespace tessel::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void refuse(const RefusalWording& wording,
                         const std::string& what) {
  throw_error(ErrorCode::BadConfig,
              fmt::format("[{}] {}{}", wording.command, what, wording.hint));
}

DecoderConfig load_config(const fs::path& path, const RefusalWording& wording) {
  try {
    return DecoderConfig::load(path);
  } catch (const Error& e) {
    if (e.error_code() != ErrorCode::BadConfig) throw;
    throw_error(ErrorCode::BadConfig, e.message() + std::string(wording.hint));
  }
}

// The tensors the converter drops ("we don't need these").
bool dropped(const std::string& name) {
  return name.ends_with(".attention.masked_bias") ||
         name.ends_with(".attention.bias") ||
         name.ends_with(".rotary_emb.inv_freq");
}

// The converter reads shards in name order and each shard's tensors in
// name order.
void sort_as_converter(const fs::path& dir, std::vector<Tensor>& tensors) {
  std::map<std::string, std::string> shard_of;
  const json index =
      io::read_optional_json(dir / "model.safetensors.index.json");
  if (index.is_object() && index.contains("weight_map") &&
      index["weight_map"].is_object()) {
    for (const auto& [name, shard] : index["weight_map"].items()) {
      if (shard.is_string()) shard_of[name] = shard.get<std::string>();
    }
  }
  const auto key = [&](const Tensor& t) {
    const auto it = shard_of.find(t.name());
    return std::pair(it == shard_of.end() ? std::string() : it->second,
                     t.name());
  };
  std::stable_sort(
      tensors.begin(), tensors.end(),
      [&](const Tensor& a, const Tensor& b) { return key(a) < key(b); });
}

// --outtype auto, except that f32 weights stay f32 (the converter would
// write f16): the dtype of the first matrix, f16 and bf16 kept.
DType default_outtype(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    if (t.rank() < 2) continue;
    if (t.dtype() == DType::F16 || t.dtype() == DType::BF16) return t.dtype();
    break;
  }
  return DType::F32;
}

// general.name: config.json's _name_or_path when it is a model id, else
// the directory's name (gguf-py's Metadata heuristics).
std::string model_name(const fs::path& dir, const json& raw) {
  if (const auto it = raw.find("_name_or_path");
      it != raw.end() && it->is_string()) {
    const std::string id = it->get<std::string>();
    if (!id.empty() && std::count(id.begin(), id.end(), '/') <= 1) {
      return gguf_model_name(id);
    }
  }
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return gguf_model_name(p.filename().string());
}

std::vector<ModelTensor> gguf_tensors(const DecoderConfig& c,
                                      const std::vector<Tensor>& tensors,
                                      DType outtype) {
  std::vector<ModelTensor> out;
  if (Tensor freqs = gguf_rope_freqs(c); freqs.defined()) {
    out.push_back({kRopeFreqsTensor, freqs, DType::F32});
  }
  for (const Tensor& t : tensors) {
    const std::string name = *gguf_tensor_name(t.name());
    ModelTensor m{name, t, gguf_converted_dtype(name, t.rank(), outtype)};
    // llama's rotary rows go into Meta's interleaved order (q by its
    // heads, k by the kv heads), biases as well.
    if (const auto heads = rope_interleave_heads(c, t.name())) {
      m.order = RowOrder::Interleave;
      m.heads = *heads;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

HfAsGguf hf_as_gguf(const fs::path& dir, std::optional<DType> dtype,
                    const std::string& tokenizer_pre,
                    const RefusalWording& wording) {
  const DecoderConfig config = load_config(dir / "config.json", wording);
  const json raw = io::read_optional_json(dir / "config.json");
  if (config.rope_scaling && config.model_type != "llama") {
    refuse(wording,
           fmt::format("{}'s llama3 rope scaling has no GGUF form for {} "
                       "(llama.cpp's converter writes rope_freqs for llama "
                       "only)",
                       (dir / "config.json").string(), config.model_type));
  }
  SafetensorsFile file = load_safetensors_checkpoint(dir);
  if (!file.quantization.empty()) {
    refuse(wording,
           fmt::format("{} holds affine-quantised tensors, which a GGUF "
                       "model cannot hold; dequantise them first",
                       dir.string()));
  }
  std::vector<Tensor> tensors;
  for (Tensor& t : file.tensors) {
    if (dropped(t.name())) continue;
    if (!gguf_tensor_name(t.name())) {
      refuse(wording,
             fmt::format("'{}' in {} has no GGUF name: it is not a tensor "
                         "of a {} decoder",
                         t.name(), dir.string(), supported_architectures()));
    }
    tensors.push_back(std::move(t));
  }
  check_decoder_tensors(config, tensors, dir.string());
  sort_as_converter(dir, tensors);

  const DType outtype = dtype.value_or(default_outtype(tensors));
  GgufModelInfo info;
  info.file_type = gguf_file_type(outtype);  // E2201 for other dtypes
  HfAsGguf out;
  out.tensors = gguf_tensors(config, tensors, outtype);
  std::int64_t parameters = 0;
  for (const ModelTensor& m : out.tensors) parameters += m.input.numel();
  info.name = model_name(dir, raw);
  info.size_label = gguf_size_label(parameters);
  info.head_dim_keys = raw.is_object() && raw.contains("head_dim");
  out.metadata = gguf_decoder_metadata(config, info);
  auto vocabulary = gguf_tokenizer_metadata(
      dir, {config.vocab_size, config.model_type, tokenizer_pre});
  if (vocabulary.empty()) {
    out.notes.push_back(fmt::format(
        "{} has no tokenizer.json, so the GGUF file has no vocabulary "
        "(CausalLM::load takes it; llama.cpp needs one to load it)",
        dir.string()));
  }
  out.metadata.insert(out.metadata.end(),
                      std::make_move_iterator(vocabulary.begin()),
                      std::make_move_iterator(vocabulary.end()));
  return out;
}

ModelConversionReport convert_hf_to_gguf(const ModelConvertOptions& o) {
  HfAsGguf model = hf_as_gguf(
      o.input, o.dtype, o.tokenizer_pre,
      {"convert",
       " (tessel convert --tensors copies the tensors as they are)"});
  ModelConversionReport report{"hf", "gguf", 0, 0, std::move(model.notes)};
  ModelTensorSource source(std::move(model.tensors), CastOptions{o.saturate});
  report.tensors = source.size();
  report.bytes = source.total_bytes();
  const std::unique_ptr<Progress> progress = source.progress_on_terminal();
  save_gguf(o.output, model.metadata, source);
  if (progress) progress->finish();
  return report;
}

}  // namespace tessel::cli

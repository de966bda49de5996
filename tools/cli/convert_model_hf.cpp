// GGUF model file -> HF checkpoint directory: config.json from the
// metadata (Llama 3's scaling recovered from rope_freqs), the tensors
// under HF names with llama's q/k rows back in HF's order, sharded
// safetensors as save_pretrained writes them, and the tokenizer files.
// The directory is staged and swapped in whole.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/convert_model.hpp"
#include "cli/model_tensor_source.hpp"
#include "cli/staged_directory.hpp"

namespace tessel::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[convert] " + what);
}

// Some of the tensors of another source, renumbered.
class SubsetSource final : public TensorSource {
 public:
  SubsetSource(TensorSource& inner, std::vector<std::size_t> indices)
      : inner_(inner), indices_(std::move(indices)) {}
  std::size_t size() const override { return indices_.size(); }
  const TensorSpec& spec(std::size_t i) const override {
    return inner_.spec(indices_[i]);
  }
  const std::uint8_t* bytes(std::size_t i) override {
    return inner_.bytes(indices_[i]);
  }
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override {
    inner_.read(indices_[i], offset, out);
  }
  void written(std::size_t i, std::int64_t end) override {
    inner_.written(indices_[i], end);
  }

 private:
  TensorSource& inner_;
  std::vector<std::size_t> indices_;
};

// save_pretrained's order: the embedding, the layers in turn, the final
// norm, the head (so that shards hold whole layers where they can).
std::pair<std::int64_t, std::string> hf_order(const std::string& name) {
  constexpr std::string_view layers = "model.layers.";
  if (name.starts_with(layers)) {
    std::int64_t i = 0;
    const char* begin = name.data() + layers.size();
    std::from_chars(begin, name.data() + name.size(), i);
    return {1 + i, name};
  }
  if (name.starts_with("model.embed_tokens")) return {0, name};
  if (name.starts_with("lm_head")) return {INT64_MAX, name};
  return {INT64_MAX - 1, name};
}

const char* torch_dtype_name(DType d) {
  switch (d) {
    case DType::F16: return "float16";
    case DType::BF16: return "bfloat16";
    case DType::F64: return "float64";
    default: return "float32";
  }
}

// Replacing the target whole must not take anything but an earlier
// checkpoint's files with it (`tessel convert model.gguf ~/work` must not
// wipe ~/work).
void refuse_to_replace_foreign(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  const auto ours = [](const std::string& n) {
    return n == "config.json" || n == "generation_config.json" ||
           n == "model.safetensors.index.json" || n == "tokenizer.json" ||
           n == "tokenizer_config.json" || n == "special_tokens_map.json" ||
           n == "chat_template.jinja" ||
           (n.starts_with("model") && n.ends_with(".safetensors"));
  };
  bool only_ours = fs::is_directory(out, ec);
  if (only_ours) {
    for (const auto& e : fs::directory_iterator(out, ec)) {
      only_ours = only_ours && e.is_regular_file(ec) &&
                  ours(e.path().filename().string());
    }
  }
  if (!only_ours || ec) {
    refuse(
        fmt::format("'{}' exists and holds more than a checkpoint's "
                    "files; the output directory replaces its target "
                    "whole, so choose a new or empty directory",
                    out.string()));
  }
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("[convert] cannot write {}", path.string()));
  }
}

// Shards of at most `limit` bytes (a larger tensor alone), in order, as
// model-0000i-of-0000N.safetensors with the index; one shard is
// model.safetensors alone.
void write_shards(const fs::path& dir, ModelTensorSource& source,
                  std::int64_t limit) {
  std::vector<std::vector<std::size_t>> shards;
  std::int64_t filled = 0;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::int64_t n = source.spec(i).nbytes();
    if (shards.empty() || (filled > 0 && filled + n > limit)) {
      shards.emplace_back();
      filled = 0;
    }
    shards.back().push_back(i);
    filled += n;
  }
  const std::map<std::string, std::string> metadata{{"format", "pt"}};
  if (shards.size() <= 1) {
    SubsetSource all(source,
                     shards.empty() ? std::vector<std::size_t>{} : shards[0]);
    save_safetensors(dir / "model.safetensors", all, metadata);
    return;
  }
  json weight_map = json::object();
  std::int64_t total = 0;
  for (std::size_t s = 0; s < shards.size(); ++s) {
    const std::string name =
        fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, shards.size());
    for (const std::size_t i : shards[s]) {
      weight_map[source.spec(i).name] = name;
      total += source.spec(i).nbytes();
    }
    SubsetSource part(source, shards[s]);
    save_safetensors(dir / name, part, metadata);
  }
  const json index = {{"metadata", {{"total_size", total}}},
                      {"weight_map", weight_map}};
  write_text(dir / "model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace

ModelConversionReport convert_gguf_to_hf(const ModelConvertOptions& o) {
  const GgufFile file = load_gguf(o.input);
  DecoderConfig config = decoder_config_from_gguf(file);
  const std::vector<Tensor> tensors = gguf_tensors_as_hf(file);
  Tensor rope_freqs;
  for (const Tensor& t : tensors) {
    if (t.name() == kRopeFreqsTensor) {
      rope_freqs = t;
    } else if (!gguf_tensor_name(t.name())) {
      refuse(fmt::format("'{}' in {} is not a tensor of a {} decoder", t.name(),
                         o.input.string(), supported_architectures()));
    }
  }
  check_decoder_tensors(config, tensors, o.input.string(), gguf_tensor_name);
  if (rope_freqs.defined()) {
    config.rope_scaling = llama3_scaling_from_rope_freqs(config, rope_freqs);
  }
  config.rope_interleaved = false;
  // GGUF keeps these as f32; config.json gets the decimal they were
  // written from (1e-05, not 9.999999747378752e-06).
  config.rms_norm_eps = f32_shortest_decimal(config.rms_norm_eps);
  config.rope_theta = f32_shortest_decimal(config.rope_theta);

  std::vector<ModelTensor> entries;
  for (const Tensor& t : tensors) {
    if (t.name() == kRopeFreqsTensor) continue;
    // f32/f16/bf16 stay as they are, quantised blocks become f32, unless
    // --dtype says otherwise.
    const DType dtype = o.dtype                         ? *o.dtype
                        : is_block_quantized(t.dtype()) ? DType::F32
                                                        : t.dtype();
    ModelTensor m{t.name(), t, dtype};
    if (const auto heads = rope_interleave_heads(config, t.name())) {
      m.order = RowOrder::Deinterleave;
      m.heads = *heads;
    }
    entries.push_back(std::move(m));
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ModelTensor& a, const ModelTensor& b) {
                     return hf_order(a.name) < hf_order(b.name);
                   });
  json hf_config = json::parse(config.to_json());
  for (const ModelTensor& m : entries) {
    if (m.input.rank() == 2) {
      hf_config["torch_dtype"] = torch_dtype_name(m.dtype);
      break;
    }
  }
  const HfTokenizerFiles tokenizer = hf_tokenizer_files(file);

  ModelConversionReport report{"gguf", "hf", 0, 0, {}};
  if (!tokenizer.note.empty()) report.notes.push_back(tokenizer.note);
  refuse_to_replace_foreign(o.output);
  ModelTensorSource source(std::move(entries), CastOptions{o.saturate});
  report.tensors = source.size();
  report.bytes = source.total_bytes();
  const std::unique_ptr<Progress> progress = source.progress_on_terminal();
  StagedDirectory staged(o.output);
  write_shards(staged.path(), source, o.shard_bytes);
  write_text(staged.path() / "config.json", hf_config.dump(2) + "\n");
  if (!tokenizer.tokenizer_json.empty()) {
    write_text(staged.path() / "tokenizer.json", tokenizer.tokenizer_json);
  }
  if (!tokenizer.tokenizer_config_json.empty()) {
    write_text(staged.path() / "tokenizer_config.json",
               tokenizer.tokenizer_config_json);
  }
  staged.commit();
  if (progress) progress->finish();
  return report;
}

}  // namespace tessel::cli

// GGUF model file -> HF checkpoint directory: config.json from the
// metadata (Llama 3's scaling recovered from rope_freqs), the tensors
// under HF names with llama's q/k rows back in HF's order, sharded
// safetensors as save_pretrained writes them, and the tokenizer files.
// The directory is staged and swapped in whole.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/convert_model.hpp"
#include "cli/model_tensor_source.hpp"
#include "io/hf_checkpoint_files.hpp"
#include "io/staged_directory.hpp"

namespace tessel::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[convert] " + what);
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
                     return io::hf_tensor_order(a.name) <
                            io::hf_tensor_order(b.name);
                   });
  json hf_config = json::parse(config.to_json());
  for (const ModelTensor& m : entries) {
    if (m.input.rank() == 2) {
      hf_config["torch_dtype"] = io::torch_dtype_name(m.dtype);
      break;
    }
  }
  const HfTokenizerFiles tokenizer = hf_tokenizer_files(file);

  ModelConversionReport report{"gguf", "hf", 0, 0, {}};
  if (!tokenizer.note.empty()) report.notes.push_back(tokenizer.note);
  io::refuse_to_replace_foreign(o.output, "convert");
  ModelTensorSource source(std::move(entries), CastOptions{o.saturate});
  report.tensors = source.size();
  report.bytes = source.total_bytes();
  const std::unique_ptr<Progress> progress = source.progress_on_terminal();
  io::StagedDirectory staged(o.output);
  io::write_safetensors_shards(staged.path(), source, o.shard_bytes);
  io::write_text_file(staged.path() / "config.json", hf_config.dump(2) + "\n");
  io::write_tokenizer_files(staged.path(), tokenizer);
  staged.commit();
  if (progress) progress->finish();
  return report;
}

}  // namespace tessel::cli

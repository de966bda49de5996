// CausalLM::load: a checkpoint on disk (an HF directory or a GGUF file)
// to a decoder whose parameters are the file's mapped tensors. Only
// headers are read: the configuration is checked against every tensor's
// name and shape, and the weights' pages are first touched by the first
// forward pass.
#include <fstream>

#include "core/check.hpp"
#include "tessel/io/gguf.hpp"
#include "tessel/io/safetensors.hpp"
#include "tessel/models/decoder.hpp"
#include "tessel/models/gguf_model.hpp"

namespace tessel {

namespace {

bool is_gguf_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::string_view(magic, 4) == "GGUF";
}

// Whatever the source holds that the model did not take contradicts the
// configuration, except a tied head's copy of the embedding that some
// writers keep.
void check_nothing_left(const WeightSource& source, const DecoderConfig& c,
                        const std::string& origin) {
  for (const std::string& name : source.untaken()) {
    const bool tied_head = name == "lm_head.weight" && c.tie_word_embeddings;
    TESSEL_CHECK(tied_head, BadConfig, "load model",
                 "'{}' in {} is not a parameter of the model its "
                 "configuration describes",
                 name, origin);
  }
}

}  // namespace

std::unique_ptr<CausalLM> CausalLM::load(const std::filesystem::path& path,
                                         MapMode mode) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const DecoderConfig config = DecoderConfig::load(path / "config.json");
    SafetensorsFile file = load_safetensors_checkpoint(path, mode);
    TESSEL_CHECK(file.quantization.empty(), BadConfig, "load model",
                 "{} holds affine-quantised tensors, which the decoder does "
                 "not take (dequantise them with tessel convert)",
                 path.string());
    const std::unique_ptr<WeightSource> source =
        tensor_weights(std::move(file.tensors), path.string());
    auto lm = std::make_unique<CausalLM>(config, *source);
    check_nothing_left(*source, config, path.string());
    return lm;
  }
  TESSEL_CHECK(std::filesystem::exists(path, ec), IoFailure, "load model",
               "{} does not exist", path.string());
  TESSEL_CHECK(is_gguf_file(path), BadConfig, "load model",
               "{} is neither a checkpoint directory (config.json and "
               "safetensors) nor a GGUF file",
               path.string());
  TESSEL_CHECK(mode == MapMode::ReadOnly, BadConfig, "load model",
               "GGUF files load read-only; convert {} to a checkpoint "
               "directory to train on",
               path.string());
  const GgufFile file = load_gguf(path);
  const DecoderConfig config = decoder_config_from_gguf(file);
  const std::unique_ptr<WeightSource> source =
      tensor_weights(gguf_tensors_as_hf(file), path.string(), gguf_tensor_name);
  auto lm = std::make_unique<CausalLM>(config, *source);
  check_nothing_left(*source, config, path.string());
  return lm;
}

}  // namespace tessel

// CausalLM::load: a checkpoint on disk (an HF directory or a GGUF file)
// to a decoder whose parameters are the file's mapped tensors. Only
// headers are read: the configuration is checked against every tensor's
// name and shape, and the weights' pages are first touched by the first
// forward pass.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"
#include "core/open_for_reading.hpp"
#include "tessel/io/gguf.hpp"
#include "tessel/io/safetensors.hpp"
#include "tessel/models/decoder.hpp"
#include "tessel/models/gguf_model.hpp"

namespace tessel {

namespace {

// Whether the existing file `path` starts with GGUF's magic: E3001 when it
// is not a regular file (a FIFO would block here), E3002 when it cannot be
// opened or read (a file shorter than the magic is no GGUF).
bool is_gguf_file(const std::filesystem::path& path) {
  const int fd = detail::open_for_reading(path, "load model").fd;
  char magic[4] = {};
  std::size_t got = 0;
  while (got < sizeof magic) {
    const ssize_t n = ::read(fd, magic + got, sizeof magic - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      detail::fail(ErrorCode::IoFailure, "load model", "cannot read {}: {}",
                   path.string(), std::strerror(error));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return got == sizeof magic && std::string_view(magic, 4) == "GGUF";
}

}  // namespace

void check_no_unexpected_tensors(
    const WeightSource& source, const DecoderConfig& config,
    const std::string& origin,
    const std::function<std::optional<std::string>(std::string_view)>&
        name_in_file) {
  for (const std::string& name : source.untaken()) {
    if (name == "lm_head.weight" && config.tie_word_embeddings) continue;
    const std::optional<std::string> own =
        name_in_file ? name_in_file(name) : std::nullopt;
    detail::fail(ErrorCode::BadConfig, "load model",
                 "'{}'{} in {} is not a parameter of the {} decoder its "
                 "configuration describes",
                 name,
                 own ? fmt::format(" ({} in the file)", *own) : std::string(),
                 origin, config.model_type);
  }
}

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
    check_no_unexpected_tensors(*source, config, path.string());
    return lm;
  }
  TESSEL_CHECK(std::filesystem::exists(path, ec), IoFailure, "load model",
               "{} does not exist", path.string());
  TESSEL_CHECK(is_gguf_file(path), BadConfig, "load model",
               "{} is neither a checkpoint directory (config.json and "
               "safetensors) nor a GGUF file",
               path.string());
  TESSEL_CHECK(mode != MapMode::CopyOnWrite, BadConfig, "load model",
               "GGUF files load read-only; convert {} to a checkpoint "
               "directory to train on",
               path.string());
  const GgufFile file = load_gguf(path, mode);
  const DecoderConfig config = decoder_config_from_gguf(file);
  const std::unique_ptr<WeightSource> source =
      tensor_weights(gguf_tensors_as_hf(file), path.string(), gguf_tensor_name);
  auto lm = std::make_unique<CausalLM>(config, *source);
  check_no_unexpected_tensors(*source, config, path.string(), gguf_tensor_name);
  return lm;
}

}  // namespace tessel

// `tessel convert` between a HuggingFace checkpoint directory and a GGUF
// model file, the files llama.cpp's convert_hf_to_gguf.py writes and
// reads (docs/models.md, "Converting models"). convert_command.cpp picks
// this over a plain tensor conversion.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/model_tensor_source.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

struct ModelConvertOptions {
  std::filesystem::path input;
  std::filesystem::path output;
  std::optional<DType> dtype;  // --dtype
  std::string tokenizer_pre;   // --tokenizer-pre
  std::int64_t shard_bytes = 5'000'000'000;
  bool saturate = false;
};

// What a conversion wrote, for the summary line or --json.
struct ModelConversionReport {
  std::string input_format;
  std::string output_format;
  std::size_t tensors = 0;
  std::int64_t bytes = 0;
  std::vector<std::string> notes;  // what was not written, and why
};

// A directory with a config.json: a checkpoint to convert as a model.
bool is_hf_model_directory(const std::filesystem::path& path);

ModelConversionReport convert_hf_to_gguf(const ModelConvertOptions& o);

// How a command's refusals of a checkpoint read: "[command] what hint".
struct RefusalWording {
  std::string_view command;
  std::string_view hint;  // what the user can do instead, or empty
};

// An HF checkpoint directory as the GGUF file convert_hf_to_gguf writes
// from it, before anything is written: the metadata, and the tensors in
// the file's order under their GGUF names and dtypes (views of the mapped
// checkpoint, with the row order each is written in). `dtype` as --dtype,
// `tokenizer_pre` as --tokenizer-pre; `notes` says what the file would
// lack. Its own refusals (E4001: rope scaling with no GGUF form, affine-
// quantised tensors, a tensor with no GGUF name) are worded by `wording`;
// those of the configuration and the tensors' checks are theirs.
struct HfAsGguf {
  std::vector<std::pair<std::string, GgufValue>> metadata;
  std::vector<ModelTensor> tensors;
  std::vector<std::string> notes;
};
HfAsGguf hf_as_gguf(const std::filesystem::path& dir,
                    std::optional<DType> dtype,
                    const std::string& tokenizer_pre,
                    const RefusalWording& wording);
ModelConversionReport convert_gguf_to_hf(const ModelConvertOptions& o);

// "5GB" (10^9), "2MiB" (2^20), "123" bytes: transformers' max_shard_size
// spelling. E4001 otherwise.
std::int64_t parse_byte_size(const std::string& text);

// `tensors` (HF names) build the decoder `config` describes and hold
// nothing else, as CausalLM::load requires: E4001 naming a missing tensor,
// a wrong shape or a tensor the model has no place for; a tied head's
// lm_head.weight is allowed.
// `name_in_file` gives a GGUF file's own names for messages.
void check_decoder_tensors(
    const DecoderConfig& config, const std::vector<Tensor>& tensors,
    const std::string& origin,
    std::function<std::optional<std::string>(std::string_view)> name_in_file =
        {});

}  // namespace tessel::cli

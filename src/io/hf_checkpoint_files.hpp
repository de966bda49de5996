// Writing HuggingFace checkpoint directories, for `tessel convert` (GGUF ->
// HF) and `tessel merge`: sharded safetensors with their index as
// save_pretrained lays them out, small text files, and the check that an
// output directory about to be replaced whole holds nothing but a
// checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "tessel/tessel.hpp"

namespace tessel::io {

// save_pretrained's order: the embedding, the layers in turn, the final
// norm, the head (so that shards hold whole layers where they can).
std::pair<std::int64_t, std::string> hf_tensor_order(const std::string& name);

// config.json's torch_dtype for a dtype ("float32" for anything not f16,
// bf16 or f64).
const char* torch_dtype_name(DType d);

// Replacing the target whole must not take anything but an earlier
// checkpoint's files with it (`tessel convert model.gguf ~/work` must not
// wipe ~/work): E4001 "[command] ..." otherwise.
void refuse_to_replace_foreign(const std::filesystem::path& out,
                               const char* command);

// E3002 when the file cannot be written.
void write_text_file(const std::filesystem::path& path,
                     const std::string& text);

// tokenizer.json and tokenizer_config.json as hf_tokenizer_files built
// them from a GGUF vocabulary (each only when it has one).
void write_tokenizer_files(const std::filesystem::path& dir,
                           const HfTokenizerFiles& files);

// The source's tensors in shards of at most `limit` bytes (a larger tensor
// alone), in order, as model-0000i-of-0000N.safetensors with
// model.safetensors.index.json; one shard is model.safetensors alone.
void write_safetensors_shards(const std::filesystem::path& dir,
                              TensorSource& source, std::int64_t limit);

}  // namespace tessel::io

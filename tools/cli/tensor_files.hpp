// The tensor files `tessel inspect` and `tessel convert` read and write:
// safetensors (a file or a checkpoint directory with its index), GGUF,
// .npy and directories of .npy files — told apart by name and contents.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::cli {

enum class TensorFormat { Safetensors, Gguf, Npy, NpyDirectory };

const char* format_name(TensorFormat format);
// "safetensors", "gguf", "npy", "npy-dir"; E4001 for anything else.
TensorFormat parse_format(const std::string& name);

struct TensorFile {
  TensorFormat format = TensorFormat::Safetensors;
  std::vector<Tensor> tensors;  // named; zero-copy views where possible
  // safetensors' string map; GGUF values appear here as text (JSON for
  // arrays) as well as, typed, in gguf_metadata.
  std::map<std::string, std::string> metadata;
  std::vector<std::pair<std::string, GgufValue>> gguf_metadata;
  // A safetensors file's affine-quantised tensors (its
  // tessel.quantization entry), by name; their scales and zero points are
  // among `tensors`.
  std::map<std::string, AffineQuantization> quantization;
  // A big-endian GGUF (its tensors were byte-swapped into memory).
  bool big_endian = false;
};

// What `path` holds: by extension (.safetensors, .gguf, .npy, an
// index.json), or for a directory, a safetensors checkpoint (an index or
// model.safetensors) or else .npy files. E3001 when it is none of them.
TensorFormat detect_input_format(const std::filesystem::path& path);
TensorFile open_tensor_file(const std::filesystem::path& path);

// What to write at `path`: by extension, and a directory for anything
// without one.
TensorFormat output_format_for(const std::filesystem::path& path);

// A metadata value as text: strings as they are, numbers and booleans as
// JSON, arrays as JSON arrays.
std::string gguf_value_text(const GgufValue& value);

}  // namespace tessel::cli

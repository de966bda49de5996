#include "cli/tensor_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

nlohmann::json gguf_value_json(const GgufValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) return *i;
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  if (const auto* b = std::get_if<bool>(&v.value)) return *b;
  if (const auto* s = std::get_if<std::string>(&v.value)) return *s;
  nlohmann::json items = nlohmann::json::array();
  for (const GgufValue& item : std::get<std::vector<GgufValue>>(v.value))
    items.push_back(gguf_value_json(item));
  return items;
}

bool has_npy_files(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".npy") return true;
  }
  return false;
}

[[noreturn]] void not_a_tensor_file(const fs::path& path) {
  throw FormatError(
      ErrorCode::MalformedFile,
      fmt::format("[open] '{}' is not a safetensors, GGUF or .npy file, a "
                  "checkpoint directory or a directory of .npy files",
                  path.string()),
      0);
}

}  // namespace

const char* format_name(TensorFormat format) {
  switch (format) {
    case TensorFormat::Safetensors: return "safetensors";
    case TensorFormat::Gguf: return "gguf";
    case TensorFormat::Npy: return "npy";
    case TensorFormat::NpyDirectory: return "npy-dir";
  }
  return "?";
}

TensorFormat parse_format(const std::string& name) {
  for (auto f : {TensorFormat::Safetensors, TensorFormat::Gguf,
                 TensorFormat::Npy, TensorFormat::NpyDirectory}) {
    if (name == format_name(f)) return f;
  }
  throw_error(ErrorCode::BadConfig,
              fmt::format("[convert] unknown format '{}' (safetensors, gguf, "
                          "npy or npy-dir)",
                          name));
}

std::string gguf_value_text(const GgufValue& value) {
  if (const auto* s = std::get_if<std::string>(&value.value)) return *s;
  // Shown, not stored: bytes that are not UTF-8 print as U+FFFD.
  return gguf_value_json(value).dump(-1, ' ', false,
                                     nlohmann::json::error_handler_t::replace);
}

TensorFormat detect_input_format(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "model.safetensors.index.json", ec) ||
        fs::exists(path / "model.safetensors", ec)) {
      return TensorFormat::Safetensors;
    }
    if (has_npy_files(path)) return TensorFormat::NpyDirectory;
    not_a_tensor_file(path);
  }
  const fs::path ext = path.extension();
  if (ext == ".gguf") return TensorFormat::Gguf;
  if (ext == ".npy") return TensorFormat::Npy;
  if (ext == ".safetensors" || ext == ".json") return TensorFormat::Safetensors;
  not_a_tensor_file(path);
}

TensorFile open_tensor_file(const fs::path& path) {
  TensorFile out;
  out.format = detect_input_format(path);
  switch (out.format) {
    case TensorFormat::Safetensors: {
      SafetensorsFile file = load_safetensors_checkpoint(path);
      out.tensors = std::move(file.tensors);
      out.metadata = std::move(file.metadata);
      out.quantization = std::move(file.quantization);
      break;
    }
    case TensorFormat::Gguf: {
      GgufFile file = load_gguf(path);
      out.tensors = std::move(file.tensors);
      for (const auto& [key, value] : file.metadata)
        out.metadata[key] = gguf_value_text(value);
      out.gguf_metadata = std::move(file.metadata);
      out.big_endian = file.big_endian;
      break;
    }
    case TensorFormat::Npy: {
      Tensor t = load_npy(path);
      t.set_name(path.stem().string());
      out.tensors.push_back(std::move(t));
      break;
    }
    case TensorFormat::NpyDirectory: {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(path)) {
        if (entry.path().extension() == ".npy") files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        Tensor t = load_npy(file);
        t.set_name(file.stem().string());
        out.tensors.push_back(std::move(t));
      }
      break;
    }
  }
  return out;
}

TensorFormat output_format_for(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return TensorFormat::NpyDirectory;
  const fs::path ext = path.extension();
  if (ext == ".gguf") return TensorFormat::Gguf;
  if (ext == ".npy") return TensorFormat::Npy;
  if (ext == ".safetensors") return TensorFormat::Safetensors;
  if (ext.empty()) return TensorFormat::NpyDirectory;
  throw_error(ErrorCode::BadConfig,
              fmt::format("[convert] cannot tell the format of '{}' from its "
                          "name; pass --to safetensors|gguf|npy|npy-dir",
                          path.string()));
}

}  // namespace tessel::cli

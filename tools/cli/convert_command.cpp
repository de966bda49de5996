// `tessel convert IN OUT`: tensors from one file format to another
// (safetensors, GGUF, .npy, directories of .npy), optionally casting the
// floating-point tensors to one dtype. The input is mapped and the output
// laid out from the header alone; each tensor is then cast chunk by chunk
// straight into the output file, so memory holds one chunk, not the model.
// Every output file is atomic, and a directory appears whole.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/staged_directory.hpp"
#include "cli/tensor_files.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

namespace fs = std::filesystem;

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string dtype;
  std::string to;
  std::string arch;
  bool saturate = false;
  bool json = false;
};

// Forwards to the converting source and reports the bytes written.
class ReportingSource final : public TensorSource {
 public:
  ReportingSource(TensorSource& inner, Progress& progress)
      : inner_(inner), progress_(progress) {}

  std::size_t size() const override { return inner_.size(); }
  const TensorSpec& spec(std::size_t i) const override {
    return inner_.spec(i);
  }
  const std::uint8_t* bytes(std::size_t i) override { return inner_.bytes(i); }
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override {
    inner_.read(i, offset, out);
  }
  void written(std::size_t i, std::int64_t end) override {
    inner_.written(i, end);
    if (i != current_) {
      finished_ += current_bytes_;
      current_ = i;
    }
    current_bytes_ = end;
    const std::int64_t done = finished_ + end;
    progress_.update(done, static_cast<double>(done), spec(i).name);
  }

 private:
  TensorSource& inner_;
  Progress& progress_;
  std::int64_t finished_ = 0;
  std::size_t current_ = 0;
  std::int64_t current_bytes_ = 0;
};

// "f8" alone means e4m3fn, the usual format of fp8 weights.
DType parse_target_dtype(const std::string& name) {
  const DType d = parse_dtype(name == "f8" ? "f8_e4m3fn" : name);
  if (!is_floating_point(d)) {
    throw_error(ErrorCode::BadDType,
                fmt::format("[convert] --dtype {} is not a floating-point "
                            "dtype (f32, f16, bf16, f8, f8_e5m2, f64)",
                            name));
  }
  return d;
}

// GGUF needs general.architecture: the input's own, else config.json's
// model_type next to the input, else --arch.
std::string architecture_for(const ConvertOptions& o, const TensorFile& in) {
  if (!o.arch.empty()) return o.arch;
  if (auto it = in.metadata.find("general.architecture");
      it != in.metadata.end()) {
    return it->second;
  }
  fs::path dir = fs::path(o.input);
  if (!fs::is_directory(dir)) dir = dir.parent_path();
  if (dir.empty()) dir = ".";
  std::ifstream config(dir / "config.json");
  if (config) {
    const auto json = nlohmann::json::parse(config, nullptr, false);
    if (json.is_object() && json.contains("model_type") &&
        json["model_type"].is_string()) {
      return json["model_type"].get<std::string>();
    }
  }
  throw_error(ErrorCode::BadConfig,
              "[convert] GGUF needs general.architecture and the input has "
              "none (no config.json model_type beside it either); pass "
              "--arch NAME");
}

std::vector<std::pair<std::string, GgufValue>> gguf_metadata_for(
    const ConvertOptions& o, const TensorFile& in) {
  if (!in.gguf_metadata.empty()) return in.gguf_metadata;
  std::vector<std::pair<std::string, GgufValue>> kv;
  const auto text = [](std::string s) {
    return GgufValue{GgufValue::Type::String, GgufValue::Type::U8,
                     std::move(s)};
  };
  kv.emplace_back("general.architecture", text(architecture_for(o, in)));
  for (const auto& [key, value] : in.metadata) {
    if (key != "general.architecture") kv.emplace_back(key, text(value));
  }
  return kv;
}

// A directory output replaces the target whole; only a directory of .npy
// files (an earlier output) may be replaced, never one holding anything
// else (`tessel convert model.gguf ~/work` must not wipe ~/work).
void refuse_to_replace_foreign_directory(const fs::path& out) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  bool only_npy = fs::is_directory(out, ec);
  if (only_npy) {
    for (const auto& entry : fs::directory_iterator(out, ec)) {
      only_npy = only_npy && entry.is_regular_file(ec) &&
                 entry.path().extension() == ".npy";
    }
  }
  if (!only_npy || ec) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[convert] '{}' exists and holds more than .npy "
                            "files; a directory output replaces its target "
                            "whole, so choose a new or empty directory",
                            out.string()));
  }
}

void write_output(const ConvertOptions& o, TensorFormat format,
                  const TensorFile& in, TensorSource& source) {
  const fs::path out = o.output;
  switch (format) {
    case TensorFormat::Safetensors:
      save_safetensors(out, source, in.metadata);
      return;
    case TensorFormat::Gguf:
      save_gguf(out, gguf_metadata_for(o, in), source);
      return;
    case TensorFormat::Npy:
      if (source.size() != 1) {
        throw_error(ErrorCode::BadShape,
                    fmt::format("[convert] an .npy file holds one tensor and "
                                "'{}' has {}; write a directory instead",
                                o.input, source.size()));
      }
      save_npy(out, source, 0);
      return;
    case TensorFormat::NpyDirectory: {
      for (std::size_t i = 0; i < source.size(); ++i) {
        const std::string& name = source.spec(i).name;
        // NAME_MAX is 255 bytes on Linux file systems; ".npy" takes 4.
        if (name.empty() || name[0] == '.' || name.size() > 251 ||
            name.find_first_of(std::string("/\0", 2)) != std::string::npos) {
          throw_error(ErrorCode::BadShape,
                      fmt::format("[convert] tensor name '{}' cannot be a "
                                  "file name",
                                  name));
        }
      }
      refuse_to_replace_foreign_directory(out);
      StagedDirectory staged(out);
      for (std::size_t i = 0; i < source.size(); ++i) {
        save_npy(staged.path() / (source.spec(i).name + ".npy"), source, i);
      }
      staged.commit();
      return;
    }
  }
}

// This process's peak resident set (VmHWM), or -1 where /proc lacks it.
// (getrusage's ru_maxrss would include the parent's pages from before exec.)
std::int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;  // "VmHWM:   12345 kB"
    }
  }
  return -1;
}

int run_convert(const ConvertOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const TensorFile in = open_tensor_file(o.input);
  const TensorFormat format =
      o.to.empty() ? output_format_for(o.output) : parse_format(o.to);
  std::optional<DType> target;
  if (!o.dtype.empty()) target = parse_target_dtype(o.dtype);
  // --dtype casts the floating-point tensors; integer, packed and
  // block-quantised tensors keep their dtype (as llama.cpp's --outtype
  // leaves quantised and integer tensors alone).
  std::vector<DType> dtypes;
  for (const Tensor& t : in.tensors) {
    dtypes.push_back(target && is_floating_point(t.dtype()) ? *target
                                                            : t.dtype());
  }
  CastingSource casting(in.tensors, dtypes, CastOptions{o.saturate});
  std::int64_t total = 0;
  for (std::size_t i = 0; i < casting.size(); ++i)
    total += casting.spec(i).nbytes();
  // A bar on a terminal; nothing when piped (the summary line says it all).
  if (Progress::stderr_is_terminal()) {
    Progress progress(total, "B", std::int64_t{1} << 30);
    ReportingSource source(casting, progress);
    write_output(o, format, in, source);
    progress.finish();
  } else {
    write_output(o, format, in, casting);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (o.json) {
    nlohmann::json out = {{"input", o.input},
                          {"input_format", format_name(in.format)},
                          {"output", o.output},
                          {"output_format", format_name(format)},
                          {"tensors", in.tensors.size()},
                          {"bytes", total},
                          {"seconds", seconds},
                          {"peak_resident_bytes", peak_resident_bytes()}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} ({}) -> {} ({}): {} tensors, {} bytes in {:.2f} s\n",
               o.input, format_name(in.format), o.output, format_name(format),
               in.tensors.size(), total, seconds);
  }
  return 0;
}

}  // namespace

Runner add_convert_command(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Convert tensors between safetensors (file or checkpoint directory), "
      "GGUF, .npy and directories of .npy files, optionally casting them");
  cmd->add_option("input", o->input, "File or directory to read")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("output", o->output,
                  "File or directory to write (format from its extension; a "
                  "name without one is a directory of .npy files)")
      ->required();
  cmd->add_option("--dtype", o->dtype,
                  "Cast the floating-point tensors: f32, f16, bf16, f8 "
                  "(= f8_e4m3fn), f8_e5m2, f64");
  cmd->add_option("--to", o->to,
                  "Output format: safetensors, gguf, npy or npy-dir");
  cmd->add_option("--arch", o->arch,
                  "general.architecture for a GGUF output when the input "
                  "has none");
  cmd->add_flag("--saturate", o->saturate,
                "Clamp values too large for a narrow dtype to its largest "
                "finite value instead of Inf/NaN");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  return [o] { return run_convert(*o); };
}

}  // namespace tessel::cli

// `tessel convert IN OUT`: tensors from one file format to another
// (safetensors, GGUF, .npy, directories of .npy), optionally casting the
// floating-point tensors to one dtype. The input is mapped and the output
// laid out from the header alone; each tensor is then cast chunk by chunk
// straight into the output file, so memory holds one chunk, not the model.
// Every output file is atomic, and a directory appears whole. Between an
// HF checkpoint directory and a GGUF file it converts the model instead
// (convert_model.hpp), unless --tensors asks for the tensors alone.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/convert_model.hpp"
#include "cli/progress.hpp"
#include "cli/tensor_files.hpp"
#include "io/json_strict.hpp"
#include "io/staged_directory.hpp"
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
  std::string tokenizer_pre;
  std::string shard_size = "5GB";
  bool saturate = false;
  bool tensors = false;
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
  const auto json = io::read_optional_json(dir / "config.json");
  if (json.is_object() && json.contains("model_type") &&
      json["model_type"].is_string()) {
    return json["model_type"].get<std::string>();
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
      save_safetensors(out, source, in.metadata, in.quantization);
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
      io::StagedDirectory staged(out);
      for (std::size_t i = 0; i < source.size(); ++i) {
        save_npy(staged.path() / (source.spec(i).name + ".npy"), source, i,
                 Durability::CallerSyncs);
      }
      staged.sync_contents();
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

enum class Mode { Tensors, HfToGguf, GgufToHf };

// A model conversion when one side is an HF checkpoint directory (one
// with config.json) and the other a GGUF file: IN a checkpoint and OUT a
// .gguf (or --to gguf), or IN a .gguf and OUT a directory (a name without
// extension, an existing directory, or --to hf). --tensors, or --to
// npy-dir, keeps the plain tensor conversion.
Mode mode_for(const ConvertOptions& o) {
  if (o.tensors) {
    if (o.to == "hf") {
      throw_error(ErrorCode::BadConfig,
                  "[convert] --to hf is a model conversion; drop --tensors");
    }
    return Mode::Tensors;
  }
  const fs::path in = o.input;
  const bool gguf_in =
      !fs::is_directory(in) && detect_input_format(in) == TensorFormat::Gguf;
  if (o.to == "hf") {
    if (!gguf_in) {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[convert] --to hf converts a GGUF model file, "
                              "and '{}' is not one",
                              o.input));
    }
    return Mode::GgufToHf;
  }
  if (is_hf_model_directory(in)) {
    const TensorFormat out =
        o.to.empty() ? output_format_for(o.output) : parse_format(o.to);
    return out == TensorFormat::Gguf ? Mode::HfToGguf : Mode::Tensors;
  }
  if (gguf_in && o.to.empty() &&
      output_format_for(o.output) == TensorFormat::NpyDirectory) {
    return Mode::GgufToHf;
  }
  return Mode::Tensors;
}

struct Summary {
  std::string input_format;
  std::string output_format;
  std::size_t tensors = 0;
  std::int64_t bytes = 0;
  std::vector<std::string> notes;
};

Summary run_model_conversion(const ConvertOptions& o, Mode mode) {
  if (!o.arch.empty()) {
    throw_error(ErrorCode::BadConfig,
                "[convert] --arch is for tensor conversions (--tensors); a "
                "model's architecture comes from its config.json or GGUF "
                "metadata");
  }
  ModelConvertOptions m;
  m.input = o.input;
  m.output = o.output;
  if (!o.dtype.empty()) m.dtype = parse_target_dtype(o.dtype);
  m.tokenizer_pre = o.tokenizer_pre;
  m.shard_bytes = parse_byte_size(o.shard_size);
  m.saturate = o.saturate;
  ModelConversionReport r =
      mode == Mode::HfToGguf ? convert_hf_to_gguf(m) : convert_gguf_to_hf(m);
  return {r.input_format, r.output_format, r.tensors, r.bytes,
          std::move(r.notes)};
}

// The input's tensors as they are written, and which of them are the
// scales and zero points of affine-quantised tensors.
struct OutputTensors {
  std::vector<Tensor> tensors;
  std::vector<bool> parameters;
  std::vector<std::string> notes;
};

// Affine-quantised tensors (a safetensors file's tessel.quantization) go
// only to safetensors, which keeps their scheme: GGUF and .npy would hold
// their codes as plain integers, a wrong model for whoever reads them.
// Their scales and zero points are written under the names tessel's
// writer gives them (<name>_scale, <name>_zero_point), which a file by
// another writer may not use.
OutputTensors output_tensors(const TensorFile& in, TensorFormat format) {
  OutputTensors out{in.tensors, std::vector<bool>(in.tensors.size()), {}};
  if (in.quantization.empty()) return out;
  if (format != TensorFormat::Safetensors) {
    const auto& [name, p] = *in.quantization.begin();
    DType codes = DType::I8;
    for (const Tensor& t : in.tensors) {
      if (t.name() == name) codes = t.dtype();
    }
    throw_error(ErrorCode::BadDType,
                fmt::format("[convert] tensor '{}' is affine-quantised ({} "
                            "codes, {}) and {} cannot say so: its codes "
                            "would read as plain integers. Write "
                            "safetensors, which keeps the scheme",
                            name, dtype_name(codes), affine_scheme_name(p),
                            format_name(format)));
  }
  std::map<std::string, std::pair<std::string, const char*>> written_as;
  for (const auto& [name, p] : in.quantization) {
    written_as[p.scale.name()] = {safetensors_scale_name(name), "scale"};
    if (p.zero_point.defined()) {
      written_as[p.zero_point.name()] = {safetensors_zero_point_name(name),
                                         "zero point"};
    }
  }
  for (std::size_t i = 0; i < out.tensors.size(); ++i) {
    Tensor& t = out.tensors[i];
    const auto it = written_as.find(t.name());
    if (it == written_as.end()) continue;
    out.parameters[i] = true;
    const auto& [name, what] = it->second;
    if (name == t.name()) continue;
    out.notes.push_back(
        fmt::format("'{}' is written as '{}', the name of a "
                    "quantised tensor's {} in tessel's files",
                    t.name(), name, what));
    Tensor renamed(t.storage(), t.shape(), t.strides(), t.storage_offset(),
                   t.dtype());
    renamed.set_name(name);
    t = std::move(renamed);
  }
  return out;
}

Summary run_tensor_conversion(const ConvertOptions& o) {
  const TensorFile in = open_tensor_file(o.input);
  const TensorFormat format =
      o.to.empty() ? output_format_for(o.output) : parse_format(o.to);
  std::optional<DType> target;
  if (!o.dtype.empty()) target = parse_target_dtype(o.dtype);
  OutputTensors out = output_tensors(in, format);
  // --dtype casts the floating-point tensors; integer, packed and
  // block-quantised tensors keep their dtype (as llama.cpp's --outtype
  // leaves quantised and integer tensors alone), and so do the scales of
  // affine-quantised ones, which belong to their codes.
  std::vector<DType> dtypes;
  for (std::size_t i = 0; i < out.tensors.size(); ++i) {
    const DType d = out.tensors[i].dtype();
    dtypes.push_back(
        target && is_floating_point(d) && !out.parameters[i] ? *target : d);
  }
  CastingSource casting(out.tensors, dtypes, CastOptions{o.saturate});
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
  return {format_name(in.format), format_name(format), in.tensors.size(), total,
          std::move(out.notes)};
}

int run_convert(const ConvertOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Mode mode = mode_for(o);
  const Summary s = mode == Mode::Tensors ? run_tensor_conversion(o)
                                          : run_model_conversion(o, mode);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  for (const std::string& note : s.notes) {
    fmt::print(stderr, "tessel: note: {}\n", note);
  }
  if (o.json) {
    nlohmann::json out = {
        {"input", o.input},     {"input_format", s.input_format},
        {"output", o.output},   {"output_format", s.output_format},
        {"tensors", s.tensors}, {"bytes", s.bytes},
        {"seconds", seconds},   {"peak_resident_bytes", peak_resident_bytes()},
        {"notes", s.notes}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} ({}) -> {} ({}): {} tensors, {} bytes in {:.2f} s\n",
               o.input, s.input_format, o.output, s.output_format, s.tensors,
               s.bytes, seconds);
  }
  return 0;
}

}  // namespace

Runner add_convert_command(CLI::App& app) {
  auto o = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Convert a model between a HuggingFace checkpoint directory and a GGUF "
      "file, or tensors between safetensors, GGUF, .npy and directories of "
      ".npy files, optionally casting them");
  cmd->footer(
      "Models (llama, qwen2, qwen3), converted as llama.cpp's "
      "convert_hf_to_gguf.py does:\n"
      "  tessel convert MODEL_DIR model.gguf [--dtype f32|f16|bf16]\n"
      "      MODEL_DIR has config.json, safetensors and tokenizer.json; the "
      "GGUF\n      gets llama.cpp's names, metadata, vocabulary and chat "
      "template\n      (without --dtype: f16/bf16 weights keep their type, "
      "others f32)\n"
      "  tessel convert model.gguf OUT_DIR [--dtype D] [--shard-size 5GB]\n"
      "      OUT_DIR gets config.json, model.safetensors (sharded above "
      "the size)\n      and the tokenizer files; quantised tensors become "
      "f32 (or --dtype)\n"
      "Tensors alone (names and metadata as they are): --tensors, or any "
      "other\npair of formats.");
  cmd->add_option("input", o->input,
                  "File or directory to read (a directory with config.json "
                  "is a model)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("output", o->output,
                  "File or directory to write (format from its extension; a "
                  "name without one is a model directory from a GGUF input, "
                  "else a directory of .npy files)")
      ->required();
  cmd->add_option("--dtype", o->dtype,
                  "Cast the floating-point tensors: f32, f16, bf16, f8 "
                  "(= f8_e4m3fn), f8_e5m2, f64 (a GGUF model: f32, f16, "
                  "bf16)");
  cmd->add_option("--to", o->to,
                  "Output format: safetensors, gguf, npy, npy-dir, or hf (a "
                  "model directory from a GGUF model)");
  cmd->add_flag("--tensors", o->tensors,
                "Convert the tensors alone, even between a checkpoint "
                "directory and GGUF (no renaming, no model metadata)");
  cmd->add_option("--tokenizer-pre", o->tokenizer_pre,
                  "tokenizer.ggml.pre for a GGUF model whose pre-tokenizer "
                  "tessel does not name itself (gpt-2, llama-bpe, smaug-bpe, "
                  "qwen2)");
  cmd->add_option("--shard-size", o->shard_size,
                  "Largest safetensors shard of a model directory (default "
                  "5GB; 500MB, 2GiB, bytes)");
  cmd->add_option("--arch", o->arch,
                  "general.architecture for a GGUF output when the input "
                  "has none (tensor conversions)");
  cmd->add_flag("--saturate", o->saturate,
                "Clamp values too large for a narrow dtype to its largest "
                "finite value instead of Inf/NaN");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  return [o] { return run_convert(*o); };
}

}  // namespace tessel::cli

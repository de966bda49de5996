// `tessel inspect FILE`: the tensors of a safetensors file or checkpoint
// directory, a GGUF file, an .npy file or a directory of them — name, dtype,
// shape, bytes and metadata — read from the header alone; --stats streams each
// tensor once for min/max/mean/std and NaN/Inf counts, with progress.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/tensor_files.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct InspectOptions {
  std::string path;
  bool stats = false;
  bool json = false;
};

struct Stats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;
  double sum_squares = 0;
  std::int64_t finite = 0;
  std::int64_t nan = 0;
  std::int64_t inf = 0;
};

// Elements per pass, so that the f64 working copy stays small (8 MiB)
// however large the tensor.
constexpr std::int64_t kChunk = 1 << 20;

void accumulate(Stats& s, const Tensor& chunk) {
  const Tensor x = chunk.to(DType::F64);
  const Tensor finite = isfinite(x);
  const auto count = [](const Tensor& mask) {
    return sum(mask).to(DType::I64).item<std::int64_t>();
  };
  const std::int64_t n_finite = count(finite);
  const std::int64_t n_nan = count(isnan(x));
  s.nan += n_nan;
  s.inf += x.numel() - n_finite - n_nan;
  if (n_finite == 0) return;
  const Tensor zero = zeros({}, DType::F64);
  const Tensor kept = where(finite, x, zero);
  s.sum += sum(kept).item<double>();
  s.sum_squares += sum_squares(kept).item<double>();
  const Tensor big =
      full({}, std::numeric_limits<double>::infinity(), DType::F64);
  s.min = std::min(s.min, min(where(finite, x, big)).item<double>());
  s.max = std::max(s.max, max(where(finite, x, neg(big))).item<double>());
  s.finite += n_finite;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{} B", bytes);
}

// A metadata value for the listing; long arrays are summarised.
std::string show(const GgufValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.value))
    return std::to_string(*u);
  if (const auto* i = std::get_if<std::int64_t>(&v.value))
    return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v.value)) {
    return v.type == GgufValue::Type::F32
               ? fmt::format("{}", static_cast<float>(*d))
               : fmt::format("{}", *d);
  }
  if (const auto* b = std::get_if<bool>(&v.value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v.value)) {
    return s->size() > 80 ? s->substr(0, 77) + "..." : *s;
  }
  const auto& items = std::get<std::vector<GgufValue>>(v.value);
  std::vector<std::string> shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(items.size(), 8); ++i) {
    shown.push_back(show(items[i]));
  }
  return fmt::format("[{}{}] ({} items)", fmt::join(shown, ", "),
                     items.size() > 8 ? ", ..." : "", items.size());
}

// An affine-quantised tensor's statistics are those of its values,
// (q - zero_point) * scale, dequantised a chunk of rows at a time with the
// parameters those rows use.
void accumulate_quantized(Stats& s, const Tensor& q,
                          const AffineQuantization& p) {
  if (q.rank() == 0 || q.numel() == 0) {
    accumulate(s, dequantize_affine(q, p));
    return;
  }
  const AffineGranularity g = affine_granularity(p);
  const std::int64_t axis = check_affine_quantization(q.shape(), p, "inspect");
  const std::int64_t rows = q.size(0);
  std::int64_t step = std::max<std::int64_t>(1, kChunk / (q.numel() / rows));
  // Groups along the rows: whole groups per chunk, each with its scales.
  const std::int64_t group =
      g == AffineGranularity::PerGroup && axis == 0 ? p.group_size : 1;
  step = (step + group - 1) / group * group;
  const bool sliced = (g == AffineGranularity::PerChannel && axis == 0) ||
                      g == AffineGranularity::PerGroup;
  for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
    const std::int64_t r1 = std::min(rows, r0 + step);
    AffineQuantization part = p;
    if (sliced) {
      const std::int64_t p0 = r0 / group, p1 = (r1 + group - 1) / group;
      part.scale = p.scale.slice(0, p0, p1);
      if (p.zero_point.defined()) {
        part.zero_point = p.zero_point.slice(0, p0, p1);
      }
    }
    accumulate(s, dequantize_affine(q.slice(0, r0, r1), part));
  }
}

// "per_group_affine, axis 1, groups of 32, scale w_scale, zero point
// w_zero_point"
std::string quantization_text(const AffineQuantization& p) {
  std::string text = affine_scheme_name(p);
  const AffineGranularity g = affine_granularity(p);
  if (g != AffineGranularity::PerTensor)
    text += fmt::format(", axis {}", p.axis);
  if (g == AffineGranularity::PerGroup) {
    text += fmt::format(", groups of {}", p.group_size);
  }
  text += fmt::format(", scale {}", p.scale.name());
  if (p.zero_point.defined()) {
    text += fmt::format(", zero point {}", p.zero_point.name());
  }
  return text;
}

int run_inspect(const InspectOptions& o) {
  namespace fs = std::filesystem;
  const fs::path path = o.path;
  TensorFile file = open_tensor_file(path);
  if (o.json) {
    // The tensors' descriptors (DESIGN §5), from the header alone. Written
    // piece by piece, each descriptor indented into the document, so that
    // a checkpoint of 80k tensors (60 MB of JSON) is not held twice as a
    // tree; the text is what dump(2) of the whole document would give.
    constexpr auto kShown = nlohmann::json::error_handler_t::replace;
    // Affine-quantised tensors as the file's tessel.quantization entry
    // names them: the descriptors show their codes, and a descriptor's
    // own quantization would carry every scale (data, not header).
    nlohmann::json quantized = nlohmann::json::object();
    for (const auto& [name, p] : file.quantization) {
      nlohmann::json& e = quantized[name];
      e["scheme"] = affine_scheme_name(p);
      const AffineGranularity g = affine_granularity(p);
      if (g != AffineGranularity::PerTensor) e["axis"] = p.axis;
      if (g == AffineGranularity::PerGroup) e["group_size"] = p.group_size;
      e["scale"] = p.scale.name();
      if (p.zero_point.defined()) e["zero_point"] = p.zero_point.name();
    }
    const nlohmann::json head = {{"path", path.string()},
                                 {"big_endian", file.big_endian},
                                 {"metadata", file.metadata},
                                 {"quantization", quantized}};
    std::string text = head.dump(2, ' ', false, kShown);
    text.resize(text.size() - 2);  // reopen the object: drop "\n}"
    text += file.tensors.empty() ? ",\n  \"tensors\": []\n}\n"
                                 : ",\n  \"tensors\": [\n";
    std::fputs(text.c_str(), stdout);
    for (std::size_t i = 0; i < file.tensors.size(); ++i) {
      text = "    " + to_json(describe(file.tensors[i]), 2);
      for (std::size_t at = text.find('\n'); at != std::string::npos;
           at = text.find('\n', at + 5)) {
        text.insert(at + 1, "    ");
      }
      text += i + 1 < file.tensors.size() ? ",\n" : "\n  ]\n}\n";
      std::fputs(text.c_str(), stdout);
    }
    return 0;
  }
  // GGUF values are shown typed, long arrays summarised.
  std::map<std::string, std::string> shown_metadata = file.metadata;
  for (const auto& [k, v] : file.gguf_metadata) shown_metadata[k] = show(v);
  std::int64_t total = 0;
  std::size_t width = 4;
  for (const Tensor& t : file.tensors) {
    total += t.nbytes();
    width = std::max(width, t.name().size());
  }
  fmt::print("{}: {} tensors, {}{}\n", path.string(), file.tensors.size(),
             format_bytes(static_cast<double>(total)),
             file.big_endian ? " (big-endian: byte-swapped into memory)" : "");
  for (const auto& [k, v] : shown_metadata) fmt::print("  {} = {}\n", k, v);

  std::vector<Stats> stats(file.tensors.size());
  if (o.stats) {
    Progress progress(total, "B", 1 << 30);
    std::int64_t done = 0;
    for (std::size_t i = 0; i < file.tensors.size(); ++i) {
      const Tensor& t = file.tensors[i];
      if (const auto q = file.quantization.find(t.name());
          q != file.quantization.end()) {
        accumulate_quantized(stats[i], t, q->second);
        check_mapped_files();
        done += t.nbytes();
        progress.update(done, static_cast<double>(done), t.name());
        continue;
      }
      const Tensor flat = t.reshape({t.numel()});
      for (std::int64_t start = 0; start < t.numel(); start += kChunk) {
        const std::int64_t stop = std::min(t.numel(), start + kChunk);
        // Block-quantised and packed chunks are decoded once, to f32
        // (kChunk is a whole number of every block size).
        Tensor chunk = flat.slice(0, start, stop);
        if (!is_byte_addressable(chunk.dtype())) chunk = chunk.to(DType::F32);
        accumulate(stats[i], chunk);
        check_mapped_files();  // the file may have been cut under us
        done +=
            (stop - start) * t.nbytes() / std::max<std::int64_t>(t.numel(), 1);
        progress.update(done, static_cast<double>(done), t.name());
      }
    }
    progress.finish();
  }

  fmt::print("{:<{}}  {:<9} {:<18} {:>12}{}\n", "name", width, "dtype", "shape",
             "bytes",
             o.stats ? fmt::format("  {:>11} {:>11} {:>11} {:>11} {:>5} {:>5}",
                                   "min", "max", "mean", "std", "nan", "inf")
                     : "");
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const Tensor& t = file.tensors[i];
    std::string line = fmt::format(
        "{:<{}}  {:<9} {:<18} {:>12}", t.name(), width, dtype_name(t.dtype()),
        fmt::format("[{}]", fmt::join(t.shape(), ", ")), t.nbytes());
    if (o.stats) {
      const Stats& s = stats[i];
      const double n = static_cast<double>(s.finite);
      const double mean = s.finite > 0 ? s.sum / n : NAN;
      const double var =
          s.finite > 0 ? std::max(0.0, s.sum_squares / n - mean * mean) : NAN;
      line +=
          fmt::format("  {:>11.4g} {:>11.4g} {:>11.4g} {:>11.4g} {:>5} {:>5}",
                      s.finite ? s.min : NAN, s.finite ? s.max : NAN, mean,
                      std::sqrt(var), s.nan, s.inf);
    }
    fmt::print("{}\n", line);
  }
  if (!file.quantization.empty()) {
    fmt::print("affine-quantised{}:\n",
               o.stats ? " (statistics of the dequantised values)" : "");
    for (const auto& [name, p] : file.quantization) {
      fmt::print("  {:<{}}  {}\n", name, width, quantization_text(p));
    }
  }
  return 0;
}

}  // namespace

Runner add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "List the tensors of a safetensors file or checkpoint directory, a "
      "GGUF file, an .npy file or a directory of them (reads only the "
      "headers unless --stats)");
  cmd->add_option("path", o->path, "File, checkpoint directory or index")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_flag("--stats", o->stats,
                "Stream every tensor: min, max, mean, std (of the finite "
                "values) and NaN/Inf counts");
  cmd->add_flag("--json", o->json,
                "Print the tensors' JSON descriptors (WIA-AI-011 keys)");
  return [o] { return run_inspect(*o); };
}

}  // namespace tessel::cli

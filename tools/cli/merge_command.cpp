// `tessel merge CONFIG.yml OUT`: the command line of merge::run
// (tessel/merge/run.hpp), with a progress bar on a terminal.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/convert_model.hpp"
#include "cli/progress.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct MergeCommandOptions {
  std::string config;
  std::string output;
  std::uint64_t seed = 0;
  std::string quantize;
  std::string shard_size = "5GB";
  std::string tokenizer_pre;
  int threads = 0;
  bool json = false;
};

int run(const MergeCommandOptions& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  merge::RunOptions r;
  r.config = o.config;
  r.output = o.output;
  r.seed = o.seed;
  r.quantize = o.quantize;
  r.shard_bytes = parse_byte_size(o.shard_size);
  r.tokenizer_pre = o.tokenizer_pre;
  // A bar over the tensors (rate in MB read) on a terminal, unless --json.
  std::unique_ptr<Progress> bar;
  if (!o.json && Progress::stderr_is_terminal()) {
    r.on_progress = [&bar](const merge::RunProgress& p) {
      if (!bar) bar = std::make_unique<Progress>(p.total, "MB", 1 << 30);
      bar->update(p.done, double(p.bytes_read) / 1e6, std::string(p.tensor));
    };
  }
  const merge::RunReport report = merge::run(r);
  if (bar) bar->finish();
  for (const std::string& note : report.notes) {
    fmt::print(stderr, "tessel: note: {}\n", note);
  }
  const double moved = double(report.bytes_read + report.bytes_written);
  const double rate = report.seconds > 0 ? moved / report.seconds / 1e9 : 0.0;
  if (o.json) {
    const nlohmann::json out = {
        {"method", report.method},
        {"output", o.output},
        {"output_format", report.output_format},
        {"models", report.models},
        {"tensors", report.tensors},
        {"layers", report.layers},
        {"bytes_read", report.bytes_read},
        {"bytes_written", report.bytes_written},
        {"seconds", report.seconds},
        {"gb_per_second", rate},
        {"notes", report.notes},
    };
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print(
        "{} of {} models -> {} ({}): {} tensors, {} layers, {:.2f} s "
        "({:.2f} GB/s read + written)\n",
        report.method, report.models, o.output, report.output_format,
        report.tensors, report.layers, report.seconds, rate);
  }
  return 0;
}

}  // namespace

Runner add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Merge models as a mergekit config says (linear, task_arithmetic, "
      "slerp, nuslerp, ties, dare_linear, dare_ties, breadcrumbs, "
      "breadcrumbs_ties, della, della_linear, model_stock, passthrough)");
  cmd->footer(
      "Inputs are HF checkpoint directories and GGUF files (f32, f16, bf16 "
      "or quantised),\nmixed freely; the output is an HF directory or, "
      "named *.gguf, a GGUF file.\nExample (slerp.yml):\n"
      "  slices:\n"
      "    - sources:\n"
      "        - model: ./qwen3-a\n"
      "          layer_range: [0, 28]\n"
      "        - model: ./qwen3-b.gguf\n"
      "          layer_range: [0, 28]\n"
      "  merge_method: slerp\n"
      "  base_model: ./qwen3-a\n"
      "  parameters:\n"
      "    t:\n"
      "      - filter: self_attn\n"
      "        value: [0, 0.5, 0.3, 0.7, 1]\n"
      "      - filter: mlp\n"
      "        value: [1, 0.5, 0.7, 0.3, 0]\n"
      "      - value: 0.5\n"
      "  dtype: bfloat16\n"
      "then:\n"
      "  tessel merge slerp.yml ./merged            # HF directory\n"
      "  tessel merge slerp.yml merged.gguf --quantize Q4_K_M\n"
      "docs/merge.md gives each method's formula.");
  cmd->add_option("config", o->config, "mergekit YAML configuration")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("output", o->output,
                  "Output: a directory (HF checkpoint) or a .gguf file")
      ->required();
  cmd->add_option("--seed", o->seed,
                  "Seed of the random masks of dare_*, della* (default 0); "
                  "the same seed gives the same bytes on any thread count");
  cmd->add_option("--quantize", o->quantize,
                  "Quantise a GGUF output to one of llama.cpp's mixes "
                  "(Q4_K_M, Q8_0, Q6_K, ...)");
  cmd->add_option("--shard-size", o->shard_size,
                  "Largest safetensors shard of an HF output (default 5GB)");
  cmd->add_option("--tokenizer-pre", o->tokenizer_pre,
                  "tokenizer.ggml.pre for a GGUF output from an HF base whose "
                  "pre-tokenizer tessel does not name itself");
  cmd->add_option("--threads", o->threads,
                  "Threads (default: TESSEL_NUM_THREADS, else all CPUs)");
  cmd->add_flag("--json", o->json, "Print a JSON summary (and no progress)");
  return [o] { return run(*o); };
}

}  // namespace tessel::cli

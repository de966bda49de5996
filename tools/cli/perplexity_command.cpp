// `tessel perplexity`: a checkpoint's perplexity on a text file by
// llama.cpp's rule (models/perplexity.hpp), printed as llama-perplexity
// prints it so that the numbers can be set side by side.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/cache_type_option.hpp"
#include "cli/commands.hpp"
#include "cli/matmul_precision_option.hpp"
#include "cli/progress.hpp"
#include "io/read_file.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct PerplexityCommandOptions {
  std::string model;
  std::string file;
  std::int64_t ctx = 512;
  bool json = false;
  bool no_mmap = false;
  std::string matmul_precision = "f32";
  std::string cache_type = "f32";
};

std::string read_text_file(const std::string& path) {
  std::string s = io::read_text_file(path);
  // llama.cpp's -f drops one trailing newline.
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

int run_perplexity(const PerplexityCommandOptions& o) {
  if (o.ctx < 3) {
    throw_error(
        ErrorCode::BadConfig,
        fmt::format("[perplexity] --ctx must be at least 3, not {}", o.ctx));
  }
  const MatmulPrecisionGuard precision(
      parse_matmul_precision(o.matmul_precision));
  const ModelTokenizer tokenizer = ModelTokenizer::load(o.model);
  const std::unique_ptr<CausalLM> lm = CausalLM::load(
      o.model, o.no_mmap ? MapMode::Resident : MapMode::ReadOnly);
  const DecoderConfig& config = lm->config();
  tokenizer.check_fits(config);
  const std::int64_t ctx = std::min(o.ctx, config.max_position_embeddings);
  if (ctx < o.ctx) {
    // llama.cpp runs past the trained context with a warning; tessel's
    // decoder has no positions there.
    fmt::print(stderr,
               "perplexity: --ctx {} clamped to the model's {} positions\n",
               o.ctx, ctx);
  }
  // common_tokenize(text, add_special = true, parse_special = false), of
  // which llama-perplexity keeps BOS only (it refuses vocabularies that
  // add EOS).
  std::vector<std::int64_t> tokens;
  if (tokenizer.adds_bos()) tokens.push_back(*tokenizer.bos_id());
  const std::vector<std::int64_t> text =
      tokenizer.encode(read_text_file(o.file), false, false);
  tokens.insert(tokens.end(), text.begin(), text.end());
  const auto n_tokens = static_cast<std::int64_t>(tokens.size());
  PerplexityMeter meter(
      *lm, std::move(tokens), ctx,
      tokenizer.adds_bos() ? tokenizer.bos_id() : std::nullopt,
      parse_dtype(o.cache_type));

  // On a terminal a bar shows the running estimate and the list follows
  // at the end; piped, the list grows chunk by chunk (llama-perplexity's
  // output) and stderr stays quiet.
  const bool terminal = Progress::stderr_is_terminal();
  std::optional<Progress> progress;
  if (terminal) progress.emplace(meter.windows(), "tok", 1);
  std::vector<double> running;
  std::string list;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < meter.windows(); ++i) {
    meter.score_next();
    running.push_back(meter.perplexity());
    const std::string entry = fmt::format("[{}]{:.4f},", i + 1, running.back());
    list += entry;
    if (progress) {
      progress->update(i + 1, static_cast<double>((i + 1) * ctx),
                       fmt::format("PPL {:.4f}", running.back()));
    } else if (!o.json) {
      fmt::print("{}", entry);
      std::fflush(stdout);
    }
  }
  if (progress) progress->finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (o.json) {
    nlohmann::ordered_json j;
    j["model"] = o.model;
    j["tokens"] = n_tokens;
    j["context"] = ctx;
    j["cache_type"] = o.cache_type;
    j["windows"] = meter.windows();
    j["scored"] = meter.scored();
    j["add_bos"] = tokenizer.adds_bos();
    j["perplexity"] = meter.perplexity();
    j["perplexity_error"] = meter.perplexity_error();
    j["running_perplexity"] = running;
    j["seconds"] = seconds;
    fmt::print("{}\n", j.dump());
    return 0;
  }
  if (terminal) fmt::print("{}", list);
  fmt::print("\nFinal estimate: PPL = {:.4f} +/- {:.5f}\n", meter.perplexity(),
             meter.perplexity_error());
  return 0;
}

}  // namespace

Runner add_perplexity_command(CLI::App& app) {
  auto o = std::make_shared<PerplexityCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "perplexity",
      "Perplexity of a checkpoint on a text file, as llama-perplexity "
      "measures it");
  cmd->add_option("--model", o->model,
                  "Checkpoint: HF directory, GGUF file, or a `tessel train` "
                  "run")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--file", o->file, "Text file (UTF-8)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--ctx", o->ctx,
                  "Window in tokens (the second half of each is scored); at "
                  "most the model's positions")
      ->capture_default_str();
  add_matmul_precision_option(cmd, &o->matmul_precision);
  add_cache_type_option(cmd, &o->cache_type);
  cmd->add_flag("--no-mmap", o->no_mmap,
                "Read the weights into memory (2 MiB pages) instead of mapping "
                "the file: slower to load, faster to run (docs/models.md)");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  return [o] { return run_perplexity(*o); };
}

}  // namespace tessel::cli

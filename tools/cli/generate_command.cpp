// `tessel generate`: continues a prompt with a checkpoint's decoder (byte
// tokens), printing tokens as they are produced.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cli/commands.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct GenerateCommandOptions {
  std::string model;
  std::string prompt;
  std::int64_t max_tokens = 32;
  double temperature = 0;
  std::int64_t top_k = 0;
  double top_p = 1.0;
  std::uint64_t seed = 0;
  bool json = false;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int run_generate(const GenerateCommandOptions& o) {
  if (o.prompt.empty()) {
    throw_error(ErrorCode::BadConfig, "[generate] --prompt must not be empty");
  }
  const std::unique_ptr<CausalLM> lm = CausalLM::load(o.model);
  const ByteTokenizer tokenizer;
  const std::vector<std::int64_t> ids = tokenizer.encode(o.prompt);
  GenerateOptions options;
  options.max_new_tokens = o.max_tokens;
  options.sampling = {o.temperature, o.top_k, o.top_p, o.seed};
  options.stop_token = lm->config().eos_token_id;
  if (!o.json) {
    fmt::print("{}", o.prompt);
    std::fflush(stdout);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto rows = generate(
      *lm, from_vector(ids, {1, static_cast<std::int64_t>(ids.size())}),
      options, [&](std::int64_t, std::int64_t token) {
        if (!o.json) {
          fmt::print("{}", tokenizer.decode({token}));
          std::fflush(stdout);
        }
      });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const std::string completion = tokenizer.decode(rows[0]);
  if (o.json) {
    fmt::print(
        "{{\"prompt\": {}, \"completion\": {}, \"tokens\": {}, "
        "\"seconds\": {:.4f}}}\n",
        json_string(o.prompt), json_string(completion), rows[0].size(),
        seconds);
  } else if (completion.empty() || completion.back() != '\n') {
    fmt::print("\n");
  }
  return 0;
}

}  // namespace

Runner add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Continue a prompt with a checkpoint's decoder");
  cmd->add_option("--model", o->model,
                  "Checkpoint directory (config.json + model.safetensors)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--prompt", o->prompt, "Text to continue")->required();
  cmd->add_option("--max-tokens", o->max_tokens, "New tokens at most")
      ->capture_default_str();
  cmd->add_option("--temperature", o->temperature,
                  "0 picks the most likely token (greedy)")
      ->capture_default_str();
  cmd->add_option("--top-k", o->top_k,
                  "Sample among the k most likely (0: all)")
      ->capture_default_str();
  cmd->add_option("--top-p", o->top_p,
                  "Sample among the most likely tokens holding this "
                  "probability")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the sampler")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON line");
  return [o] { return run_generate(*o); };
}

}  // namespace tessel::cli

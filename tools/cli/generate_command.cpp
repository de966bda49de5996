// `tessel generate`: continues a prompt with a checkpoint (HF directory,
// GGUF file, or what `tessel train` writes) and its own tokeniser,
// streaming the text as tokens arrive.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/cache_type_option.hpp"
#include "cli/commands.hpp"
#include "cli/matmul_precision_option.hpp"
#include "cli/text_stream.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct GenerateCommandOptions {
  std::string model;
  std::string prompt;
  std::int64_t max_tokens = 32;
  double temperature = 0;
  std::int64_t top_k = 0;
  double top_p = 1.0;
  std::uint64_t seed = 0;
  std::int64_t ctx = 0;
  bool truncate = false;
  bool chat = false;
  bool json = false;
  bool no_mmap = false;
  std::string matmul_precision = "f32";
  std::string cache_type = "f32";
};

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

[[noreturn]] void refuse_chat(const std::string& model,
                              const ModelTokenizer& tokenizer) {
  const char* source = tokenizer.kind() == ModelTokenizer::Kind::Gguf
                           ? "tokenizer.chat_template"
                           : "tokenizer_config.json or chat_template.jinja";
  const std::string has =
      tokenizer.chat_template()
          ? fmt::format("{} has a chat template ({})", model, source)
          : fmt::format("{} has no chat template", model);
  throw_error(
      ErrorCode::BadConfig,
      fmt::format(
          "[generate] --chat: {}, and tessel does not render chat templates: "
          "they are Jinja2 programs, and neither Debian 12 nor PyPI has a "
          "maintained C++ Jinja library to run them with (docs/models.md, "
          "\"Chat templates\"). Format the conversation yourself and pass it "
          "as --prompt (for example with transformers' "
          "tokenizer.apply_chat_template(messages, tokenize=False, "
          "add_generation_prompt=True))",
          has));
}

// The prompt's ids, fitted to a context of `ctx` positions: E2302 when
// they do not fit, unless `truncate`, which keeps the last ones (BOS
// stays first), leaving room for the new tokens but giving up at most
// half the context to them.
std::vector<std::int64_t> fit_prompt(std::vector<std::int64_t> ids,
                                     const GenerateCommandOptions& o,
                                     std::int64_t ctx,
                                     const ModelTokenizer& tokenizer) {
  const auto n = static_cast<std::int64_t>(ids.size());
  if (n <= ctx) return ids;
  if (!o.truncate) {
    throw_error(
        ErrorCode::OutOfRange,
        fmt::format(
            "[generate] the prompt is {} tokens but the context "
            "holds {} ({}): shorten it, or pass --truncate to keep "
            "its last tokens",
            n, ctx,
            o.ctx > 0 ? "--ctx" : "the model's max_position_embeddings"));
  }
  const std::int64_t keep = std::max<std::int64_t>(
      ctx - o.max_tokens, std::max<std::int64_t>(ctx / 2, 1));
  std::vector<std::int64_t> kept;
  if (tokenizer.adds_bos() && keep > 1) kept.push_back(*tokenizer.bos_id());
  kept.insert(kept.end(),
              ids.end() - (keep - static_cast<std::int64_t>(kept.size())),
              ids.end());
  fmt::print(stderr,
             "generate: --truncate kept the last {} of the prompt's {} "
             "tokens\n",
             kept.size(), n);
  return kept;
}

int run_generate(const GenerateCommandOptions& o) {
  if (o.prompt.empty()) {
    throw_error(ErrorCode::BadConfig, "[generate] --prompt must not be empty");
  }
  if (o.max_tokens < 0 || o.ctx < 0) {
    throw_error(ErrorCode::BadConfig,
                "[generate] --max-tokens and --ctx must not be negative");
  }
  const MatmulPrecisionGuard precision(
      parse_matmul_precision(o.matmul_precision));
  const ModelTokenizer tokenizer = ModelTokenizer::load(o.model);
  if (o.chat) refuse_chat(o.model, tokenizer);
  const std::unique_ptr<CausalLM> lm = CausalLM::load(
      o.model, o.no_mmap ? MapMode::Resident : MapMode::ReadOnly);
  const DecoderConfig& config = lm->config();
  tokenizer.check_fits(config);
  const std::int64_t positions = config.max_position_embeddings;
  if (o.ctx > positions) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[generate] --ctx {} is past the model's {} "
                            "positions (max_position_embeddings)",
                            o.ctx, positions));
  }
  std::vector<std::int64_t> ids = tokenizer.encode(o.prompt);
  if (ids.empty()) {
    throw_error(ErrorCode::BadConfig,
                "[generate] the prompt encodes to no tokens");
  }
  // --max-tokens past the positions cannot be used: clamped before the
  // sum, which would overflow for values near INT64_MAX.
  const std::int64_t ctx =
      o.ctx > 0 ? o.ctx
                : std::min(positions, static_cast<std::int64_t>(ids.size()) +
                                          std::min(o.max_tokens, positions));
  ids = fit_prompt(std::move(ids), o, ctx, tokenizer);
  const auto prompt_tokens = static_cast<std::int64_t>(ids.size());

  Sampler sampler({o.temperature, o.top_k, o.top_p, o.seed});
  KVCache cache(config, 1, ctx, parse_dtype(o.cache_type));
  TextStream stream(
      [&](std::span<const std::int64_t> s) { return tokenizer.decode(s); },
      ids);
  std::string completion;
  const auto emit = [&](const std::string& text) {
    completion += text;
    if (!o.json && !text.empty()) {
      fmt::print("{}", text);
      std::fflush(stdout);
    }
  };
  if (!o.json) {
    fmt::print("{}", o.prompt);
    std::fflush(stdout);
  }

  // An embedding padded past the tokenizer (Qwen2.5: 151936 rows for
  // 151665 tokens) has rows no text stands for: never sampled.
  const std::int64_t tokens = tokenizer.vocab_size();
  const auto next_logits = [&](const std::vector<std::int64_t>& feed) {
    Tensor out =
        lm->next_token_logits(
              from_vector(feed, {1, static_cast<std::int64_t>(feed.size())}),
              &cache)
            .select(0, 0);
    if (out.size(0) > tokens) {
      out.slice(0, tokens, out.size(0))
          .fill_(-std::numeric_limits<double>::infinity());
    }
    return out;
  };
  const auto start = Clock::now();
  Tensor logits = next_logits(ids);
  std::vector<std::int64_t> generated;
  std::string stop = "max_tokens";
  std::optional<std::int64_t> end_token;
  Clock::time_point first_token = Clock::now();
  Clock::time_point last_token = first_token;
  while (static_cast<std::int64_t>(generated.size()) < o.max_tokens) {
    const std::int64_t token = sampler.sample(logits);
    const auto now = Clock::now();
    if (generated.empty()) first_token = last_token = now;
    if (tokenizer.is_end(token)) {
      stop = "eos";
      end_token = token;
      break;
    }
    last_token = now;
    generated.push_back(token);
    emit(stream.push(token));
    if (static_cast<std::int64_t>(generated.size()) == o.max_tokens) break;
    if (cache.length() >= ctx) {
      stop = "context";
      break;
    }
    logits = next_logits({token});
  }
  emit(stream.finish());
  const auto end = Clock::now();

  // Prompt speed counts up to the first sampled token; decode speed the
  // tokens after it over the time between the first and the last.
  const double prompt_seconds = seconds_between(start, first_token);
  const double prompt_rate =
      prompt_seconds > 0 ? static_cast<double>(prompt_tokens) / prompt_seconds
                         : 0.0;
  const auto later = static_cast<std::int64_t>(generated.size()) - 1;
  const double decode_seconds = seconds_between(first_token, last_token);
  const bool has_decode_rate = later > 0 && decode_seconds > 0;
  const double decode_rate =
      has_decode_rate ? static_cast<double>(later) / decode_seconds : 0.0;
  if (o.json) {
    nlohmann::ordered_json j;
    j["prompt"] = o.prompt;
    j["completion"] = completion;
    j["tokens"] = generated.size();
    j["token_ids"] = generated;
    j["stop"] = stop;
    j["end_token_id"] =
        end_token ? nlohmann::ordered_json(*end_token) : nullptr;
    j["prompt_tokens"] = prompt_tokens;
    j["prompt_tokens_per_second"] = prompt_rate;
    j["decode_tokens_per_second"] =
        has_decode_rate ? nlohmann::ordered_json(decode_rate) : nullptr;
    j["context"] = ctx;
    j["cache_type"] = o.cache_type;
    j["seconds"] = seconds_between(start, end);
    // Raw GGUF pieces may be invalid UTF-8; JSON text cannot be.
    fmt::print("{}\n", j.dump(-1, ' ', false,
                              nlohmann::json::error_handler_t::replace));
  } else if (completion.empty() || completion.back() != '\n') {
    fmt::print("\n");
  }
  std::fflush(stdout);
  if (stop == "context") {
    fmt::print(stderr,
               "generate: stopped at the end of the context ({} "
               "positions; --ctx)\n",
               ctx);
  }
  fmt::print(stderr,
             "prompt: {} tokens, {:.1f} tok/s; decode: {} tokens, {} tok/s\n",
             prompt_tokens, prompt_rate, generated.size(),
             has_decode_rate ? fmt::format("{:.1f}", decode_rate) : "-");
  return 0;
}

}  // namespace

Runner add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Continue a prompt with a checkpoint, streaming the text");
  cmd->add_option("--model", o->model,
                  "Checkpoint: HF directory (config.json, safetensors, "
                  "tokenizer.json), GGUF file, or a `tessel train` run")
      ->required()
      ->check(CLI::ExistingPath);
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
  cmd->add_option("--ctx", o->ctx,
                  "Context (KV cache) in tokens; default: prompt + "
                  "--max-tokens, at most the model's positions");
  cmd->add_flag("--truncate", o->truncate,
                "Keep the last tokens of a prompt longer than the context "
                "(else an error)");
  cmd->add_flag("--chat", o->chat,
                "Apply the checkpoint's chat template (not supported: see "
                "docs/models.md)");
  add_matmul_precision_option(cmd, &o->matmul_precision);
  add_cache_type_option(cmd, &o->cache_type);
  cmd->add_flag("--no-mmap", o->no_mmap,
                "Read the weights into memory (2 MiB pages) instead of mapping "
                "the file: slower to load, faster to run (docs/models.md)");
  cmd->add_flag("--json", o->json,
                "Print one JSON line (completion, token ids, speeds)");
  return [o] { return run_generate(*o); };
}

}  // namespace tessel::cli

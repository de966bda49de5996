// `tessel plan`: the memory a decoder needs, measured by building it and
// running it on the meta device (Note [meta backend]): every tensor gets
// its real shape and dtype and no memory, and the meta allocator's live and
// peak bytes are what the CPU would hold. An 8B model plans in
// milliseconds on a laptop.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cache_type_option.hpp"
#include "cli/commands.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct PlanOptions {
  std::string model;  // a checkpoint directory or a config.json; empty: default
  std::int64_t batch = 1;
  std::int64_t seq = 0;  // 0: the config's max_position_embeddings
  std::string cache_type = "f32";
  bool json = false;
};

DecoderConfig plan_config(const std::string& model) {
  if (model.empty()) return DecoderConfig{};  // the model `tessel train` makes
  const std::filesystem::path p(model);
  return DecoderConfig::load(
      std::filesystem::is_directory(p) ? p / "config.json" : p);
}

struct Plan {
  std::int64_t parameters = 0;
  std::int64_t parameter_bytes = 0;
  std::int64_t kv_cache_bytes = 0;
  std::int64_t inference_peak = 0;  // above the parameters
  std::int64_t training_peak = 0;   // above the parameters, gradients included
  std::int64_t optimizer_bytes = 0;
};

Plan measure(const DecoderConfig& config, std::int64_t batch, std::int64_t seq,
             DType cache_dtype) {
  const DeviceGuard on_meta(Device::meta());
  Plan plan;
  const CausalLM lm(config);
  for (const auto& [name, p] : lm.named_parameters()) {
    plan.parameters += p.value().numel();
    plan.parameter_bytes += p.value().nbytes();
  }
  const Tensor ids = zeros({batch, seq}, DType::I64);
  {
    const std::int64_t before = meta_memory_stats().live_bytes;
    const KVCache cache(config, batch, seq, cache_dtype);
    plan.kv_cache_bytes = meta_memory_stats().live_bytes - before;
  }
  {
    const std::int64_t before = meta_memory_stats().live_bytes;
    reset_meta_memory_peak();
    lm.logits(ids);
    plan.inference_peak = meta_memory_stats().peak_bytes - before;
  }
  {
    // One training step: forward with the graph, cross-entropy, backward.
    // The peak holds the saved activations and the gradients made so far;
    // the gradients stay alive for the optimizer, whose AdamW moments are
    // two more tensors per parameter.
    const std::int64_t before = meta_memory_stats().live_bytes;
    reset_meta_memory_peak();
    const Variable loss = cross_entropy(lm.forward(ids), ids);
    loss.backward();
    plan.training_peak = meta_memory_stats().peak_bytes - before;
    plan.optimizer_bytes = 2 * plan.parameter_bytes;
  }
  return plan;
}

std::string bytes_text(std::int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes)
                : fmt::format("{:.2f} {}", v, units[u]);
}

int run_plan(const PlanOptions& o) {
  const DecoderConfig config = plan_config(o.model);
  config.validate();
  const std::int64_t seq = o.seq > 0 ? o.seq : config.max_position_embeddings;
  const Plan p = measure(config, o.batch, seq, parse_dtype(o.cache_type));
  const std::int64_t inference_total = p.parameter_bytes + p.inference_peak;
  const std::int64_t training_total =
      p.parameter_bytes + p.training_peak + p.optimizer_bytes;
  if (o.json) {
    const nlohmann::json j = {
        {"model_type", config.model_type},
        {"batch", o.batch},
        {"seq", seq},
        {"dtype", "f32"},
        {"parameters", p.parameters},
        {"parameter_bytes", p.parameter_bytes},
        {"kv_cache_bytes", p.kv_cache_bytes},
        {"cache_type", o.cache_type},
        {"inference_activation_peak_bytes", p.inference_peak},
        {"inference_total_bytes", inference_total},
        {"training_activation_peak_bytes", p.training_peak},
        {"optimizer_state_bytes", p.optimizer_bytes},
        {"training_total_bytes", training_total}};
    fmt::print("{}\n", j.dump());
    return 0;
  }
  fmt::print(
      "{} decoder, {} layers, hidden {}, vocab {}; batch {} x {} "
      "tokens, f32\n",
      config.model_type, config.num_hidden_layers, config.hidden_size,
      config.vocab_size, o.batch, seq);
  fmt::print("  parameters           {:>14}  ({} values)\n",
             bytes_text(p.parameter_bytes), p.parameters);
  fmt::print("  KV cache             {:>14}  ({})\n",
             bytes_text(p.kv_cache_bytes), o.cache_type);
  fmt::print("  forward, peak extra  {:>14}  (total {})\n",
             bytes_text(p.inference_peak), bytes_text(inference_total));
  fmt::print("  train step, peak     {:>14}  (activations and gradients)\n",
             bytes_text(p.training_peak));
  fmt::print("  AdamW moments        {:>14}\n", bytes_text(p.optimizer_bytes));
  fmt::print(
      "  training total       {:>14}  (parameters, step peak, moments)\n",
      bytes_text(training_total));
  return 0;
}

}  // namespace

Runner add_plan_command(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand(
      "plan",
      "Memory a decoder needs for inference and training, measured on the "
      "meta device (no weights are read or allocated)");
  cmd->add_option("model", o->model,
                  "Checkpoint directory or config.json (default: the model "
                  "`tessel train` trains)")
      ->check(CLI::ExistingPath);
  cmd->add_option("--batch", o->batch, "Sequences per batch")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seq", o->seq,
                  "Tokens per sequence (default: max_position_embeddings)")
      ->check(CLI::PositiveNumber);
  add_cache_type_option(cmd, &o->cache_type);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  return [o] { return run_plan(*o); };
}

}  // namespace tessel::cli

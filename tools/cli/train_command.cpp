// `tessel train`: trains a decoder from scratch (or resumes a checkpoint)
// on the built-in addition task or a text file, evaluates it on held-out
// data and writes a checkpoint directory.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/train/checkpoint.hpp"
#include "cli/train/task.hpp"
#include "tessel/dist/data_parallel.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

struct TrainOptions {
  std::string data;
  std::string out;
  std::string resume;
  std::int64_t steps = 1000;
  std::int64_t batch_size = 128;
  double lr = 1.5e-3;
  double min_lr = 1e-4;
  std::int64_t warmup = 50;
  double weight_decay = 0.1;
  double clip = 1.0;
  std::uint64_t seed = 0;
  std::string model_type = "qwen3";
  std::int64_t layers = 3;
  std::int64_t hidden = 128;
  // Eight heads of 16 find the operand digits faster than four of 32
  // (docs/training.md).
  std::int64_t heads = 8;
  std::int64_t kv_heads = 4;
  std::int64_t intermediate = 384;
  std::int64_t seq_len = 64;
  double rope_theta = 0;  // 0: the task's choice
  std::int64_t save_every = 200;
  std::int64_t stop_after = 0;
  bool json = false;
};

std::unique_ptr<Task> task_for(const TrainState& s) {
  if (s.task == "addition") return make_addition_task(s.seed);
  if (s.task == "text") return make_text_task(s.data, s.seq_len);
  throw_error(
      ErrorCode::BadConfig,
      fmt::format("[train] unknown task '{}' in the checkpoint", s.task));
}

std::string describe(const DecoderConfig& c, std::int64_t parameters) {
  return fmt::format(
      "{} decoder: {} layers, hidden {}, {} heads ({} key/value), MLP {}, "
      "{:.2f}M parameters",
      c.model_type, c.num_hidden_layers, c.hidden_size, c.num_attention_heads,
      c.num_key_value_heads, c.intermediate_size,
      static_cast<double>(parameters) / 1e6);
}

// Rows [rank * B / n, (rank + 1) * B / n) of a global batch: this rank's
// share under data parallelism (B divisible by n, checked at start).
Batch shard(const Batch& global, int rank, int ranks) {
  const std::int64_t rows = global.inputs.size(0) / ranks;
  return {global.inputs.slice(0, rank * rows, (rank + 1) * rows),
          global.targets.slice(0, rank * rows, (rank + 1) * rows)};
}

// FNV-1a of a file's bytes, streamed: ranks on different machines must
// train on the same text, not merely on files of the same name and size.
std::uint64_t file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  dist::Digest digest;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    digest.update({chunk.data(), static_cast<std::size_t>(in.gcount())});
  }
  return digest.value();
}

// Everything that must be equal on every rank of a data-parallel run for
// the replicas to stay equal: the model, the task and its data, the
// hyper-parameters, the step resumed from.
std::string run_identity(const TrainState& s, const CausalLM& lm) {
  const std::string data =
      s.data.empty() ? "" : fmt::format("{:016x}", file_digest(s.data));
  return fmt::format(
      "{} | task {} data digest {} seq {} | seed {} step {} of {} | "
      "batch {} lr {} min {} warmup {} decay {} betas {} {} clip {}",
      describe(lm.config(), lm.num_parameters()), s.task, data, s.seq_len,
      s.seed, s.step, s.total_steps, s.batch_size, s.lr, s.min_lr,
      s.warmup_steps, s.weight_decay, s.beta1, s.beta2, s.clip);
}

int run_train(const TrainOptions& o, const CLI::App& cmd) {
  namespace fs = std::filesystem;
  TrainState state;
  std::unique_ptr<CausalLM> lm;
  std::unique_ptr<Task> task;
  fs::path out = o.out;
  if (!o.resume.empty()) {
    for (const char* fixed :
         {"--data", "--batch-size", "--lr", "--min-lr", "--warmup",
          "--weight-decay", "--clip", "--seed", "--model-type", "--layers",
          "--hidden", "--heads", "--kv-heads", "--intermediate", "--seq-len",
          "--rope-theta"}) {
      if (cmd.count(fixed) > 0) {
        throw_error(ErrorCode::BadConfig,
                    fmt::format("[train] {} is fixed by the checkpoint "
                                "being resumed",
                                fixed));
      }
    }
    state = load_train_state(o.resume);
    // Private pages: the optimiser updates the mapped weights in place.
    lm = CausalLM::load(o.resume, MapMode::CopyOnWrite);
    task = task_for(state);
    if (cmd.count("--steps") > 0) state.total_steps = o.steps;
    if (state.total_steps < state.step) {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[train] the checkpoint has taken {} steps "
                              "already; --steps {} would go back",
                              state.step, state.total_steps));
    }
    if (out.empty()) out = o.resume;
  } else {
    state.task = o.data.empty() ? "addition" : "text";
    state.data = o.data.empty() ? "" : fs::absolute(o.data).string();
    state.seq_len = o.seq_len;
    state.seed = o.seed;
    state.total_steps = o.steps;
    state.batch_size = o.batch_size;
    state.lr = o.lr;
    state.min_lr = o.min_lr;
    state.warmup_steps = o.warmup;
    state.weight_decay = o.weight_decay;
    state.clip = o.clip;
    task = task_for(state);
    DecoderConfig config;
    config.model_type = o.model_type;
    config.num_hidden_layers = o.layers;
    config.hidden_size = o.hidden;
    config.num_attention_heads = o.heads;
    config.num_key_value_heads = o.kv_heads;
    config.head_dim = o.heads > 0 ? o.hidden / o.heads : 0;
    config.intermediate_size = o.intermediate;
    task->configure(config);
    if (o.rope_theta > 0) config.rope_theta = o.rope_theta;
    lm = std::make_unique<CausalLM>(config, o.seed);
    if (out.empty()) {
      out = fs::path("runs") /
            (o.data.empty() ? "addition" : fs::path(o.data).stem().string());
    }
  }
  if (state.batch_size <= 0 || state.total_steps <= 0 || !(state.lr > 0)) {
    throw_error(ErrorCode::BadConfig,
                "[train] --steps, --batch-size and --lr must be positive");
  }

  AdamOptions adam;
  adam.lr = state.lr;
  adam.weight_decay = state.weight_decay;
  adam.beta1 = state.beta1;
  adam.beta2 = state.beta2;
  AdamW optimizer(lm->parameters(), adam);
  if (!o.resume.empty()) {
    optimizer.load_state_dict(load_optimizer_state(o.resume, *lm));
  }
  const CosineSchedule schedule{state.lr, state.min_lr, state.warmup_steps,
                                state.total_steps};

  // Data parallelism (docs/distributed.md): under mpirun every rank holds a
  // replica, takes its rows of each global batch, and averages gradients;
  // rank 0 alone prints, evaluates and writes checkpoints.
  dist::ProcessGroup& group = dist::world();
  const int ranks = group.world_size();
  const bool leader = group.rank() == 0;
  if (ranks > 1) {
    group.check_agreement("the training run (model, data, hyper-parameters)",
                          run_identity(state, *lm));
    if (state.batch_size % ranks != 0) {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[train] --batch-size {} does not split into "
                              "{} equal shares (one per rank)",
                              state.batch_size, ranks));
    }
    dist::broadcast_parameters(group, lm->parameters());
  }
  double allreduce_seconds = 0.0;

  if (!o.json && leader) {
    fmt::print("{}\n", describe(lm->config(), lm->num_parameters()));
    fmt::print(
        "task: {}{}, batch {} x {} tokens, {} threads{}\n", state.task,
        state.data.empty() ? "" : " (" + state.data + ")", state.batch_size,
        task->sequence_length(), get_num_threads(),
        state.step > 0 ? fmt::format(", resuming at step {}", state.step) : "");
    if (ranks > 1) {
      fmt::print("data parallel: {} ranks ({}), {} sequences each\n", ranks,
                 group.backend(), state.batch_size / ranks);
    }
    std::fflush(stdout);
  }

  // The numerics check guards the forward pass, the loss and the optimiser
  // step; a non-finite loss stops training before anything is saved.
  CheckNumericsGuard numerics(true);
  std::int64_t saved_step = -1;
  const double tokens_per_step =
      static_cast<double>(state.batch_size * task->sequence_length());
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t first_step = state.step;
  {
    // Only rank 0 draws progress (the others' would interleave with it).
    Progress progress(state.total_steps, "tok", 50, leader);
    try {
      const std::int64_t stop_at =
          o.stop_after > 0
              ? std::min(state.total_steps, state.step + o.stop_after)
              : state.total_steps;
      while (state.step < stop_at) {
        optimizer.set_lr(schedule.lr_at(state.step));
        const Batch global =
            task->batch(state.seed, state.step, state.batch_size);
        const Batch batch =
            ranks > 1 ? shard(global, group.rank(), ranks) : global;
        Variable loss = cross_entropy(lm->forward(batch.inputs), batch.targets);
        double value = 0.0;
        if (ranks > 1) {
          // The loss is the mean over the scored tokens of the whole
          // batch: this rank's mean weighted by its share of them, so that
          // the averaged gradients are the global batch's gradient.
          // One collective sums the ranks' loss sums and scored counts.
          const double local =
              sum(ne(batch.targets, -100)).to(DType::F64).item<double>();
          Tensor totals =
              from_vector<double>({loss.item<double>() * local, local});
          group.all_reduce(totals, dist::ReduceOp::Sum);
          const double scored = totals.at<double>({1});
          value = totals.at<double>({0}) / scored;
          loss = mul(loss, local * ranks / scored);
        } else {
          value = loss.item<double>();
        }
        if (!std::isfinite(value)) {
          throw_error(ErrorCode::NonFinite,
                      fmt::format("[train] the loss is {} at step {}", value,
                                  state.step + 1));
        }
        loss.backward();
        if (ranks > 1) {
          allreduce_seconds +=
              dist::all_reduce_gradients(group, optimizer.parameters());
        }
        if (state.clip > 0) {
          clip_grad_norm(optimizer.parameters(), state.clip);
        }
        optimizer.step();
        optimizer.zero_grad();
        ++state.step;
        state.losses.push_back(value);
        progress.update(
            state.step,
            static_cast<double>(state.step - first_step) * tokens_per_step,
            fmt::format("loss {:.4f}", value));
        if (leader && o.save_every > 0 && state.step % o.save_every == 0 &&
            state.step < state.total_steps) {
          save_checkpoint(out, *lm, optimizer, state);
          saved_step = state.step;
        }
      }
    } catch (const NumericsError& e) {
      progress.finish();
      const std::string kept =
          saved_step >= 0
              ? fmt::format("the checkpoint of step {} in '{}' is intact",
                            saved_step, out.string())
          : !o.resume.empty()
              ? fmt::format("the checkpoint in '{}' is intact", o.resume)
              : std::string("no checkpoint was written");
      throw_error(ErrorCode::NonFinite,
                  fmt::format("{}; training stopped ({}). Try a lower --lr.",
                              e.message(), kept));
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // The other ranks' replicas equal rank 0's: their work is done.
  if (!leader) return 0;
  if (state.step < state.total_steps) {
    // Stopped early by --stop-after: save for --resume; evaluation waits
    // for the end of the run.
    save_checkpoint(out, *lm, optimizer, state);
    fmt::print(
        "stopped after step {} of {}; continue with: tessel train "
        "--resume {}\n",
        state.step, state.total_steps, out.string());
    return 0;
  }
  const Evaluation evaluation = task->evaluate(*lm);
  state.evaluation = evaluation.line;
  save_checkpoint(out, *lm, optimizer, state);
  const double final_loss = state.losses.empty() ? NAN : state.losses.back();
  const double tokens_per_second =
      seconds > 0 ? static_cast<double>(state.step - first_step) *
                        tokens_per_step / seconds
                  : 0.0;
  if (o.json) {
    fmt::print(
        "{{\"task\": \"{}\", \"steps\": {}, \"final_loss\": {:.6f}, "
        "\"evaluation\": \"{}\", \"metric\": {:.6f}, \"train_seconds\": "
        "{:.2f}, \"tokens_per_second\": {:.1f}, \"checkpoint\": \"{}\", "
        "\"ranks\": {}, \"allreduce_seconds_per_step\": {:.6f}}}\n",
        state.task, state.step, final_loss, evaluation.line, evaluation.value,
        seconds, tokens_per_second, out.string(), ranks,
        state.step > first_step
            ? allreduce_seconds / static_cast<double>(state.step - first_step)
            : 0.0);
  } else {
    fmt::print("{}", task->samples(*lm));
    fmt::print("trained {} steps in {:.1f} s ({} tok/s), final loss {:.4f}\n",
               state.step - first_step, seconds, format_rate(tokens_per_second),
               final_loss);
    fmt::print("{}\n", evaluation.line);
    fmt::print(
        "checkpoint: {} (config.json, model.safetensors, "
        "optimizer.safetensors, loss.svg)\n",
        out.string());
  }
  return 0;
}

}  // namespace

Runner add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Train a small decoder from scratch: by default on 3-digit addition "
      "(answers written least significant digit first), or on a text file");
  cmd->add_option("--data", o->data,
                  "Train on this file, byte by byte (the last tenth is held "
                  "out)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o->out,
                  "Checkpoint directory (default runs/addition or "
                  "runs/<data file stem>; the resumed one with --resume)");
  cmd->add_option("--resume", o->resume,
                  "Continue the run saved in this checkpoint directory")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--steps", o->steps, "Optimiser steps in all")
      ->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size, "Sequences per step")
      ->capture_default_str();
  cmd->add_option("--lr", o->lr, "Peak learning rate (AdamW)")
      ->capture_default_str();
  cmd->add_option("--min-lr", o->min_lr, "Learning rate at the end")
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Linear warm-up steps")
      ->capture_default_str();
  cmd->add_option("--weight-decay", o->weight_decay, "AdamW weight decay")
      ->capture_default_str();
  cmd->add_option("--clip", o->clip, "Gradient-norm clip (0: off)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of weights and data")
      ->capture_default_str();
  cmd->add_option("--model-type", o->model_type,
                  "qwen3 (per-head q/k norms) or llama")
      ->capture_default_str();
  cmd->add_option("--layers", o->layers, "Decoder layers")
      ->capture_default_str();
  cmd->add_option("--hidden", o->hidden, "Hidden size")->capture_default_str();
  cmd->add_option("--heads", o->heads, "Attention heads")
      ->capture_default_str();
  cmd->add_option("--kv-heads", o->kv_heads, "Key/value heads (GQA)")
      ->capture_default_str();
  cmd->add_option("--intermediate", o->intermediate, "MLP width")
      ->capture_default_str();
  cmd->add_option("--rope-theta", o->rope_theta,
                  "RoPE base (default: 10 for addition, 10000 for text)");
  cmd->add_option("--seq-len", o->seq_len, "Sequence length with --data")
      ->capture_default_str();
  cmd->add_option("--save-every", o->save_every,
                  "Checkpoint every N steps (and at the end; 0: end only)")
      ->capture_default_str();
  cmd->add_option("--stop-after", o->stop_after,
                  "Stop (and save) after this many steps of this session; "
                  "the schedule still spans --steps");
  cmd->add_flag("--json", o->json, "Print one JSON summary line");
  return [o, cmd] { return run_train(*o, *cmd); };
}

}  // namespace tessel::cli

// A training checkpoint directory:
//   config.json          the model (HuggingFace keys)
//   model.safetensors    the weights under their canonical names
//   optimizer.safetensors AdamW's step count and moments, named
//                        "<parameter name>.<buffer>"
//   trainer_state.json   the run: task, hyper-parameters, step, losses
//   loss.svg             the loss curve
// It is written into a staged directory beside the target and swapped in
// at once, so an interrupted save leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::cli {

struct TrainState {
  std::string task = "addition";
  std::string data;  // the text file of a "text" task
  std::int64_t seq_len = 0;
  std::uint64_t seed = 0;
  std::int64_t step = 0;  // optimiser steps taken
  std::int64_t total_steps = 0;
  std::int64_t batch_size = 0;
  double lr = 0;
  double min_lr = 0;
  std::int64_t warmup_steps = 0;
  double weight_decay = 0;
  // AdamW's betas: 0.95 for the second moment, as in most transformer
  // training, adapts faster than PyTorch's default 0.999.
  double beta1 = 0.9;
  double beta2 = 0.95;
  double clip = 0;
  std::vector<double> losses;  // one per step
  std::string evaluation;      // the last evaluation line
};

void save_checkpoint(const std::filesystem::path& dir, const CausalLM& lm,
                     const Optimizer& optimizer, const TrainState& state);

// The state and the optimiser's tensors (keyed as load_state_dict wants
// them, by parameter position) of a checkpoint directory; the model loads
// with CausalLM::load.
TrainState load_train_state(const std::filesystem::path& dir);
std::map<std::string, Tensor> load_optimizer_state(
    const std::filesystem::path& dir, const CausalLM& lm);

// The loss per step as an SVG line chart (log-scale y).
std::string loss_curve_svg(const std::vector<double>& losses,
                           const std::string& title);

}  // namespace tessel::cli

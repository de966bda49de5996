// Optimisers, learning-rate schedules and gradient clipping (PyTorch's
// update rules, so that a step matches torch.optim to rounding). Parameters
// are leaf Variables; steps update their values in place, outside the graph.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tessel/autograd/variable.hpp"
#include "tessel/ops/optimizer_update.hpp"

namespace tessel {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Variable> parameters, double lr);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Applies one update from the parameters' gradients (parameters without
  // a gradient are skipped); E2401 if the numerics check is on and an
  // updated value is not finite.
  virtual void step() = 0;
  // Forgets every parameter's gradient.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }
  std::int64_t steps_taken() const { return step_; }
  const std::vector<Variable>& parameters() const { return parameters_; }

  // The optimiser's state for a checkpoint: the step count ("step") and
  // per-parameter buffers ("<i>.<buffer>", i the parameter's position).
  // Loading checks every name, shape and dtype (E4001).
  std::map<std::string, Tensor> state_dict() const;
  void load_state_dict(const std::map<std::string, Tensor>& state);

 protected:
  // The named buffer of parameter i, created as zeros on first use.
  Tensor& buffer(std::size_t i, const std::string& name);
  void check_updated(const char* op) const;

  std::vector<Variable> parameters_;
  double lr_;
  std::int64_t step_ = 0;

 private:
  std::vector<std::map<std::string, Tensor>> buffers_;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;  // L2, added to the gradient
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Variable> parameters, SgdOptions options = {});
  void step() override;

 private:
  SgdOptions o_;
};

// AdamOptions (lr, betas, eps, weight_decay) is declared with the update
// rule itself, tessel/ops/optimizer_update.hpp.

// Adam: weight decay is L2 added to the gradient.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Variable> parameters, AdamOptions options = {});
  void step() override;

 protected:
  void adam_step(bool decoupled_decay);
  AdamOptions o_;
};

// AdamW: weight decay shrinks the parameter directly (decoupled), by
// lr * weight_decay per step; PyTorch's default decay is 0.01.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Variable> parameters,
        AdamOptions options = {.weight_decay = 0.01});
  void step() override;
};

// Linear warm-up from 0 to base_lr over warmup_steps, then a cosine decay
// to min_lr at total_steps (and min_lr after).
struct CosineSchedule {
  double base_lr = 1e-3;
  double min_lr = 0.0;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 1;
  double lr_at(std::int64_t step) const;
};

// Scales every gradient so that their joint L2 norm is at most max_norm;
// returns the norm before clipping (PyTorch's clip_grad_norm_).
double clip_grad_norm(const std::vector<Variable>& parameters, double max_norm);

}  // namespace tessel

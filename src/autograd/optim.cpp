#include "tessel/autograd/optim.hpp"

#include <cmath>
#include <numbers>

#include "core/check.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/optimizer_update.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

Optimizer::Optimizer(std::vector<Variable> parameters, double lr)
    : parameters_(std::move(parameters)),
      lr_(lr),
      buffers_(parameters_.size()) {
  for (const auto& p : parameters_) {
    TESSEL_CHECK(p.defined() && p.is_leaf() && p.requires_grad(), BadShape,
                 "optimizer",
                 "parameters must be leaf Variables that require gradients");
  }
}

void Optimizer::zero_grad() {
  for (auto& p : parameters_) p.zero_grad();
}

Tensor& Optimizer::buffer(std::size_t i, const std::string& name) {
  auto& slot = buffers_[i][name];
  if (!slot.defined())
    slot = zeros(parameters_[i].shape(), parameters_[i].dtype(),
                 parameters_[i].value().device());
  return slot;
}

void Optimizer::check_updated(const char* op) const {
  if (!check_numerics()) return;
  for (const auto& p : parameters_) check_finite(p.value(), op);
}

std::map<std::string, Tensor> Optimizer::state_dict() const {
  std::map<std::string, Tensor> out;
  out["step"] = full({}, step_, DType::I64);
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    for (const auto& [name, t] : buffers_[i])
      out[std::to_string(i) + "." + name] = t;
  }
  return out;
}

void Optimizer::load_state_dict(const std::map<std::string, Tensor>& state) {
  const auto it = state.find("step");
  TESSEL_CHECK(it != state.end() && it->second.numel() == 1, BadConfig,
               "load_state_dict", "the optimiser state has no step count");
  std::vector<std::map<std::string, Tensor>> loaded(parameters_.size());
  for (const auto& [key, t] : state) {
    if (key == "step") continue;
    const auto dot = key.find('.');
    std::size_t i = 0;
    bool numeric = dot != std::string::npos && dot > 0;
    for (std::size_t c = 0; numeric && c < dot; ++c)
      numeric = key[c] >= '0' && key[c] <= '9';
    if (numeric) i = std::stoul(key.substr(0, dot));
    TESSEL_CHECK(numeric && i < parameters_.size(), BadConfig,
                 "load_state_dict", "state entry '{}' names no parameter of {}",
                 key, parameters_.size());
    TESSEL_CHECK(t.shape() == parameters_[i].shape() &&
                     t.dtype() == parameters_[i].dtype(),
                 BadConfig, "load_state_dict",
                 "state entry '{}' is {} {} but parameter {} is {} {}", key,
                 dtype_name(t.dtype()), shape_string(t.shape()), i,
                 dtype_name(parameters_[i].dtype()),
                 shape_string(parameters_[i].shape()));
    loaded[i][key.substr(dot + 1)] = t.clone();
  }
  step_ = it->second.to(DType::I64).item<std::int64_t>();
  buffers_ = std::move(loaded);
}

SGD::SGD(std::vector<Variable> parameters, SgdOptions options)
    : Optimizer(std::move(parameters), options.lr), o_(options) {
  TESSEL_CHECK(!o_.nesterov || (o_.momentum > 0 && o_.dampening == 0),
               BadConfig, "SGD",
               "Nesterov momentum needs momentum > 0 and no dampening");
}

void SGD::step() {
  NoGradGuard no_grad;
  ++step_;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& p = parameters_[i];
    if (!p.grad().defined()) continue;
    Tensor d = p.grad();
    if (o_.weight_decay != 0) d = add(d, mul(p.value(), o_.weight_decay));
    if (o_.momentum != 0) {
      Tensor& buf = buffer(i, "momentum");
      // The first step starts the buffer at the gradient (PyTorch).
      if (step_ == 1) {
        buf.copy_(d);
      } else {
        buf.copy_(add(mul(buf, o_.momentum), mul(d, 1 - o_.dampening)));
      }
      d = o_.nesterov ? add(d, mul(buf, o_.momentum)) : buf;
    }
    sub_(p.value(), mul(d, lr_));
  }
  check_updated("sgd");
}

Adam::Adam(std::vector<Variable> parameters, AdamOptions options)
    : Optimizer(std::move(parameters), options.lr), o_(options) {}

void Adam::step() { adam_step(false); }

void Adam::adam_step(bool decoupled) {
  NoGradGuard no_grad;
  ++step_;
  AdamUpdate u{.options = o_, .decoupled = decoupled, .step = step_};
  u.options.lr = lr_;  // the schedule's current rate
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Variable& p = parameters_[i];
    if (!p.grad().defined()) continue;
    adam_update_(p.value(), p.grad(), buffer(i, "exp_avg"),
                 buffer(i, "exp_avg_sq"), u);
  }
  check_updated(decoupled ? "adamw" : "adam");
}

AdamW::AdamW(std::vector<Variable> parameters, AdamOptions options)
    : Adam(std::move(parameters), options) {}

void AdamW::step() { adam_step(true); }

double CosineSchedule::lr_at(std::int64_t step) const {
  if (warmup_steps > 0 && step < warmup_steps) {
    return base_lr * static_cast<double>(step + 1) /
           static_cast<double>(warmup_steps);
  }
  const std::int64_t span =
      std::max<std::int64_t>(total_steps - warmup_steps, 1);
  const double t = std::min(1.0, static_cast<double>(step - warmup_steps) /
                                     static_cast<double>(span));
  return min_lr +
         0.5 * (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * t));
}

double clip_grad_norm(const std::vector<Variable>& parameters,
                      double max_norm) {
  NoGradGuard no_grad;
  double total = 0.0;
  for (const auto& p : parameters) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    // f32 and f64 reduce in place (f32 sums with f64 block totals); 16-bit
    // and 8-bit gradients widen first so that their squares do not round.
    const bool wide = g.dtype() == DType::F32 || g.dtype() == DType::F64;
    total += sum_squares(wide ? g : g.to(DType::F32)).item<double>();
  }
  total = std::sqrt(total);
  const double scale = max_norm / (total + 1e-6);
  if (scale < 1.0) {
    for (const auto& p : parameters) {
      if (p.grad().defined()) p.set_grad(mul(p.grad(), scale).to(p.dtype()));
    }
  }
  return total;
}

}  // namespace tessel

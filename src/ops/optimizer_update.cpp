// Optimiser updates on plain tensors: validation and the scalars here; the
// fused pass in backends/cpu/optimizer.cpp, the op-by-op form for layouts
// and dtypes it does not take.
#include "tessel/ops/optimizer_update.hpp"

#include <cmath>

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"

namespace tessel {

void adam_update_(const Tensor& param, const Tensor& grad,
                  const Tensor& exp_avg, const Tensor& exp_avg_sq,
                  const AdamUpdate& update) {
  constexpr const char* kOp = "adam_update_";
  const AdamOptions& u = update.options;
  const ops::CheckedOperands checked(kOp,
                                     {&param, &grad, &exp_avg, &exp_avg_sq});
  TESSEL_CHECK(grad.shape() == param.shape() &&
                   exp_avg.shape() == param.shape() &&
                   exp_avg_sq.shape() == param.shape(),
               BadShape, kOp,
               "param {}, grad {}, exp_avg {} and exp_avg_sq {} must share "
               "one shape",
               shape_string(param.shape()), shape_string(grad.shape()),
               shape_string(exp_avg.shape()), shape_string(exp_avg_sq.shape()));
  TESSEL_CHECK(is_floating_point(param.dtype()) &&
                   exp_avg.dtype() == param.dtype() &&
                   exp_avg_sq.dtype() == param.dtype() &&
                   is_floating_point(grad.dtype()),
               BadDType, kOp,
               "needs float tensors, the state in the parameter's dtype; got "
               "param {}, grad {}, exp_avg {}, exp_avg_sq {}",
               dtype_name(param.dtype()), dtype_name(grad.dtype()),
               dtype_name(exp_avg.dtype()), dtype_name(exp_avg_sq.dtype()));
  TESSEL_CHECK(update.step >= 1, BadShape, kOp, "step counts from 1, got {}",
               update.step);
  const double t = static_cast<double>(update.step);
  const double step_size = u.lr / (1 - std::pow(u.beta1, t));
  const double c2_root = std::sqrt(1 - std::pow(u.beta2, t));
  const bool fused = param.dtype() == DType::F32 &&
                     grad.dtype() == DType::F32 && param.is_contiguous() &&
                     grad.is_contiguous() && exp_avg.is_contiguous() &&
                     exp_avg_sq.is_contiguous();
  if (fused) {
    AdamStep s;
    s.shrink = static_cast<float>(update.decoupled && u.weight_decay != 0
                                      ? 1 - u.lr * u.weight_decay
                                      : 1.0);
    s.l2 = static_cast<float>(update.decoupled ? 0.0 : u.weight_decay);
    s.keep1 = static_cast<float>(1 - u.beta1);
    s.beta2 = static_cast<float>(u.beta2);
    s.keep2 = static_cast<float>(1 - u.beta2);
    s.eps = static_cast<float>(u.eps);
    s.step_size = static_cast<float>(step_size);
    s.c2_root = static_cast<float>(c2_root);
    if (param.numel() > 0)
      ops::backend_of(param).adam_update(s, param, grad, exp_avg, exp_avg_sq);
    return;
  }
  // The same steps op by op (any float dtype, any layout).
  Tensor g = grad;
  if (u.weight_decay != 0) {
    if (update.decoupled) {
      mul_(param, 1 - u.lr * u.weight_decay);
    } else {
      g = add(g, mul(param, u.weight_decay));
    }
  }
  Tensor(exp_avg).copy_(add(exp_avg, mul(sub(g, exp_avg), 1 - u.beta1)));
  Tensor(exp_avg_sq)
      .copy_(add(mul(exp_avg_sq, u.beta2), mul(mul(g, g), 1 - u.beta2)));
  const Tensor denom = add(div(sqrt(exp_avg_sq), c2_root), u.eps);
  sub_(param, mul(div(exp_avg, denom), step_size));
}

}  // namespace tessel

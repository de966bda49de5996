#include "tessel/autograd/loss.hpp"

#include <limits>

#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

using autograd::Needs;
using autograd::record;

namespace {

// Targets as (rows) i64 with a validity mask, checked against C classes.
struct Targets {
  Tensor index;  // (rows, 1), ignored rows point at class 0
  Tensor valid;  // (rows, 1) bool
  std::int64_t count = 0;
};

Targets check_targets(const Tensor& targets, const Shape& lead,
                      std::int64_t classes, std::int64_t ignore_index,
                      const char* op) {
  TESSEL_CHECK(is_integral(targets.dtype()) && targets.dtype() != DType::Bool,
               BadDType, op, "targets must be integers, got {}",
               dtype_name(targets.dtype()));
  TESSEL_CHECK(
      targets.shape() == lead, BadShape, op,
      "targets {} must have the shape of the inputs without the class axis, {}",
      shape_string(targets.shape()), shape_string(lead));
  Targets t;
  const Tensor flat = targets.to(DType::I64).reshape({-1, 1}).contiguous();
  // Targets on meta have no values: none is checked or ignored (the count
  // only scales the mean).
  const bool has_values = !flat.device().is_meta();
  if (!has_values) t.count = flat.numel();
  const std::int64_t* p =
      has_values ? flat.const_data<std::int64_t>() : nullptr;
  for (std::int64_t i = 0; p != nullptr && i < flat.numel(); ++i) {
    if (p[i] == ignore_index) continue;
    TESSEL_CHECK(p[i] >= 0 && p[i] < classes, OutOfRange, op,
                 "target {} at row {} is outside the {} classes", p[i], i,
                 classes);
    ++t.count;
  }
  t.valid = ne(flat, ignore_index);
  t.index = where(t.valid, flat, zeros({}, DType::I64, flat.device()));
  return t;
}

Tensor reduce_rows(const Tensor& per_row, Reduction reduction,
                   std::int64_t count, const Shape& lead) {
  switch (reduction) {
    case Reduction::None: return per_row.reshape(lead);
    case Reduction::Sum: return sum(per_row);
    case Reduction::Mean: break;
  }
  return div(sum(per_row),
             static_cast<double>(count));  // 0 / 0 = NaN if all ignored
}

// The weight of each row's gradient under the reduction.
Tensor row_weight(const Tensor& g, Reduction reduction, std::int64_t count,
                  const Tensor& valid) {
  Tensor w =
      reduction == Reduction::None ? g.reshape({-1, 1}) : g.reshape({1, 1});
  if (reduction == Reduction::Mean) w = div(w, static_cast<double>(count));
  return mul(w, valid.to(g.dtype()));
}

}  // namespace

Variable cross_entropy(const Variable& logits, const Tensor& targets,
                       const CrossEntropyOptions& o) {
  const char* op = "cross_entropy";
  TESSEL_CHECK(logits.rank() >= 1, BadShape, op,
               "logits need a class axis, got {}",
               shape_string(logits.shape()));
  TESSEL_CHECK(o.label_smoothing >= 0 && o.label_smoothing <= 1, BadShape, op,
               "label_smoothing must be in [0, 1], got {}", o.label_smoothing);
  const std::int64_t classes = logits.shape()[logits.rank() - 1];
  const Shape lead(logits.shape().begin(), logits.shape().end() - 1);
  const Targets t = check_targets(targets, lead, classes, o.ignore_index, op);
  const Tensor xv = logits.value();
  const DType compute = xv.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Tensor logp;
  {
    // The loss is what the numerics check judges, and names.
    CheckNumericsGuard inner(false);
    logp = log_softmax(xv.to(compute).reshape({-1, classes}), -1);
  }
  // -(1 - s) logp[t] - (s / C) sum_c logp.
  const double s = o.label_smoothing;
  Tensor per_row = mul(gather_elements(logp, t.index, 1), -(1 - s));
  if (s > 0)
    per_row = sub(per_row,
                  mul(sum(logp, {1}, true), s / static_cast<double>(classes)));
  per_row = mul(per_row, t.valid.to(compute));
  const Tensor loss = reduce_rows(per_row, o.reduction, t.count, lead);
  check_finite(loss, op);
  const Reduction reduction = o.reduction;
  const std::int64_t count = t.count;
  return record(
      op, loss.to(xv.dtype()), {logits},
      [logp, t, s, classes, reduction, count, xv](const Tensor& g,
                                                  const Needs&) {
        // softmax - target distribution, per row weight.
        Tensor target = scatter(
            zeros(logp.shape(), logp.dtype(), logp.device()), 1, t.index,
            full(t.index.shape(), 1 - s, logp.dtype(), logp.device()));
        if (s > 0) target = add(target, s / static_cast<double>(classes));
        const Tensor w =
            row_weight(g.to(logp.dtype()), reduction, count, t.valid);
        return autograd::one_grad(
            mul(sub(exp(logp), target), w).reshape(xv.shape()).to(xv.dtype()));
      });
}

Variable nll_loss(const Variable& log_probs, const Tensor& targets,
                  std::int64_t ignore_index, Reduction reduction) {
  const char* op = "nll_loss";
  TESSEL_CHECK(log_probs.rank() >= 1, BadShape, op,
               "inputs need a class axis, got {}",
               shape_string(log_probs.shape()));
  const std::int64_t classes = log_probs.shape()[log_probs.rank() - 1];
  const Shape lead(log_probs.shape().begin(), log_probs.shape().end() - 1);
  const Targets t = check_targets(targets, lead, classes, ignore_index, op);
  const Variable picked =
      gather_elements(log_probs.reshape({-1, classes}), t.index, 1);
  const Variable per_row = mul(picked, neg(t.valid.to(log_probs.dtype())));
  Variable loss;
  switch (reduction) {
    case Reduction::None: loss = per_row.reshape(lead); break;
    case Reduction::Sum: loss = sum(per_row); break;
    case Reduction::Mean:
      loss = div(sum(per_row), Scalar(static_cast<double>(t.count)));
      break;
  }
  check_finite(loss.value(), op);
  return loss;
}

Variable mse_loss(const Variable& input, const Variable& target,
                  Reduction reduction) {
  const Variable d = sub(input, target);
  const Variable sq = mul(d, d);
  const Variable loss = reduction == Reduction::None  ? sq
                        : reduction == Reduction::Sum ? sum(sq)
                                                      : mean(sq);
  check_finite(loss.value(), "mse_loss");
  return loss;
}

}  // namespace tessel

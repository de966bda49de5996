// Normalisation ops: validation, statistics dtype and layout here; the row
// kernels in backends/cpu/norm.cpp.
#include "tessel/ops/norm.hpp"

#include <limits>

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// The dtype the kernels run in: f64, f32, bf16 and f16 natively, f8 via f32.
DType kernel_dtype(const Tensor& x, const char* op) {
  const ops::CheckedOperands checked(op, x, "the input");
  TESSEL_CHECK(is_floating_point(x.dtype()), BadDType, op,
               "needs a float input, got {}", dtype_name(x.dtype()));
  return x.dtype() == DType::F8E4M3FN || x.dtype() == DType::F8E5M2 ? DType::F32
                                                                    : x.dtype();
}

DType stats_dtype(DType kernel) {
  return kernel == DType::F64 ? DType::F64 : DType::F32;
}

std::int64_t product(std::span<const std::int64_t> extents) {
  std::int64_t p = 1;
  for (auto e : extents) p *= e;
  return p;
}

// weight or bias broadcast to `target`, contiguous, in the statistics dtype.
Tensor affine_param(const Tensor& p, const Shape& target, DType stats,
                    Device device, const char* what, const char* op) {
  if (!p.defined()) return {};
  TESSEL_CHECK(p.device() == device, DeviceMismatch, op,
               "{} is on {} but the input on {}", what, p.device().str(),
               device.str());
  bool fits = p.rank() <= static_cast<std::int64_t>(target.size());
  for (std::int64_t i = 1; fits && i <= p.rank(); ++i) {
    const std::int64_t e = p.shape()[p.rank() - i];
    fits = e == 1 || e == target[target.size() - static_cast<std::size_t>(i)];
  }
  TESSEL_CHECK(fits, BadShape, op, "{} {} does not fit the normalised shape {}",
               what, shape_string(p.shape()), shape_string(target));
  return p.to(stats).expand(target).contiguous();
}

struct RowsPlan {
  NormRows rows;
  Shape stats_shape;
};

NormResult run(const Tensor& x, const RowsPlan& plan, const Tensor& weight,
               const Tensor& bias, const char* op, bool with_mean) {
  const DType kernel = kernel_dtype(x, op);
  const DType stats = stats_dtype(kernel);
  NormResult r;
  const Tensor xk = x.to(kernel).contiguous();
  Tensor y = empty(x.shape(), kernel, x.device());
  r.rstd = empty(plan.stats_shape, stats, x.device());
  if (with_mean) r.mean = empty(plan.stats_shape, stats, x.device());
  if (plan.rows.n == 0) {
    // Statistics of nothing: NaN, as a mean of no values is.
    if (with_mean) r.mean.fill_(std::numeric_limits<double>::quiet_NaN());
    r.rstd.fill_(std::numeric_limits<double>::quiet_NaN());
  } else if (plan.rows.rows > 0) {
    ops::backend_of(y).normalize_rows(plan.rows, xk, y, weight, bias, r.mean,
                                      r.rstd);
  }
  r.y = kernel == x.dtype() ? y : y.to(x.dtype());
  check_finite(r.y, op);
  return r;
}

NormResult trailing_norm(NormKind kind, const Tensor& x, const Tensor& weight,
                         const Tensor& bias, double eps, std::int64_t axis,
                         const char* op) {
  const DType stats = stats_dtype(kernel_dtype(x, op));
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  const std::span<const std::int64_t> shape(x.shape().data(), x.shape().size());
  const Shape normalised(shape.begin() + a, shape.end());
  RowsPlan plan;
  plan.rows.kind = kind;
  plan.rows.rows = product(shape.first(static_cast<std::size_t>(a)));
  plan.rows.n = product(shape.subspan(static_cast<std::size_t>(a)));
  plan.rows.eps = eps;
  plan.stats_shape = Shape(shape.begin(), shape.begin() + a);
  for (std::int64_t d = a; d < x.rank(); ++d) plan.stats_shape.push_back(1);
  return run(x, plan,
             affine_param(weight, normalised, stats, x.device(), "weight", op),
             affine_param(bias, normalised, stats, x.device(), "bias", op), op,
             kind == NormKind::Layer);
}

NormGradients trailing_norm_backward(NormKind kind, const Tensor& grad_out,
                                     const Tensor& x, const NormResult& stats,
                                     const Tensor& weight, const Tensor& bias,
                                     std::int64_t axis, const char* op) {
  const bool centred = kind == NormKind::Layer;
  const ops::CheckedOperands checked(op, {&grad_out, &x, &stats.rstd});
  TESSEL_CHECK(grad_out.shape() == x.shape(), BadShape, op,
               "grad_out {} must have the input's shape {}",
               shape_string(grad_out.shape()), shape_string(x.shape()));
  TESSEL_CHECK(is_floating_point(grad_out.dtype()), BadDType, op,
               "needs a float grad_out, got {}", dtype_name(grad_out.dtype()));
  const DType compute = stats_dtype(kernel_dtype(x, op));
  const std::int64_t a = normalize_axis(axis, x.rank(), op);
  const std::span<const std::int64_t> shape(x.shape().data(), x.shape().size());
  const Shape normalised(shape.begin() + a, shape.end());
  NormRows rows;
  rows.kind = kind;
  rows.rows = product(shape.first(static_cast<std::size_t>(a)));
  rows.n = product(shape.subspan(static_cast<std::size_t>(a)));
  TESSEL_CHECK(stats.rstd.numel() == rows.rows &&
                   (!centred ||
                    (stats.mean.defined() && stats.mean.numel() == rows.rows)),
               BadShape, op,
               "the statistics must hold one value per row ({} rows); got "
               "rstd {}{}",
               rows.rows, shape_string(stats.rstd.shape()),
               centred ? "" : " (RMS norm needs no mean)");
  const Device device = x.device();
  auto stat = [&](const Tensor& t) { return t.to(compute).contiguous(); };
  NormGradients g;
  g.x = empty(x.shape(), compute, device);
  if (weight.defined()) g.weight = empty(normalised, compute, device);
  if (bias.defined()) g.bias = empty(normalised, compute, device);
  if (rows.rows > 0 && rows.n > 0) {
    ops::backend_of(g.x).normalize_rows_backward(
        rows, x.to(compute).contiguous(),
        affine_param(weight, normalised, compute, device, "weight", op),
        centred ? stat(stats.mean) : Tensor(), stat(stats.rstd),
        grad_out.to(compute).contiguous(), g.x, g.weight, g.bias);
  } else {
    // No rows: the sums are zero. Empty rows: no elements to differentiate.
    if (g.weight.defined()) g.weight.fill_(0);
    if (g.bias.defined()) g.bias.fill_(0);
  }
  g.x = g.x.to(x.dtype());
  return g;
}

}  // namespace

NormGradients layer_norm_backward(const Tensor& grad_out, const Tensor& x,
                                  const NormResult& stats, const Tensor& weight,
                                  const Tensor& bias, std::int64_t axis) {
  return trailing_norm_backward(NormKind::Layer, grad_out, x, stats, weight,
                                bias, axis, "layer_norm_backward");
}

NormGradients rms_norm_backward(const Tensor& grad_out, const Tensor& x,
                                const NormResult& stats, const Tensor& weight,
                                std::int64_t axis) {
  return trailing_norm_backward(NormKind::Rms, grad_out, x, stats, weight,
                                Tensor(), axis, "rms_norm_backward");
}

NormResult layer_norm_with_stats(const Tensor& x, const Tensor& weight,
                                 const Tensor& bias, double eps,
                                 std::int64_t axis) {
  return trailing_norm(NormKind::Layer, x, weight, bias, eps, axis,
                       "layer_norm");
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  double eps, std::int64_t axis) {
  return layer_norm_with_stats(x, weight, bias, eps, axis).y;
}

NormResult rms_norm_with_stats(const Tensor& x, const Tensor& weight,
                               double eps, std::int64_t axis) {
  return trailing_norm(NormKind::Rms, x, weight, Tensor(), eps, axis,
                       "rms_norm");
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps,
                std::int64_t axis) {
  return rms_norm_with_stats(x, weight, eps, axis).y;
}

NormResult group_norm_with_stats(const Tensor& x, std::int64_t groups,
                                 const Tensor& weight, const Tensor& bias,
                                 double eps) {
  const char* op = "group_norm";
  const DType stats = stats_dtype(kernel_dtype(x, op));
  TESSEL_CHECK(x.rank() >= 2, BadShape, op, "needs (N, C, ...) input, got {}",
               shape_string(x.shape()));
  const std::int64_t channels = x.shape()[1];
  TESSEL_CHECK(groups >= 1 && channels % groups == 0, BadShape, op,
               "{} channels of {} are not divisible into {} groups", channels,
               shape_string(x.shape()), groups);
  const std::span<const std::int64_t> shape(x.shape().data(), x.shape().size());
  const std::int64_t spatial = product(shape.subspan(2));
  RowsPlan plan;
  plan.rows.kind = NormKind::Layer;
  plan.rows.rows = x.shape()[0] * groups;
  plan.rows.n = channels / groups * spatial;
  plan.rows.eps = eps;
  plan.rows.segment = spatial;
  plan.rows.weight_period = groups;
  plan.stats_shape = Shape{x.shape()[0], groups};
  const Shape per_channel{channels};
  return run(x, plan,
             affine_param(weight, per_channel, stats, x.device(), "weight", op),
             affine_param(bias, per_channel, stats, x.device(), "bias", op), op,
             true);
}

Tensor group_norm(const Tensor& x, std::int64_t groups, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return group_norm_with_stats(x, groups, weight, bias, eps).y;
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     double eps) {
  TESSEL_CHECK(x.defined() && x.rank() >= 2, BadShape, "instance_norm",
               "needs (N, C, ...) input, got {}",
               x.defined() ? shape_string(x.shape()) : "undefined");
  return group_norm(x, x.shape()[1], weight, bias, eps);
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean,
                  const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const char* op = "batch_norm";
  const DType kernel = kernel_dtype(x, op);
  const DType stats = stats_dtype(kernel);
  TESSEL_CHECK(x.rank() >= 2, BadShape, op, "needs (N, C, ...) input, got {}",
               shape_string(x.shape()));
  const std::int64_t channels = x.shape()[1];
  const Shape per_channel{channels};
  auto param = [&](const Tensor& p, const char* what) {
    TESSEL_CHECK(p.defined(), BadShape, op, "{} is required", what);
    TESSEL_CHECK(p.rank() == 1 && p.shape()[0] == channels, BadShape, op,
                 "{} {} must have one value per channel of {}", what,
                 shape_string(p.shape()), shape_string(x.shape()));
    return p.to(stats);
  };
  const Tensor mean = param(running_mean, "running_mean");
  const Tensor var = param(running_var, "running_var");
  // y = x * scale + shift per channel, with the constants folded first.
  Tensor scale = rsqrt(add(var, eps));
  if (weight.defined()) scale = mul(scale, param(weight, "weight"));
  Tensor shift = neg(mul(mean, scale));
  if (bias.defined()) shift = add(shift, param(bias, "bias"));
  Shape channel_shape(static_cast<std::size_t>(x.rank() - 1), 1);
  channel_shape[0] = channels;
  const Tensor y = fma(x.to(stats), scale.reshape(channel_shape),
                       shift.reshape(channel_shape))
                       .to(x.dtype());
  check_finite(y, op);
  return y;
}

}  // namespace tessel

// Gradients of the normalisation layers, from the saved statistics.
#include "tessel/ops/norm.hpp"
#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

using autograd::Needs;
using autograd::record;

namespace {

// d/dx of y = xhat * w + b with xhat = (x - mean) * rstd over the last
// axis of (rows, n) views: rstd * (gh - mean(gh) - xhat mean(gh xhat)),
// gh = g * w. RMS norm has no mean term.
Tensor normalized_input_grad(const Tensor& gh, const Tensor& xhat,
                             const Tensor& rstd, bool centred) {
  Tensor inner = sub(gh, mul(xhat, mean(mul(gh, xhat), {-1}, true)));
  if (centred) inner = sub(inner, mean(gh, {-1}, true));
  return mul(inner, rstd);
}

// Layer and RMS norm over the trailing axes from `axis`.
Variable trailing_norm(const char* op, bool centred, const Variable& x,
                       const Variable& weight, const Variable& bias, double eps,
                       std::int64_t axis) {
  const Tensor xv = x.value();
  const Tensor wv = weight.defined() ? weight.value() : Tensor();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const NormResult r = centred ? layer_norm_with_stats(xv, wv, bv, eps, axis)
                               : rms_norm_with_stats(xv, wv, eps, axis);
  std::vector<Variable> inputs = {x, weight, bias};
  return record(
      op, r.y, inputs,
      [xv, wv, bv, r, centred, axis](const Tensor& g, const Needs& n) {
        const NormGradients d =
            centred
                ? layer_norm_backward(g, xv, r, wv, n[2] ? bv : Tensor(), axis)
                : rms_norm_backward(g, xv, r, wv, axis);
        std::vector<Tensor> grads(3);
        if (n[0]) grads[0] = d.x;
        if (n[1]) grads[1] = autograd::grad_for(d.weight, wv);
        if (n[2]) grads[2] = autograd::grad_for(d.bias, bv);
        return grads;
      });
}

}  // namespace

Variable layer_norm(const Variable& x, const Variable& weight,
                    const Variable& bias, double eps, std::int64_t axis) {
  return trailing_norm("layer_norm", true, x, weight, bias, eps, axis);
}

Variable rms_norm(const Variable& x, const Variable& weight, double eps,
                  std::int64_t axis) {
  return trailing_norm("rms_norm", false, x, weight, Variable(), eps, axis);
}

Variable group_norm(const Variable& x, std::int64_t groups,
                    const Variable& weight, const Variable& bias, double eps) {
  const Tensor xv = x.value();
  const Tensor wv = weight.defined() ? weight.value() : Tensor();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const NormResult r = group_norm_with_stats(xv, groups, wv, bv, eps);
  return record(
      "group_norm", r.y, {x, weight, bias},
      [xv, wv, bv, r, groups](const Tensor& g, const Needs& n) {
        const DType stats = r.rstd.dtype();
        const std::int64_t batch = xv.shape()[0], channels = xv.shape()[1];
        const std::int64_t spatial =
            xv.numel() / std::max<std::int64_t>(batch * channels, 1);
        // (N, G, C/G, S): statistics per (N, G), weights per channel.
        const Shape grouped = {batch, groups, channels / groups, spatial};
        const Tensor x4 = xv.to(stats).reshape(grouped);
        const Tensor mean4 = r.mean.reshape({batch, groups, 1, 1});
        const Tensor rstd4 = r.rstd.reshape({batch, groups, 1, 1});
        const Tensor xhat = mul(sub(x4, mean4), rstd4);
        const Tensor g4 = g.to(stats).reshape(grouped);
        const Shape per_channel = {1, groups, channels / groups, 1};
        std::vector<Tensor> grads(3);
        if (n[0]) {
          const Tensor gh =
              wv.defined() ? mul(g4, wv.to(stats).reshape(per_channel)) : g4;
          const Tensor rows_gh = gh.reshape({batch * groups, -1});
          const Tensor rows_xhat = xhat.reshape({batch * groups, -1});
          grads[0] =
              normalized_input_grad(rows_gh, rows_xhat,
                                    r.rstd.reshape({batch * groups, 1}), true)
                  .reshape(xv.shape())
                  .to(xv.dtype());
        }
        if (n[1])
          grads[1] =
              sum(mul(g4, xhat), {0, 3}).reshape({channels}).to(wv.dtype());
        if (n[2]) grads[2] = sum(g4, {0, 3}).reshape({channels}).to(bv.dtype());
        return grads;
      });
}

Variable instance_norm(const Variable& x, const Variable& weight,
                       const Variable& bias, double eps) {
  TESSEL_CHECK(x.rank() >= 2, BadShape, "instance_norm",
               "needs (N, C, ...) input, got {}", shape_string(x.shape()));
  return group_norm(x, x.shape()[1], weight, bias, eps);
}

Variable batch_norm(const Variable& x, const Tensor& running_mean,
                    const Tensor& running_var, const Variable& weight,
                    const Variable& bias, double eps) {
  const Tensor xv = x.value();
  const Tensor wv = weight.defined() ? weight.value() : Tensor();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const Tensor y = batch_norm(xv, running_mean, running_var, wv, bv, eps);
  return record(
      "batch_norm", y, {x, weight, bias},
      [xv, wv, bv, running_mean, running_var, eps](const Tensor& g,
                                                   const Needs& n) {
        const DType stats = xv.dtype() == DType::F64 ? DType::F64 : DType::F32;
        Shape per_channel(static_cast<std::size_t>(xv.rank() - 1), 1);
        per_channel[0] = xv.shape()[1];
        const Tensor inv =
            rsqrt(add(running_var.to(stats), eps)).reshape(per_channel);
        const Tensor g1 = g.to(stats);
        Axes others = {0};
        for (std::int64_t d = 2; d < xv.rank(); ++d) others.push_back(d);
        std::vector<Tensor> grads(3);
        if (n[0]) {
          const Tensor scale =
              wv.defined() ? mul(inv, wv.to(stats).reshape(per_channel)) : inv;
          grads[0] = mul(g1, scale).to(xv.dtype());
        }
        if (n[1]) {
          const Tensor xhat = mul(
              sub(xv.to(stats), running_mean.to(stats).reshape(per_channel)),
              inv);
          grads[1] = sum(mul(g1, xhat), others).to(wv.dtype());
        }
        if (n[2]) grads[2] = sum(g1, others).to(bv.dtype());
        return grads;
      });
}

}  // namespace tessel

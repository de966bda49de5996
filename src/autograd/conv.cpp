// Gradients of convolution and pooling.
#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

using autograd::Needs;
using autograd::one_grad;
using autograd::record;

namespace {

using rules::Ints;

// (N, S..., C) <-> (N, C, S...) and (K..., A, B) <-> (B, A, K...).
Tensor data_first(const Tensor& t, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return t;
  Ints perm = {0, t.rank() - 1};
  for (std::int64_t d = 1; d + 1 < t.rank(); ++d) perm.push_back(d);
  return t.permute(std::span<const std::int64_t>(perm));
}
Tensor data_back(const Tensor& t, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return t;
  Ints perm = {0};
  for (std::int64_t d = 2; d < t.rank(); ++d) perm.push_back(d);
  perm.push_back(1);
  return t.permute(std::span<const std::int64_t>(perm)).contiguous();
}
Tensor weights_first(const Tensor& w, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return w;
  const std::int64_t r = w.rank();
  Ints perm = {r - 1, r - 2};
  for (std::int64_t d = 0; d + 2 < r; ++d) perm.push_back(d);
  return w.permute(std::span<const std::int64_t>(perm));
}
Tensor weights_back(const Tensor& w, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return w;
  const std::int64_t r = w.rank();
  Ints perm;
  for (std::int64_t d = 2; d < r; ++d) perm.push_back(d);
  perm.push_back(1);
  perm.push_back(0);
  return w.permute(std::span<const std::int64_t>(perm)).contiguous();
}

// The weight gradient of a channels-first convolution x (N, C, S) ->
// dy (N, O, S'), weights (O, C/groups, K): per group, a convolution of x
// (batch and channels swapped) with dy as the filter, strides and
// dilations exchanged, cropped to the kernel.
Tensor conv_weight_grad(const Tensor& x, const Tensor& dy, const Ints& kernel,
                        const Ints& stride, const Ints& dilation,
                        const Ints& padding, std::int64_t groups) {
  const std::int64_t c = x.shape()[1], o = dy.shape()[1];
  const std::int64_t cg = c / groups, og = o / groups;
  std::vector<Tensor> parts;
  for (std::int64_t g = 0; g < groups; ++g) {
    const Tensor xg =
        x.slice(1, g * cg, (g + 1) * cg).transpose(0, 1);  // (Cg, N, S)
    const Tensor dyg =
        dy.slice(1, g * og, (g + 1) * og).transpose(0, 1);  // (Og, N, S')
    ConvOptions swap;
    swap.stride = dilation;
    swap.dilation = stride;
    swap.padding = padding;
    Tensor w =
        conv(xg.contiguous(), dyg.contiguous(), {}, swap);  // (Cg, Og, K' >= K)
    for (std::size_t d = 0; d < kernel.size(); ++d) {
      w = w.slice(static_cast<std::int64_t>(d) + 2, 0, kernel[d]);
    }
    parts.push_back(w.transpose(0, 1));  // (Og, Cg, K)
  }
  return groups == 1 ? parts[0].contiguous() : concat(parts, 0);
}

}  // namespace

Variable conv(const Variable& x, const Variable& weight, const Variable& bias,
              const ConvOptions& o) {
  const Tensor xv = x.value(), wv = weight.value();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const Tensor y = conv(xv, wv, bv, o);
  std::vector<Variable> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record(
      "conv", y, inputs, [xv, wv, bv, o](const Tensor& g, const Needs& n) {
        const Tensor x1 = data_first(xv, o.layout),
                     w1 = weights_first(wv, o.layout);
        const Tensor g1 = data_first(g, o.layout);
        const std::size_t sp = static_cast<std::size_t>(xv.rank() - 2);
        const Ints pads = conv_padding(xv.shape(), wv.shape(), o);
        const Ints stride = rules::per_axis(o.stride, sp, 1, "stride", "conv"),
                   dilation =
                       rules::per_axis(o.dilation, sp, 1, "dilation", "conv");
        std::vector<Tensor> grads(n.size());
        if (n[0]) {
          // The adjoint: a transposed convolution with the same weights; the
          // output_padding restores the rows the stride dropped.
          ConvOptions t;
          t.stride = stride;
          t.dilation = dilation;
          t.padding = pads;
          t.groups = o.groups;
          t.output_padding.resize(sp);
          for (std::size_t d = 0; d < sp; ++d) {
            const auto axis = static_cast<std::int64_t>(d) + 2;
            t.output_padding[d] = rules::unread_by_stride(
                x1.shape()[axis], g1.shape()[axis], stride[d],
                rules::window_span(w1.shape()[axis], dilation[d]), pads[d],
                pads[sp + d]);
          }
          grads[0] =
              data_back(conv_transpose(g1, w1, {}, t), o.layout).to(xv.dtype());
        }
        if (n[1]) {
          Ints kernel(w1.shape().begin() + 2, w1.shape().end());
          const Tensor gw = conv_weight_grad(x1.to(g.dtype()), g1, kernel,
                                             stride, dilation, pads, o.groups);
          grads[1] = weights_back(gw, o.layout).to(wv.dtype());
        }
        if (n.size() > 2 && n[2]) {
          Axes axes;
          for (std::int64_t d = 0; d < g1.rank(); ++d) {
            if (d != 1) axes.push_back(d);
          }
          grads[2] = sum(g1, axes).to(bv.dtype());
        }
        return grads;
      });
}

Variable conv1d(const Variable& x, const Variable& w, const Variable& b,
                const ConvOptions& o) {
  TESSEL_CHECK(x.rank() == 3, BadShape, "conv1d", "needs a 3-D input, got {}",
               shape_string(x.shape()));
  return conv(x, w, b, o);
}
Variable conv2d(const Variable& x, const Variable& w, const Variable& b,
                const ConvOptions& o) {
  TESSEL_CHECK(x.rank() == 4, BadShape, "conv2d", "needs a 4-D input, got {}",
               shape_string(x.shape()));
  return conv(x, w, b, o);
}

Variable conv_transpose(const Variable& x, const Variable& weight,
                        const Variable& bias, const ConvOptions& o) {
  TESSEL_CHECK(
      o.auto_pad == AutoPad::Explicit && o.output_shape.empty(), BadShape,
      "conv_transpose",
      "gradients need explicit padding and output_padding (not auto_pad or "
      "output_shape)");
  const Tensor xv = x.value(), wv = weight.value();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const Tensor y = conv_transpose(xv, wv, bv, o);
  std::vector<Variable> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record(
      "conv_transpose", y, inputs,
      [xv, wv, bv, o](const Tensor& g, const Needs& n) {
        const Tensor x1 = data_first(xv, o.layout),
                     w1 = weights_first(wv, o.layout);
        Tensor g1 = data_first(g, o.layout);
        const std::size_t sp = static_cast<std::size_t>(xv.rank() - 2);
        constexpr const char* kOp = "conv_transpose";
        const Ints stride = rules::per_axis(o.stride, sp, 1, "stride", kOp),
                   dilation =
                       rules::per_axis(o.dilation, sp, 1, "dilation", kOp);
        const auto [begin, end] = rules::explicit_padding(o.padding, sp, kOp);
        const Ints out_pad =
            rules::per_axis(o.output_padding, sp, 0, "output_padding", kOp, 0);
        // The adjoint is a convolution of g with padding (begin, end -
        // out_pad); where that is negative, g is cropped first.
        std::vector<std::pair<std::int64_t, std::int64_t>> crop(
            static_cast<std::size_t>(g1.rank()));
        Ints pads(2 * sp);
        for (std::size_t d = 0; d < sp; ++d) {
          const std::int64_t e = end[d] - out_pad[d];
          crop[d + 2] = {0, std::min<std::int64_t>(e, 0)};
          pads[d] = begin[d];
          pads[sp + d] = std::max<std::int64_t>(e, 0);
        }
        g1 = pad(g1, crop);
        std::vector<Tensor> grads(n.size());
        if (n[0]) {
          ConvOptions c;
          c.stride = stride;
          c.dilation = dilation;
          c.padding = pads;
          c.groups = o.groups;
          grads[0] = data_back(conv(g1, w1, {}, c), o.layout).to(xv.dtype());
        }
        if (n[1]) {
          Ints kernel(w1.shape().begin() + 2, w1.shape().end());
          const Tensor gw = conv_weight_grad(g1, x1.to(g.dtype()), kernel,
                                             stride, dilation, pads, o.groups);
          grads[1] = weights_back(gw, o.layout).to(wv.dtype());
        }
        if (n.size() > 2 && n[2]) {
          Axes axes;
          for (std::int64_t d = 0; d < g.rank(); ++d) {
            if (d != 1) axes.push_back(d);
          }
          grads[2] = sum(data_first(g, o.layout), axes).to(bv.dtype());
        }
        return grads;
      });
}

Variable conv_transpose2d(const Variable& x, const Variable& w,
                          const Variable& b, const ConvOptions& o) {
  TESSEL_CHECK(x.rank() == 4, BadShape, "conv_transpose2d",
               "needs a 4-D input, got {}", shape_string(x.shape()));
  return conv_transpose(x, w, b, o);
}

Variable max_pool(const Variable& x, const PoolOptions& o) {
  const Tensor xv = x.value();
  const MaxPoolResult r = max_pool_with_indices(xv, o);
  return record(
      "max_pool", r.values, {x},
      [xv, o, idx = r.indices](const Tensor& g, const Needs&) {
        // Each output's gradient goes to the input its maximum came from.
        const Tensor x1 = data_first(xv, o.layout);
        const Tensor g1 = data_first(g, o.layout).contiguous();
        const Tensor i1 = data_first(idx, o.layout).contiguous();
        const std::int64_t planes = x1.shape()[0] * x1.shape()[1];
        const Tensor gx = scatter_add(
            zeros({planes, x1.numel() / std::max<std::int64_t>(planes, 1)},
                  g.dtype(), g.device()),
            1, i1.reshape({planes, -1}), g1.reshape({planes, -1}));
        return one_grad(data_back(gx.reshape(x1.shape()), o.layout));
      });
}

Variable max_pool2d(const Variable& x, const PoolOptions& o) {
  TESSEL_CHECK(x.rank() == 4, BadShape, "max_pool2d", "needs a 4-D input");
  return max_pool(x, o);
}

Variable avg_pool(const Variable& x, const PoolOptions& o) {
  const Tensor xv = x.value();
  return record("avg_pool", avg_pool(xv, o), {x},
                [shape = xv.shape(), o](const Tensor& g, const Needs&) {
                  return one_grad(avg_pool_backward(g, shape, o));
                });
}

Variable avg_pool2d(const Variable& x, const PoolOptions& o) {
  TESSEL_CHECK(x.rank() == 4, BadShape, "avg_pool2d", "needs a 4-D input");
  return avg_pool(x, o);
}

Variable global_avg_pool(const Variable& x, DataLayout layout) {
  TESSEL_CHECK(x.rank() >= 3, BadShape, "global_avg_pool",
               "needs (N, C, spatial...), got {}", shape_string(x.shape()));
  Axes axes;
  for (std::int64_t d = 0; d < x.rank() - 2; ++d) {
    axes.push_back(layout == DataLayout::ChannelsFirst ? d + 2 : d + 1);
  }
  return mean(x, axes, true);
}

}  // namespace tessel

// Convolution and pooling: validation, groups and layouts here; the window
// geometry in core/shape_rules.hpp; kernels in oneDNN (onednn.cpp),
// conv_reference.cpp and pool.cpp.
#include "tessel/ops/conv.hpp"

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/conv_window.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

using rules::Ints;

// The channels-first view of a channels-last tensor: (N, S..., C) -> (N, C,
// S...).
Tensor channels_first_view(const Tensor& t, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return t;
  std::vector<std::int64_t> perm = {0, t.rank() - 1};
  for (std::int64_t d = 1; d + 1 < t.rank(); ++d) perm.push_back(d);
  return t.permute(std::span<const std::int64_t>(perm));
}

// (kernel..., A, B) -> (B, A, kernel...): the channels-first view of
// channels-last weights.
Tensor weights_first_view(const Tensor& w, DataLayout layout) {
  if (layout == DataLayout::ChannelsFirst) return w;
  const std::int64_t r = w.rank();
  std::vector<std::int64_t> perm = {r - 1, r - 2};
  for (std::int64_t d = 0; d + 2 < r; ++d) perm.push_back(d);
  return w.permute(std::span<const std::int64_t>(perm));
}

DType conv_dtype(const Tensor& x, const Tensor& w, const Tensor& bias,
                 const char* op) {
  DType d = promote_types(x.dtype(), w.dtype(), op);
  if (bias.defined()) d = promote_types(d, bias.dtype(), op);
  TESSEL_CHECK(
      is_floating_point(d) && d != DType::F8E4M3FN && d != DType::F8E5M2,
      BadDType, op,
      "needs floating-point operands (f16, bf16, f32, f64), got {} and {}",
      dtype_name(x.dtype()), dtype_name(w.dtype()));
  return d;
}

// The geometry of a transposed convolution over channels-first input
// extents `in` and kernel extents `kernel`: the output is what a
// convolution would map back onto `in`.
rules::WindowGeometry transposed_geometry(const Ints& in, const Ints& kernel,
                                          const ConvOptions& o,
                                          const char* op) {
  const std::size_t n = in.size();
  rules::WindowGeometry g;
  g.stride = rules::per_axis(o.stride, n, 1, "stride", op);
  g.dilation = rules::per_axis(o.dilation, n, 1, "dilation", op);
  const Ints out_pad =
      rules::per_axis(o.output_padding, n, 0, "output_padding", op, 0);
  if (!o.output_padding.empty()) {
    for (std::size_t d = 0; d < n; ++d) {
      TESSEL_CHECK(out_pad[d] < g.stride[d] || out_pad[d] < g.dilation[d],
                   BadShape, op,
                   "output_padding {} on axis {} must be smaller than the "
                   "stride ({}) or the "
                   "dilation ({})",
                   out_pad[d], d, g.stride[d], g.dilation[d]);
    }
  }
  TESSEL_CHECK(o.output_shape.empty() || o.output_shape.size() == n, BadShape,
               op, "output_shape has {} values for {} spatial axes",
               o.output_shape.size(), n);
  std::tie(g.pad_begin, g.pad_end) = rules::explicit_padding(
      o.auto_pad == AutoPad::Explicit ? o.padding : Ints{}, n, op);
  g.out.resize(n);
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t full = (in[d] - 1) * g.stride[d] +
                              rules::window_span(kernel[d], g.dilation[d]) +
                              out_pad[d];
    if (!o.output_shape.empty() || o.auto_pad == AutoPad::SameUpper ||
        o.auto_pad == AutoPad::SameLower) {
      const std::int64_t target =
          !o.output_shape.empty() ? o.output_shape[d] : in[d] * g.stride[d];
      // ONNX's rule: SAME_UPPER puts the smaller half first, otherwise
      // the larger; a negative total (a larger output) extends the end.
      const std::int64_t total = full - target;
      const std::int64_t half =
          total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
      g.pad_begin[d] = o.auto_pad == AutoPad::SameUpper ? half : total - half;
      g.pad_end[d] = total - g.pad_begin[d];
      TESSEL_CHECK(g.pad_begin[d] >= 0, BadShape, op,
                   "output size {} on axis {} would need negative padding at "
                   "the start (the "
                   "full output is {})",
                   target, d, full);
    }
    g.out[d] = full - g.pad_begin[d] - g.pad_end[d];
    TESSEL_CHECK(g.out[d] >= 1, BadShape, op,
                 "padding leaves no output on axis {}", d);
  }
  // oneDNN's deconvolution takes the padding of the equivalent
  // convolution; output_padding extends the end.
  for (std::size_t d = 0; d < n; ++d) g.pad_end[d] -= out_pad[d];
  return g;
}

// The spatial extents of a shape, in either layout.
Ints spatial_extents(const Shape& s, bool channels_last) {
  const std::size_t first = channels_last ? 1 : 2;
  return Ints(s.begin() + first, s.begin() + first + (s.size() - 2));
}

// The kernel extents of convolution weights, in either layout.
Ints kernel_extents(const Shape& w, bool channels_last) {
  const std::size_t first = channels_last ? 0 : 2;
  return Ints(w.begin() + first, w.begin() + first + (w.size() - 2));
}

Tensor conv_impl(const Tensor& x_in, const Tensor& w_in, const Tensor& bias_in,
                 const ConvOptions& o, bool transpose, const char* op) {
  const ops::CheckedOperands checked(op, {&x_in, &w_in});
  if (bias_in.defined()) ops::check_operands(op, {&x_in, &bias_in});
  const bool channels_last = o.layout == DataLayout::ChannelsLast;
  const std::int64_t groups = o.groups;
  // The result's shape in the caller's layout: the shared rule (which the
  // symbolic checker runs too) for convolutions, the adjoint's for
  // transposed ones.
  rules::WindowGeometry g;
  Shape result_shape;
  if (!transpose) {
    result_shape = rules::convolution(x_in.shape(), w_in.shape(),
                                      ops::convolution_window(o), groups,
                                      channels_last, op, &g);
  } else {
    const std::int64_t out_channels = rules::convolution_channels(
        x_in.shape(), w_in.shape(), groups, channels_last, true, op);
    g = transposed_geometry(spatial_extents(x_in.shape(), channels_last),
                            kernel_extents(w_in.shape(), channels_last), o, op);
    result_shape = {x_in.shape()[0]};
    if (!channels_last) result_shape.push_back(out_channels);
    for (const std::int64_t e : g.out) result_shape.push_back(e);
    if (channels_last) result_shape.push_back(out_channels);
  }
  const std::int64_t out_channels =
      channels_last ? result_shape.back() : result_shape[1];
  const DType dtype = conv_dtype(x_in, w_in, bias_in, op);
  const Tensor x = channels_first_view(x_in.to(dtype), o.layout);
  const Tensor w = weights_first_view(w_in.to(dtype), o.layout);
  Tensor bias;
  if (bias_in.defined()) {
    TESSEL_CHECK(bias_in.rank() == 1 && bias_in.shape()[0] == out_channels,
                 BadShape, op,
                 "bias {} must have one value per output channel ({})",
                 shape_string(bias_in.shape()), out_channels);
    bias = bias_in.to(dtype);
  }
  // The kernels write the result's channels-first view.
  Tensor result = empty(result_shape, dtype, x.device());
  Tensor y = channels_first_view(result, o.layout);
  if (result.numel() == 0) return result;
  const ConvGeometry cg{g.stride, g.dilation, g.pad_begin, g.pad_end, groups};
  ops::backend_of(y).convolution(x, w, bias, y, cg, transpose);
  return result;
}

// The pooling geometry for a channels-first input shape.
struct PoolPlan {
  PoolGeometry geometry;
  Shape out_shape;  // channels-first
};

PoolPlan pool_plan(const Shape& x, const PoolOptions& o, const char* op) {
  Ints in(x.begin() + 2, x.end());
  const std::size_t n = in.size();
  TESSEL_CHECK(o.kernel.size() == n, BadShape, op,
               "kernel has {} values for {} spatial axes of {}",
               o.kernel.size(), n, shape_string(x));
  for (auto k : o.kernel)
    TESSEL_CHECK(k >= 1, BadShape, op, "kernel sizes must be positive");
  const Ints stride = o.stride.empty() ? o.kernel : o.stride;
  const rules::WindowGeometry g =
      rules::window_geometry(in, o.kernel, stride, o.dilation, o.padding,
                             ops::window_padding(o.auto_pad), o.ceil_mode, op);
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t span = rules::window_span(o.kernel[d], g.dilation[d]);
    TESSEL_CHECK(
        g.pad_begin[d] < span && g.pad_end[d] < span, BadShape, op,
        "padding ({}, {}) must be smaller than the window {} on axis {}",
        g.pad_begin[d], g.pad_end[d], span, d);
  }
  PoolPlan plan{{o.kernel, g.stride, g.dilation, g.pad_begin, g.pad_end,
                 o.count_include_pad},
                {x[0], x[1]}};
  for (auto e : g.out) plan.out_shape.push_back(e);
  return plan;
}

// (N, C, S...) -> (N, S..., C).
std::vector<std::int64_t> to_channels_last(std::int64_t rank) {
  std::vector<std::int64_t> perm = {0};
  for (std::int64_t d = 2; d < rank; ++d) perm.push_back(d);
  perm.push_back(1);
  return perm;
}

Tensor pool_impl(const Tensor& x_in, const PoolOptions& o, bool is_max,
                 Tensor* indices, const char* op) {
  const ops::CheckedOperands checked(op, x_in);
  const std::int64_t rank = x_in.rank();
  TESSEL_CHECK(rank >= 3, BadShape, op,
               "needs (N, C, spatial...) input, got {}",
               shape_string(x_in.shape()));
  const Tensor x = channels_first_view(x_in, o.layout).contiguous();
  TESSEL_CHECK(is_max || is_floating_point(x.dtype()), BadDType, op,
               "average pooling needs a float input, got {}",
               dtype_name(x.dtype()));
  const PoolPlan plan = pool_plan(x.shape(), o, op);
  const PoolGeometry& pg = plan.geometry;
  const Shape& y_shape = plan.out_shape;
  Tensor y = empty(y_shape, x.dtype(), x.device());
  Tensor idx = indices ? empty(y_shape, DType::I64, x.device()) : Tensor();
  if (y.numel() > 0) {
    if (is_max) {
      ops::backend_of(y).max_pool(x, y, idx, pg);
    } else {
      ops::backend_of(y).avg_pool(x, y, pg);
    }
  }
  if (o.layout == DataLayout::ChannelsLast) {
    const std::vector<std::int64_t> perm = to_channels_last(rank);
    y = y.permute(std::span<const std::int64_t>(perm)).contiguous();
    if (indices)
      idx = idx.permute(std::span<const std::int64_t>(perm)).contiguous();
  }
  if (indices) *indices = idx;
  return y;
}

}  // namespace

std::vector<std::int64_t> conv_padding(const Shape& x_shape,
                                       const Shape& weight_shape,
                                       const ConvOptions& o) {
  const std::size_t rank = x_shape.size();
  TESSEL_CHECK(rank >= 3 && weight_shape.size() == rank, BadShape,
               "conv_padding",
               "needs input and weights of rank 3 to 5, got {} and {}",
               shape_string(x_shape), shape_string(weight_shape));
  const bool last = o.layout == DataLayout::ChannelsLast;
  Ints in, kernel;
  for (std::size_t d = 0; d + 2 < rank; ++d) {
    in.push_back(x_shape[last ? d + 1 : d + 2]);
    kernel.push_back(weight_shape[last ? d : d + 2]);
  }
  const rules::WindowGeometry g = rules::window_geometry(
      in, kernel, o.stride, o.dilation, o.padding,
      ops::window_padding(o.auto_pad), false, "conv_padding");
  Ints out = g.pad_begin;
  out.insert(out.end(), g.pad_end.begin(), g.pad_end.end());
  return out;
}

Tensor conv(const Tensor& x, const Tensor& w, const Tensor& b,
            const ConvOptions& o) {
  return conv_impl(x, w, b, o, false, "conv");
}
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b,
              const ConvOptions& o) {
  TESSEL_CHECK(x.defined() && x.rank() == 3, BadShape, "conv1d",
               "needs a 3-D input, got {}",
               x.defined() ? shape_string(x.shape()) : "undefined");
  return conv_impl(x, w, b, o, false, "conv1d");
}
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b,
              const ConvOptions& o) {
  TESSEL_CHECK(x.defined() && x.rank() == 4, BadShape, "conv2d",
               "needs a 4-D input, got {}",
               x.defined() ? shape_string(x.shape()) : "undefined");
  return conv_impl(x, w, b, o, false, "conv2d");
}
Tensor conv_transpose(const Tensor& x, const Tensor& w, const Tensor& b,
                      const ConvOptions& o) {
  return conv_impl(x, w, b, o, true, "conv_transpose");
}
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b,
                        const ConvOptions& o) {
  TESSEL_CHECK(x.defined() && x.rank() == 4, BadShape, "conv_transpose2d",
               "needs a 4-D input, got {}",
               x.defined() ? shape_string(x.shape()) : "undefined");
  return conv_impl(x, w, b, o, true, "conv_transpose2d");
}

Tensor max_pool(const Tensor& x, const PoolOptions& o) {
  return pool_impl(x, o, true, nullptr, "max_pool");
}
MaxPoolResult max_pool_with_indices(const Tensor& x, const PoolOptions& o) {
  MaxPoolResult r;
  r.values = pool_impl(x, o, true, &r.indices, "max_pool");
  return r;
}
Tensor avg_pool(const Tensor& x, const PoolOptions& o) {
  return pool_impl(x, o, false, nullptr, "avg_pool");
}
Tensor max_pool2d(const Tensor& x, const PoolOptions& o) {
  TESSEL_CHECK(x.defined() && x.rank() == 4, BadShape, "max_pool2d",
               "needs a 4-D input");
  return pool_impl(x, o, true, nullptr, "max_pool2d");
}
Tensor avg_pool2d(const Tensor& x, const PoolOptions& o) {
  TESSEL_CHECK(x.defined() && x.rank() == 4, BadShape, "avg_pool2d",
               "needs a 4-D input");
  return pool_impl(x, o, false, nullptr, "avg_pool2d");
}

Tensor avg_pool_backward(const Tensor& grad_output, const Shape& input_shape,
                         const PoolOptions& o) {
  const char* op = "avg_pool_backward";
  const ops::CheckedOperands checked(op, grad_output);
  const auto rank = static_cast<std::int64_t>(input_shape.size());
  TESSEL_CHECK(rank >= 3 && grad_output.rank() == rank, BadShape, op,
               "needs (N, C, spatial...) shapes, got input {} and gradient {}",
               shape_string(input_shape), shape_string(grad_output.shape()));
  TESSEL_CHECK(is_floating_point(grad_output.dtype()), BadDType, op,
               "needs a float gradient, got {}",
               dtype_name(grad_output.dtype()));
  Shape in_first = input_shape;
  if (o.layout == DataLayout::ChannelsLast) {
    in_first = {input_shape[0],
                input_shape[static_cast<std::size_t>(rank - 1)]};
    for (std::int64_t d = 1; d + 1 < rank; ++d)
      in_first.push_back(input_shape[static_cast<std::size_t>(d)]);
  }
  const PoolPlan plan = pool_plan(in_first, o, op);
  const Tensor dy = channels_first_view(grad_output, o.layout);
  TESSEL_CHECK(dy.shape() == plan.out_shape, BadShape, op,
               "gradient {} does not match the pooled shape {}",
               shape_string(grad_output.shape()), shape_string(plan.out_shape));
  const DType acc = grad_output.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Tensor dx = zeros(in_first, acc, grad_output.device());
  if (dy.numel() > 0)
    ops::backend_of(dx).avg_pool_backward(dy.to(acc).contiguous(), dx,
                                          plan.geometry);
  if (o.layout == DataLayout::ChannelsLast) {
    const std::vector<std::int64_t> perm = to_channels_last(rank);
    dx = dx.permute(std::span<const std::int64_t>(perm)).contiguous();
  }
  return dx.to(grad_output.dtype());
}

Tensor global_avg_pool(const Tensor& x, DataLayout layout) {
  const ops::CheckedOperands checked("global_avg_pool", x);
  TESSEL_CHECK(x.rank() >= 3, BadShape, "global_avg_pool",
               "needs (N, C, spatial...), got {}", shape_string(x.shape()));
  Axes axes;
  for (std::int64_t d = 0; d < x.rank() - 2; ++d) {
    axes.push_back(layout == DataLayout::ChannelsFirst ? d + 2 : d + 1);
  }
  return mean(x, axes, true).to(float_result_type(x.dtype()));
}

}  // namespace tessel

// ONNX's convolution, pooling, normalisation and attention nodes on
// tessel's ops (issue 4 of the plan), following the operator specification.
#include <algorithm>

#include "onnx_ops.hpp"

namespace tessel::onnx {

namespace {

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

std::vector<std::int64_t> ints_attr(const Node& n, const char* name) {
  return n.attr_ints(name).value_or(std::vector<std::int64_t>{});
}

AutoPad auto_pad_of(const Node& n) {
  const std::string p = n.attr_string("auto_pad", "NOTSET");
  if (p == "SAME_UPPER") return AutoPad::SameUpper;
  if (p == "SAME_LOWER") return AutoPad::SameLower;
  if (p == "VALID") return AutoPad::Valid;
  return AutoPad::Explicit;
}

ConvOptions conv_options(const Node& n) {
  ConvOptions o;
  o.stride = ints_attr(n, "strides");
  o.dilation = ints_attr(n, "dilations");
  o.padding = ints_attr(n, "pads");
  o.auto_pad = auto_pad_of(n);
  o.groups = n.attr_int("group", 1);
  o.output_padding = ints_attr(n, "output_padding");
  o.output_shape = ints_attr(n, "output_shape");
  return o;
}

PoolOptions pool_options(const Node& n) {
  PoolOptions o;
  o.kernel = ints_attr(n, "kernel_shape");
  o.stride = ints_attr(n, "strides");
  // ONNX's default stride is 1 (PyTorch's is the kernel size).
  if (o.stride.empty()) o.stride.assign(o.kernel.size(), 1);
  o.dilation = ints_attr(n, "dilations");
  o.padding = ints_attr(n, "pads");
  o.auto_pad = auto_pad_of(n);
  o.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  o.count_include_pad = n.attr_int("count_include_pad", 0) != 0;
  return o;
}

// ONNX's MaxPool indices are flat over the whole input tensor, row-major
// (storage_order 0) or with the two spatial axes column-major (1); tessel's
// are flat within each (n, c) plane, row-major.
Tensor onnx_indices(const Tensor& x, const Tensor& plane_index,
                    std::int64_t storage_order) {
  const std::int64_t rank = x.rank();
  std::int64_t plane = 1;
  for (std::int64_t d = 2; d < rank; ++d) plane *= x.shape()[d];
  Tensor idx = plane_index;
  if (storage_order == 1) {
    if (rank != 4)
      throw NotMapped("column-major MaxPool indices for non-2-D pooling");
    const std::int64_t h = x.shape()[2], w = x.shape()[3];
    idx = add(mul(remainder(idx, w), h), floor_divide(idx, w));
  }
  const Tensor nc = arange(x.shape()[0] * x.shape()[1], DType::I64)
                        .reshape({x.shape()[0], x.shape()[1]});
  Shape s = nc.shape();
  for (std::int64_t d = 2; d < rank; ++d) s.push_back(1);
  return add(idx, mul(nc.reshape(s), plane));
}

}  // namespace

void add_nn_mappings(std::map<std::string, Mapping>& m) {
  m["Conv"] = [](const Node& n) {
    return one(
        conv(n.in(0), n.in(1), n.has(2) ? n.in(2) : Tensor(), conv_options(n)));
  };
  m["ConvTranspose"] = [](const Node& n) {
    return one(conv_transpose(n.in(0), n.in(1), n.has(2) ? n.in(2) : Tensor(),
                              conv_options(n)));
  };
  m["MaxPool"] = [](const Node& n) {
    const MaxPoolResult r = max_pool_with_indices(n.in(0), pool_options(n));
    if (n.outputs < 2) return one(r.values);
    return std::vector<Tensor>{
        r.values,
        onnx_indices(n.in(0), r.indices, n.attr_int("storage_order", 0))};
  };
  m["AveragePool"] = [](const Node& n) {
    return one(avg_pool(n.in(0), pool_options(n)));
  };
  m["GlobalAveragePool"] = [](const Node& n) {
    return one(global_avg_pool(n.in(0)));
  };

  // Normalisation.
  m["LayerNormalization"] = [](const Node& n) {
    const NormResult r = layer_norm_with_stats(
        n.in(0), n.in(1), n.has(2) ? n.in(2) : Tensor(),
        n.attr_float("epsilon", 1e-5), n.attr_int("axis", -1));
    return std::vector<Tensor>{r.y, r.mean, r.rstd};
  };
  m["RMSNormalization"] = [](const Node& n) {
    return one(rms_norm(n.in(0), n.in(1), n.attr_float("epsilon", 1e-5),
                        n.attr_int("axis", -1)));
  };
  m["GroupNormalization"] = [](const Node& n) {
    if (n.opset < 21)
      throw NotMapped("GroupNormalization-18 has per-group scales");
    return one(group_norm(n.in(0), n.attr_int("num_groups", 1), n.in(1),
                          n.in(2), n.attr_float("epsilon", 1e-5)));
  };
  m["InstanceNormalization"] = [](const Node& n) {
    return one(instance_norm(n.in(0), n.in(1), n.in(2),
                             n.attr_float("epsilon", 1e-5)));
  };
  m["BatchNormalization"] = [](const Node& n) {
    const double eps = n.attr_float("epsilon", 1e-5);
    if (n.attr_int("training_mode", 0) == 0) {
      return one(batch_norm(n.in(0), n.in(3), n.in(4), n.in(1), n.in(2), eps));
    }
    // Training: normalise with the batch statistics (biased variance) and
    // blend them into the running ones.
    const Tensor& x = n.in(0);
    Axes axes = {0};
    for (std::int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
    const Tensor batch_mean = mean(x, axes);
    const Tensor batch_var = var(x, axes, 0.0);
    const double momentum = n.attr_float("momentum", 0.9);
    const Tensor y =
        batch_norm(x, batch_mean, batch_var, n.in(1), n.in(2), eps);
    const Tensor running_mean =
        add(mul(n.in(3), momentum), mul(batch_mean, 1.0 - momentum));
    const Tensor running_var =
        add(mul(n.in(4), momentum), mul(batch_var, 1.0 - momentum));
    return std::vector<Tensor>{y, running_mean, running_var};
  };
}

}  // namespace tessel::onnx

// op_tool's convolution, pooling, normalisation and transformer ops.
#include "op_tool.hpp"

namespace op_tool {

using namespace tessel;

namespace {

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

std::vector<std::int64_t> ints(const Json& a, const char* key) {
  return a.contains(key) ? a[key].get<std::vector<std::int64_t>>()
                         : std::vector<std::int64_t>{};
}

DataLayout layout(const Json& a) {
  return a.value("layout", std::string("first")) == "last"
             ? DataLayout::ChannelsLast
             : DataLayout::ChannelsFirst;
}

ConvOptions conv_options(const Json& a) {
  ConvOptions o;
  o.stride = ints(a, "stride");
  o.dilation = ints(a, "dilation");
  o.padding = ints(a, "padding");
  o.output_padding = ints(a, "output_padding");
  o.groups = a.value("groups", 1);
  o.layout = layout(a);
  const std::string pad = a.value("auto_pad", std::string(""));
  if (pad == "same") o.auto_pad = AutoPad::SameUpper;
  return o;
}

PoolOptions pool_options(const Json& a) {
  PoolOptions o;
  o.kernel = ints(a, "kernel");
  o.stride = ints(a, "stride");
  o.dilation = ints(a, "dilation");
  o.padding = ints(a, "padding");
  o.ceil_mode = a.value("ceil_mode", false);
  o.count_include_pad = a.value("count_include_pad", false);
  o.layout = layout(a);
  return o;
}

Tensor optional(const std::vector<Tensor>& in, std::size_t i) {
  return i < in.size() ? in[i] : Tensor();
}

AttentionOptions attention_options(const Tensor& mask, const Json& a) {
  AttentionOptions o;
  o.mask = mask;
  o.causal = a.value("causal", false);
  if (a.contains("causal_offset"))
    o.causal_offset = a["causal_offset"].get<std::int64_t>();
  if (a.contains("scale")) o.scale = a["scale"].get<double>();
  o.softcap = a.value("softcap", 0.0);
  return o;
}

AffineQuantization affine_params(const std::vector<Tensor>& in, const Json& a) {
  AffineQuantization p;
  p.scale = in[1];
  p.zero_point = optional(in, 2);
  p.axis = a.value("axis", std::int64_t{-1});
  p.group_size = a.value("group_size", std::int64_t{0});
  return p;
}

}  // namespace

void add_nn_ops(std::map<std::string, Op>& m) {
  m["conv"] = [](const auto& in, const Json& a) {
    return one(conv(in[0], in[1], optional(in, 2), conv_options(a)));
  };
  m["conv_transpose"] = [](const auto& in, const Json& a) {
    return one(conv_transpose(in[0], in[1], optional(in, 2), conv_options(a)));
  };
  m["max_pool"] = [](const auto& in, const Json& a) {
    const MaxPoolResult r = max_pool_with_indices(in[0], pool_options(a));
    return std::vector<Tensor>{r.values, r.indices};
  };
  m["avg_pool"] = [](const auto& in, const Json& a) {
    return one(avg_pool(in[0], pool_options(a)));
  };
  m["layer_norm"] = [](const auto& in, const Json& a) {
    return one(layer_norm(in[0], optional(in, 1), optional(in, 2),
                          a.value("eps", 1e-5), a.value("axis", -1)));
  };
  m["rms_norm"] = [](const auto& in, const Json& a) {
    return one(rms_norm(in[0], optional(in, 1), a.value("eps", 1e-6),
                        a.value("axis", -1)));
  };
  // x, weight, bias, then the gradient of the output: the gradients of x,
  // weight and bias (the backward pass autograd runs).
  m["layer_norm_grad"] = [](const auto& in, const Json& a) {
    const NormResult r =
        layer_norm_with_stats(in[0], in[1], in[2], a.value("eps", 1e-5));
    const NormGradients g = layer_norm_backward(in[3], in[0], r, in[1], in[2]);
    return std::vector<Tensor>{g.x, g.weight, g.bias};
  };
  m["rms_norm_grad"] = [](const auto& in, const Json& a) {
    const NormResult r =
        rms_norm_with_stats(in[0], in[1], a.value("eps", 1e-6));
    const NormGradients g = rms_norm_backward(in[2], in[0], r, in[1]);
    return std::vector<Tensor>{g.x, g.weight};
  };
  m["group_norm"] = [](const auto& in, const Json& a) {
    return one(group_norm(in[0], a["groups"].get<std::int64_t>(),
                          optional(in, 1), optional(in, 2),
                          a.value("eps", 1e-5)));
  };
  m["batch_norm"] = [](const auto& in, const Json& a) {
    return one(batch_norm(in[0], in[1], in[2], optional(in, 3), optional(in, 4),
                          a.value("eps", 1e-5)));
  };
  m["attention"] = [](const auto& in, const Json& a) {
    return one(scaled_dot_product_attention(
        in[0], in[1], in[2], attention_options(optional(in, 3), a)));
  };
  // q, k, v, the gradient of the output, then the optional mask: the three
  // gradients of attention (the backward pass autograd runs).
  m["attention_grad"] = [](const auto& in, const Json& a) {
    const AttentionOptions o = attention_options(optional(in, 4), a);
    const Tensor out = scaled_dot_product_attention(in[0], in[1], in[2], o);
    const AttentionGradients g = scaled_dot_product_attention_backward(
        in[3], in[0], in[1], in[2], out, o);
    return std::vector<Tensor>{g.q, g.k, g.v};
  };
  m["rope"] = [](const auto& in, const Json& a) {
    RopeOptions o;
    o.theta = a.value("theta", 10000.0);
    o.style = a.value("style", std::string("neox")) == "gptj" ? RopeStyle::GPTJ
                                                              : RopeStyle::NeoX;
    o.rotary_dim = a.value("rotary_dim", 0);
    return one(rope(in[0], in[1], o));
  };
  m["embedding"] = [](const auto& in, const Json&) {
    return one(embedding(in[0], in[1]));
  };
  m["swiglu"] = [](const auto& in, const Json&) {
    return one(swiglu(in[0], in[1]));
  };
  // Affine quantisation: x, scale[, zero_point] with attrs dtype, axis,
  // group_size. Packed i4/u4 results come back unpacked (i8/u8) for .npy.
  m["quantize_affine"] = [](const auto& in, const Json& a) {
    const Tensor q =
        quantize_affine(in[0], parse_dtype(a["dtype"].get<std::string>()),
                        affine_params(in, a));
    return one(is_packed(q.dtype())
                   ? q.to(q.dtype() == DType::I4 ? DType::I8 : DType::U8)
                   : q);
  };
  m["dequantize_affine"] = [](const auto& in, const Json& a) {
    const std::string packed = a.value("packed", std::string());
    const Tensor q = packed.empty() ? in[0] : in[0].to(parse_dtype(packed));
    return one(dequantize_affine(q, affine_params(in, a)));
  };
  // The chosen scale and zero point (0s when symmetric and signed).
  m["choose_affine"] = [](const auto& in, const Json& a) {
    AffineChoice c;
    c.symmetric = a.value("symmetric", true);
    c.per_channel = a.value("per_channel", false);
    c.axis = a.value("axis", std::int64_t{-1});
    c.group_size = a.value("group_size", std::int64_t{0});
    const AffineQuantization p = choose_affine_quantization(
        in[0], parse_dtype(a["dtype"].get<std::string>()), c);
    const Tensor zp = p.zero_point.defined()
                          ? p.zero_point
                          : zeros(p.scale.shape(), DType::I32);
    return std::vector<Tensor>{p.scale, zp};
  };
  m["linear"] = [](const auto& in, const Json&) {
    return one(linear(in[0], in[1], optional(in, 2)));
  };
}

}  // namespace op_tool

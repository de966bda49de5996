// ONNX's convolution, pooling, normalisation and attention nodes on
// tessel's ops (issue 4 of the plan), following the operator specification.
#include <algorithm>
#include <cmath>

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

// ONNX's 3-D attention operands (B, S, H * D) as (B, H, S, D).
Tensor split_heads(const Tensor& t, std::int64_t heads) {
  if (t.rank() == 4) return t;
  const std::int64_t b = t.shape()[0], seq = t.shape()[1],
                     hidden = t.shape()[2];
  return t.reshape({b, seq, heads, hidden / heads}).permute({0, 2, 1, 3});
}

// The additive bias ONNX's reference builds: the mask (padded with -inf to
// the key length), the causal limit and the padding of nonpad_kv_seqlen,
// broadcastable to (B, H, Sq, Sk).
Tensor attention_bias(const Node& n, std::int64_t batch, std::int64_t q_len,
                      std::int64_t kv_len, bool causal, std::int64_t past) {
  const double neg_inf = -INFINITY;
  Tensor bias = zeros({q_len, kv_len});
  if (n.has(3)) {
    Tensor m = n.in(3);
    if (m.dtype() == DType::Bool) m = where(m, zeros({}), full({}, neg_inf));
    const std::int64_t missing = kv_len - m.shape()[m.rank() - 1];
    if (missing > 0) {
      std::vector<std::pair<std::int64_t, std::int64_t>> pads(
          static_cast<std::size_t>(m.rank()));
      pads.back() = {0, missing};
      m = pad(m, pads, PadMode::Constant, neg_inf);
    }
    bias = add(bias, m.to(DType::F32));
  }
  const bool nonpad = n.has(6);
  if (causal) {
    const Tensor j = arange(kv_len, DType::I64).reshape({1, 1, 1, kv_len});
    const Tensor i = arange(q_len, DType::I64).reshape({1, 1, q_len, 1});
    // Offset: the past length, or per batch nonpad - q_len, or 0.
    Tensor offset = full({1, 1, 1, 1}, past, DType::I64);
    if (!n.has(4) && nonpad) {
      offset = sub(n.in(6).to(DType::I64), q_len).reshape({batch, 1, 1, 1});
    }
    bias =
        add(bias, where(le(j, add(i, offset)), zeros({}), full({}, neg_inf)));
  }
  if (nonpad) {
    const Tensor j = arange(kv_len, DType::I64).reshape({1, kv_len});
    const Tensor keep = lt(j, n.in(6).to(DType::I64).reshape({batch, 1}));
    bias = add(bias, where(keep, zeros({}), full({}, neg_inf))
                         .reshape({batch, 1, 1, kv_len}));
  }
  return bias;
}

Tensor repeat_kv(const Tensor& t, std::int64_t q_heads) {
  const std::int64_t g = q_heads / t.shape()[1];
  if (g == 1) return t;
  const Shape s = t.shape();
  return t.unsqueeze(2)
      .expand({s[0], s[1], g, s[2], s[3]})
      .reshape({s[0], s[1] * g, s[2], s[3]});
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

  // Transformer pieces.
  m["RotaryEmbedding"] = [](const Node& n) {
    Tensor x = n.in(0);
    Tensor cos_t = n.in(1), sin_t = n.in(2);
    if (n.has(3)) {
      cos_t = gather(cos_t, n.in(3), 0);  // (B, S, R/2)
      sin_t = gather(sin_t, n.in(3), 0);
    }
    const RopeStyle style =
        n.attr_int("interleaved", 0) != 0 ? RopeStyle::GPTJ : RopeStyle::NeoX;
    if (x.rank() == 4) {  // (B, H, S, D)
      return one(
          rope_with_tables(x, cos_t.unsqueeze(1), sin_t.unsqueeze(1), style));
    }
    const std::int64_t heads = n.attr_int("num_heads", 0);
    if (heads <= 0) throw NotMapped("3-D RotaryEmbedding without num_heads");
    const Shape s = x.shape();
    const Tensor x4 = x.reshape({s[0], s[1], heads, s[2] / heads});
    return one(
        rope_with_tables(x4, cos_t.unsqueeze(2), sin_t.unsqueeze(2), style)
            .reshape(s));
  };
  m["Attention"] = [](const Node& n) {
    const bool three_d = n.in(0).rank() == 3;
    const std::int64_t q_heads =
        three_d ? n.attr_int("q_num_heads", 0) : n.in(0).shape()[1];
    const std::int64_t kv_heads =
        three_d ? n.attr_int("kv_num_heads", 0) : n.in(1).shape()[1];
    const Tensor q = split_heads(n.in(0), q_heads);
    Tensor k = split_heads(n.in(1), kv_heads),
           v = split_heads(n.in(2), kv_heads);
    std::int64_t past = 0;
    if (n.has(4)) {
      past = n.in(4).shape()[2];
      k = concat({n.in(4), k}, 2);
      v = concat({n.in(5), v}, 2);
    }
    const std::int64_t batch = q.shape()[0], q_len = q.shape()[2],
                       kv_len = k.shape()[2];
    const bool causal = n.attr_int("is_causal", 0) != 0;
    AttentionOptions o;
    if (n.attributes.contains("scale")) o.scale = n.attr_float("scale", 1.0);
    o.softcap = n.attr_float("softcap", 0.0);
    const bool mask_fits =
        !n.has(3) || n.in(3).shape()[n.in(3).rank() - 1] == kv_len;
    if (!n.has(6) && mask_fits) {
      // tessel's own mask and causal options.
      if (n.has(3)) o.mask = n.in(3);
      o.causal = causal;
      o.causal_offset = past;
    } else {
      o.mask = attention_bias(n, batch, q_len, kv_len, causal, past);
    }
    Tensor y = scaled_dot_product_attention(q, k, v, o);
    if (three_d) {
      y = y.permute({0, 2, 1, 3}).contiguous().reshape({batch, q_len, -1});
    }
    std::vector<Tensor> out = {y, k, v};
    if (n.outputs > 3) {
      // qk_matmul_output, composed as ONNX's reference does.
      const double scale =
          o.scale.value_or(1.0 / std::sqrt(static_cast<double>(q.shape()[3])));
      Tensor s = mul(matmul(q, repeat_kv(k, q_heads).transpose(2, 3)), scale);
      if (o.softcap > 0) s = mul(tanh(div(s, o.softcap)), o.softcap);
      const std::int64_t mode = n.attr_int("qk_matmul_output_mode", 0);
      if (mode >= 2) {
        s = add(s, attention_bias(n, batch, q_len, kv_len, causal, past));
      }
      if (mode == 3) {
        const Tensor empty_row = eq(max(s, {-1}, true), -INFINITY);
        s = where(empty_row, zeros({}), softmax(s, -1));
      }
      out.push_back(s.to(q.dtype()));
    }
    out.resize(n.outputs);
    return out;
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

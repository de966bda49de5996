// Attention: shapes, heads, masks and dtypes here; the fused kernel in
// backends/cpu/attention.cpp.
#include "tessel/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/attention_weights.hpp"
#include "ops/operands.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/linalg.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

struct Dims {
  std::int64_t batch, q_heads, kv_heads, q_len, kv_len, head_dim, value_dim;
};

Dims check_shapes(const Tensor& q, const Tensor& k, const Tensor& v) {
  const ops::CheckedOperands checked(kOp, {&q, &k, &v});
  rules::attention(q.shape(), k.shape(), v.shape(), kOp);
  const Dims d{q.shape()[0], q.shape()[1], k.shape()[1], q.shape()[2],
               k.shape()[2], q.shape()[3], v.shape()[3]};
  return d;
}

// The mask as a tensor broadcast to (B, Hq, Sq, Sk), in f32 or bool.
Tensor broadcast_mask(const Tensor& mask, const Dims& d, DType additive,
                      Device device) {
  if (!mask.defined()) return {};
  const Shape target{d.batch, d.q_heads, d.q_len, d.kv_len};
  TESSEL_CHECK(mask.device() == device, DeviceMismatch, kOp,
               "the mask is on {} but the operands on {}", mask.device().str(),
               device.str());
  bool fits = mask.rank() <= 4;
  for (std::int64_t i = 1; fits && i <= mask.rank(); ++i) {
    const std::int64_t e = mask.shape()[mask.rank() - i];
    fits = e == 1 || e == target[static_cast<std::size_t>(4 - i)];
  }
  TESSEL_CHECK(fits, BadShape, kOp,
               "mask {} does not broadcast to the scores {}",
               shape_string(mask.shape()), shape_string(target));
  TESSEL_CHECK(mask.dtype() == DType::Bool || is_floating_point(mask.dtype()),
               BadDType, kOp, "the mask must be bool or float, got {}",
               dtype_name(mask.dtype()));
  const Tensor m = mask.dtype() == DType::Bool ? mask : mask.to(additive);
  return m.expand(target);
}

// The unfused form, for f64: scores are materialised.
Tensor attention_unfused(const Tensor& q, const Tensor& k, const Tensor& v,
                         const Dims& d, const Tensor& mask,
                         const AttentionOptions& o, double scale,
                         std::int64_t offset) {
  const std::int64_t group = d.q_heads / d.kv_heads;
  const detail::AttentionWeights w = detail::attention_weights(
      q, detail::repeat_kv_heads(k, group), mask, o, scale, offset);
  return matmul(w.p, detail::repeat_kv_heads(v, group));
}

// The unfused gradients of one chunk of batch entries, recomputing the
// weights: q (B, Hq, Sq, D), k (B, Hkv, Sk, D), v (B, Hkv, Sk, Dv), g (B,
// Hq, Sq, Dv); mask (B, Hq, Sq, Sk) additive or bool, or undefined.
AttentionGradients attention_backward_unfused_chunk(
    const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& g,
    const Tensor& mask, const AttentionOptions& o, double scale,
    std::int64_t offset) {
  const std::int64_t batch = q.shape()[0], hq = q.shape()[1],
                     hkv = k.shape()[1], group = hq / hkv;
  const Tensor kr = detail::repeat_kv_heads(k, group),
               vr = detail::repeat_kv_heads(v, group);
  const detail::AttentionWeights w =
      detail::attention_weights(q, kr, mask, o, scale, offset);
  const Tensor& p = w.p;
  const Tensor& t = w.softcap_tanh;
  // dV = P^T dO; dP = dO V^T; dZ = P (dP - rowsum(dP P)).
  const Tensor dv_rep = matmul(p.transpose(2, 3), g);
  const Tensor dp = matmul(g, vr.transpose(2, 3));
  Tensor dz = mul(p, sub(dp, sum(mul(dp, p), {-1}, true)));
  if (o.softcap > 0) dz = mul(dz, sub(1, mul(t, t)));
  AttentionGradients r;
  r.q = mul(matmul(dz, kr), scale);
  const Tensor dk_rep = mul(matmul(dz.transpose(2, 3), q), scale);
  auto fold_heads = [&](const Tensor& rep) {
    if (group == 1) return rep;
    const Shape s = rep.shape();
    return sum(rep.reshape({batch, hkv, group, s[2], s[3]}), {2});
  };
  r.k = fold_heads(dk_rep);
  r.v = fold_heads(dv_rep);
  return r;
}

// The unfused backward in `compute` (f64, or f32 for the corners the fused
// kernel does not take), in chunks of batch entries whose weights (chunk,
// Hq, Sq, Sk) stay within about 4M elements.
AttentionGradients attention_backward_unfused(const Tensor& g, const Tensor& q,
                                              const Tensor& k, const Tensor& v,
                                              const Dims& d, const Tensor& mask,
                                              const AttentionOptions& o,
                                              double scale, std::int64_t offset,
                                              DType compute) {
  const Device device = q.device();
  AttentionGradients out{
      empty({d.batch, d.q_heads, d.q_len, d.head_dim}, compute, device),
      empty({d.batch, d.kv_heads, d.kv_len, d.head_dim}, compute, device),
      empty({d.batch, d.kv_heads, d.kv_len, d.value_dim}, compute, device)};
  const std::int64_t per_entry =
      std::max<std::int64_t>(d.q_heads * d.q_len * d.kv_len, 1);
  const std::int64_t chunk =
      std::clamp<std::int64_t>((std::int64_t{1} << 22) / per_entry, 1,
                               std::max<std::int64_t>(d.batch, 1));
  for (std::int64_t b = 0; b < d.batch; b += chunk) {
    const std::int64_t e = std::min(d.batch, b + chunk);
    const AttentionGradients r = attention_backward_unfused_chunk(
        q.slice(0, b, e).to(compute), k.slice(0, b, e).to(compute),
        v.slice(0, b, e).to(compute), g.slice(0, b, e).to(compute),
        mask.defined() ? mask.slice(0, b, e) : Tensor(), o, scale, offset);
    if (b == 0 && e == d.batch) return r;
    out.q.slice(0, b, e).copy_(r.q);
    out.k.slice(0, b, e).copy_(r.k);
    out.v.slice(0, b, e).copy_(r.v);
  }
  return out;
}

// The fused kernel reads rows with unit inner stride and a row stride
// that sgemm accepts (at least the row length: no stride-0 rows), in f32
// or, for the forward pass's keys and values, `dtype`.
Tensor kernel_operand(const Tensor& t, DType dtype = DType::F32) {
  Tensor f = t.to(dtype);
  const bool inner = f.strides()[3] == 1 || f.shape()[3] <= 1;
  const bool rows = f.strides()[2] >= std::max<std::int64_t>(f.shape()[3], 1);
  if (!inner || !rows) f = f.contiguous();
  return f;
}

AttentionShape kernel_shape(const Dims& d, double scale, std::int64_t offset,
                            const AttentionOptions& o) {
  AttentionShape p;
  p.batch = d.batch;
  p.q_heads = d.q_heads;
  p.kv_heads = d.kv_heads;
  p.q_len = d.q_len;
  p.kv_len = d.kv_len;
  p.head_dim = d.head_dim;
  p.value_dim = d.value_dim;
  p.scale = static_cast<float>(scale);
  p.softcap = static_cast<float>(o.softcap);
  p.causal = o.causal;
  p.causal_offset = offset;
  return p;
}

// The checks both directions make on the options.
void check_options(const AttentionOptions& o) {
  TESSEL_CHECK(o.softcap >= 0 && std::isfinite(o.softcap), BadShape, kOp,
               "softcap must be finite and non-negative, got {}", o.softcap);
}

}  // namespace

namespace detail {

Tensor repeat_kv_heads(const Tensor& t, std::int64_t group) {
  if (group == 1) return t;
  const Shape s = t.shape();
  return t.unsqueeze(2)
      .expand({s[0], s[1], group, s[2], s[3]})
      .reshape({s[0], s[1] * group, s[2], s[3]});
}

AttentionWeights attention_weights(const Tensor& q, const Tensor& k_repeated,
                                   const Tensor& mask,
                                   const AttentionOptions& o, double scale,
                                   std::int64_t causal_offset) {
  const std::int64_t q_len = q.shape()[2], kv_len = k_repeated.shape()[2];
  AttentionWeights w;
  Tensor s = mul(matmul(q, k_repeated.transpose(2, 3)), scale);
  if (o.softcap > 0) {
    w.softcap_tanh = tanh(div(s, o.softcap));
    s = mul(w.softcap_tanh, o.softcap);
  }
  const double neg_inf = -std::numeric_limits<double>::infinity();
  if (mask.defined()) {
    s = mask.dtype() == DType::Bool
            ? where(mask, s, full({}, neg_inf, s.dtype(), s.device()))
            : add(s, mask);
  }
  if (o.causal) {
    const Tensor keep =
        le(arange(kv_len, DType::I64).reshape({1, kv_len}),
           add(arange(q_len, DType::I64).reshape({q_len, 1}), causal_offset))
            .to(s.device());
    s = where(keep, s, full({}, neg_inf, s.dtype(), s.device()));
  }
  // Rows with nothing to attend to give zeros rather than NaN.
  const Tensor empty_row = eq(max(s, {-1}, true), neg_inf);
  w.p = where(empty_row, zeros({}, s.dtype(), s.device()), softmax(s, -1));
  return w;
}

}  // namespace detail

Tensor scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in,
                                    const Tensor& v_in,
                                    const AttentionOptions& o) {
  if (q_in.defined() && q_in.rank() == 3 && k_in.defined() &&
      k_in.rank() == 3 && v_in.defined() && v_in.rank() == 3) {
    return scaled_dot_product_attention(q_in.unsqueeze(0), k_in.unsqueeze(0),
                                        v_in.unsqueeze(0), o)
        .squeeze(0);
  }
  const Dims d = check_shapes(q_in, k_in, v_in);
  DType dtype = promote_types(promote_types(q_in.dtype(), k_in.dtype(), kOp),
                              v_in.dtype(), kOp);
  TESSEL_CHECK(is_floating_point(dtype), BadDType, kOp,
               "needs float operands, got {}, {}, {}", dtype_name(q_in.dtype()),
               dtype_name(k_in.dtype()), dtype_name(v_in.dtype()));
  const double scale =
      o.scale.value_or(1.0 / std::sqrt(static_cast<double>(d.head_dim)));
  const std::int64_t offset = o.causal_offset.value_or(d.kv_len - d.q_len);
  check_options(o);

  if (dtype == DType::F64) {
    const Tensor mask = broadcast_mask(o.mask, d, DType::F64, q_in.device());
    const Tensor y =
        attention_unfused(q_in.to(dtype), k_in.to(dtype), v_in.to(dtype), d,
                          mask, o, scale, offset);
    check_finite(y, kOp);
    return y;
  }
  // Keys and values of one 16-bit or block dtype (a KV cache kept in f16,
  // bf16 or a quantised type) go to the kernel as they are: it widens or
  // dequantises them a tile at a time, exactly, so the result is that of
  // their f32 values without an f32 copy of the whole cache at every step.
  const bool narrow_kv =
      k_in.dtype() == v_in.dtype() &&
      (k_in.dtype() == DType::F16 || k_in.dtype() == DType::BF16 ||
       is_block_quantized(k_in.dtype()));
  const DType kv_dtype = narrow_kv ? k_in.dtype() : DType::F32;
  const Tensor q = kernel_operand(q_in), k = kernel_operand(k_in, kv_dtype),
               v = kernel_operand(v_in, kv_dtype);
  const Tensor mask = broadcast_mask(o.mask, d, DType::F32, q_in.device());
  Tensor out =
      empty({d.batch, d.q_heads, d.q_len, d.value_dim}, DType::F32, q.device());
  if (out.numel() > 0) {
    if (d.head_dim == 0) {
      // Every score is 0: the output is the mean of the attended values;
      // the unfused form handles that corner.
      out = attention_unfused(q, k, v, d, mask, o, scale, offset);
    } else {
      ops::backend_of(out).attention(kernel_shape(d, scale, offset, o), q, k, v,
                                     mask, out);
    }
  }
  const Tensor y = dtype == DType::F32 ? out : out.to(dtype);
  check_finite(y, kOp);
  return y;
}

AttentionGradients scaled_dot_product_attention_backward(
    const Tensor& grad_out, const Tensor& q_in, const Tensor& k_in,
    const Tensor& v_in, const Tensor& out_in, const AttentionOptions& o) {
  constexpr const char* kBackward = "scaled_dot_product_attention_backward";
  const ops::CheckedOperands checked(kBackward,
                                     {&grad_out, &q_in, &k_in, &v_in, &out_in});
  if (q_in.rank() == 3 && k_in.rank() == 3 && v_in.rank() == 3) {
    const AttentionGradients r = scaled_dot_product_attention_backward(
        grad_out.unsqueeze(0), q_in.unsqueeze(0), k_in.unsqueeze(0),
        v_in.unsqueeze(0), out_in.unsqueeze(0), o);
    return {r.q.squeeze(0), r.k.squeeze(0), r.v.squeeze(0)};
  }
  const Dims d = check_shapes(q_in, k_in, v_in);
  const Shape out_shape{d.batch, d.q_heads, d.q_len, d.value_dim};
  TESSEL_CHECK(grad_out.shape() == out_shape && out_in.shape() == out_shape,
               BadShape, kBackward,
               "grad_out {} and out {} must both have the output's shape {}",
               shape_string(grad_out.shape()), shape_string(out_in.shape()),
               shape_string(out_shape));
  const DType dtype =
      promote_types(promote_types(q_in.dtype(), k_in.dtype(), kBackward),
                    v_in.dtype(), kBackward);
  TESSEL_CHECK(is_floating_point(dtype) && is_floating_point(grad_out.dtype()),
               BadDType, kBackward, "needs float operands, got {}, {}, {}, {}",
               dtype_name(grad_out.dtype()), dtype_name(q_in.dtype()),
               dtype_name(k_in.dtype()), dtype_name(v_in.dtype()));
  check_options(o);
  const double scale =
      o.scale.value_or(1.0 / std::sqrt(static_cast<double>(d.head_dim)));
  const std::int64_t offset = o.causal_offset.value_or(d.kv_len - d.q_len);
  const Device device = q_in.device();
  const bool fused = dtype != DType::F64 && d.head_dim > 0 && d.value_dim > 0 &&
                     d.q_len > 0 && d.kv_len > 0;
  AttentionGradients g;
  if (!fused) {
    const DType compute = dtype == DType::F64 ? DType::F64 : DType::F32;
    g = attention_backward_unfused(grad_out, q_in, k_in, v_in, d,
                                   broadcast_mask(o.mask, d, compute, device),
                                   o, scale, offset, compute);
  } else {
    const Tensor q = kernel_operand(q_in), k = kernel_operand(k_in),
                 v = kernel_operand(v_in);
    const Tensor out = out_in.to(DType::F32).contiguous();
    const Tensor dout = grad_out.to(DType::F32).contiguous();
    g.q = empty(q.shape(), DType::F32, device);
    g.k = empty(k.shape(), DType::F32, device);
    g.v = empty(v.shape(), DType::F32, device);
    if (d.batch > 0) {
      ops::backend_of(g.q).attention_backward(
          kernel_shape(d, scale, offset, o), q, k, v,
          broadcast_mask(o.mask, d, DType::F32, device), out, dout, g.q, g.k,
          g.v);
    }
  }
  return {g.q.to(q_in.dtype()), g.k.to(k_in.dtype()), g.v.to(v_in.dtype())};
}

}  // namespace tessel

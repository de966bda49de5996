// Gradients of embedding, RoPE and attention.
#include <algorithm>
#include <cmath>

#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "ops/attention_weights.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/linalg.hpp"

namespace tessel {

using autograd::Needs;
using autograd::one_grad;
using autograd::record;

Variable embedding(const Variable& weight, const Tensor& ids) {
  const Tensor wv = weight.value();
  const Tensor y = embedding(wv, ids);
  return record(
      "embedding", y, {weight}, [wv, ids](const Tensor& g, const Needs&) {
        // Rows of the table receive the gradients of the positions that read
        // them (summed for repeated ids).
        const std::int64_t dim = wv.shape()[1], count = ids.numel();
        const Tensor idx =
            ids.to(DType::I64).reshape({count, 1}).expand({count, dim});
        return one_grad(scatter_add(zeros(wv.shape(), g.dtype(), g.device()), 0,
                                    idx.contiguous(), g.reshape({count, dim}))
                            .to(wv.dtype()));
      });
}

Variable rope_with_tables(const Variable& x, const Tensor& cos_table,
                          const Tensor& sin_table, RopeStyle style) {
  const DType d = x.dtype();
  return record(
      "rope", rope_with_tables(x.value(), cos_table, sin_table, style), {x},
      [cos_table, sin_table, style, d](const Tensor& g, const Needs&) {
        // A rotation's adjoint is the rotation by the opposite angle.
        return one_grad(
            rope_with_tables(g, cos_table, neg(sin_table), style).to(d));
      });
}

Variable rope(const Variable& x, const Tensor& positions,
              const RopeOptions& o) {
  TESSEL_CHECK(x.rank() >= 1, BadShape, "rope",
               "x must have a head dimension, got {}", shape_string(x.shape()));
  const std::int64_t rotary =
      o.rotary_dim == 0 ? x.shape()[x.rank() - 1] : o.rotary_dim;
  const RopeTables t =
      rope_tables(positions, rotary, o.theta,
                  x.dtype() == DType::F64 ? DType::F64 : DType::F32);
  return rope_with_tables(x, t.cos, t.sin, o.style);
}

namespace {

// The gradients of attention for a chunk of batch entries, recomputing the
// weights: q (B, Hq, Sq, D), k (B, Hkv, Sk, D), v (B, Hkv, Sk, Dv), g (B, Hq,
// Sq, Dv); mask (B, Hq, Sq, Sk) additive or bool, or undefined.
struct AttentionGrads {
  Tensor q, k, v;
};

AttentionGrads attention_backward(const Tensor& q, const Tensor& k,
                                  const Tensor& v, const Tensor& g,
                                  const Tensor& mask, const AttentionOptions& o,
                                  double scale, std::int64_t offset) {
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
  AttentionGrads r;
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

}  // namespace

Variable scaled_dot_product_attention(const Variable& q, const Variable& k,
                                      const Variable& v,
                                      const AttentionOptions& o) {
  if (q.rank() == 3 && k.rank() == 3 && v.rank() == 3) {
    return scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0),
                                        v.unsqueeze(0), o)
        .squeeze(0);
  }
  const Tensor qv = q.value(), kv = k.value(), vv = v.value();
  const Tensor y = scaled_dot_product_attention(qv, kv, vv, o);  // validates
  return record(
      "scaled_dot_product_attention", y, {q, k, v},
      [qv, kv, vv, o](const Tensor& g, const Needs& n) {
        const DType compute =
            qv.dtype() == DType::F64 ? DType::F64 : DType::F32;
        const std::int64_t batch = qv.shape()[0], hq = qv.shape()[1],
                           sq = qv.shape()[2];
        const std::int64_t sk = kv.shape()[2];
        const double scale = o.scale.value_or(
            1.0 / std::sqrt(static_cast<double>(qv.shape()[3])));
        const std::int64_t offset = o.causal_offset.value_or(sk - sq);
        Tensor mask;
        if (o.mask.defined()) {
          mask = o.mask.dtype() == DType::Bool ? o.mask : o.mask.to(compute);
          mask = mask.expand({batch, hq, sq, sk});
        }
        const Device device = qv.device();
        Tensor gq = empty(qv.shape(), compute, device),
               gk = empty(kv.shape(), compute, device),
               gv = empty(vv.shape(), compute, device);
        // Batch entries in chunks whose weights (chunk, Hq, Sq, Sk) stay
        // within about 4M elements: few large ops for small sequences, and
        // bounded memory for long ones.
        const std::int64_t per_entry = std::max<std::int64_t>(hq * sq * sk, 1);
        const std::int64_t chunk =
            std::clamp<std::int64_t>((std::int64_t{1} << 22) / per_entry, 1,
                                     std::max<std::int64_t>(batch, 1));
        for (std::int64_t b = 0; b < batch; b += chunk) {
          const std::int64_t e = std::min(batch, b + chunk);
          const AttentionGrads r = attention_backward(
              qv.slice(0, b, e).to(compute), kv.slice(0, b, e).to(compute),
              vv.slice(0, b, e).to(compute), g.slice(0, b, e).to(compute),
              mask.defined() ? mask.slice(0, b, e) : Tensor(), o, scale,
              offset);
          if (b == 0 && e == batch) {
            gq = r.q;
            gk = r.k;
            gv = r.v;
            break;
          }
          gq.slice(0, b, e).copy_(r.q);
          gk.slice(0, b, e).copy_(r.k);
          gv.slice(0, b, e).copy_(r.v);
        }
        return std::vector<Tensor>{n[0] ? gq.to(qv.dtype()) : Tensor(),
                                   n[1] ? gk.to(kv.dtype()) : Tensor(),
                                   n[2] ? gv.to(vv.dtype()) : Tensor()};
      });
}

}  // namespace tessel

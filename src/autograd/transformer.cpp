// Gradients of embedding, RoPE and attention.
#include <algorithm>
#include <cmath>

#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/attention.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/linalg.hpp"

namespace tessel {

using autograd::Needs;
using autograd::one_grad;
using autograd::record;

Variable embedding(const Variable& weight, const Tensor& ids) {
  const Tensor wv = weight.value();
  const Tensor y = embedding(wv, ids);
  return record("embedding", y, {weight},
                [wv, ids](const Tensor& g, const Needs&) {
                  return one_grad(
                      embedding_backward(g, ids, wv.shape()[0]).to(wv.dtype()));
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
  return record("scaled_dot_product_attention", y, {q, k, v},
                [qv, kv, vv, y, o](const Tensor& g, const Needs& n) {
                  AttentionGradients r = scaled_dot_product_attention_backward(
                      g, qv, kv, vv, y, o);
                  return std::vector<Tensor>{n[0] ? std::move(r.q) : Tensor(),
                                             n[1] ? std::move(r.k) : Tensor(),
                                             n[2] ? std::move(r.v) : Tensor()};
                });
}

}  // namespace tessel

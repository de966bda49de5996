// Embedding lookup and rotary position embedding: checks and tables here,
// the rotation kernel in backends/cpu/rope.cpp.
#include "tessel/ops/embedding.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/indexing.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

// "(1, 3)": where the flat index `flat` sits in `shape`.
std::string position_of(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_string(idx);
}

// `ids` as contiguous i64, every one checked to lie in [0, table[0]) (E2302
// naming it, where it is and the `what` table) when the device holds values.
Tensor checked_ids(const Tensor& ids, const Shape& table, const char* what,
                   const char* op) {
  const std::int64_t rows = table[0];
  TESSEL_CHECK(is_integral(ids.dtype()) && ids.dtype() != DType::Bool, BadDType,
               op, "ids must be integers, got {}", dtype_name(ids.dtype()));
  const Tensor flat = ids.to(DType::I64).contiguous();
  // Ids on a device without data (meta) have no values to check.
  const std::int64_t* p = ops::backend_of(flat).has_data()
                              ? flat.const_data<std::int64_t>()
                              : nullptr;
  for (std::int64_t i = 0; p != nullptr && i < flat.numel(); ++i) {
    TESSEL_CHECK(p[i] >= 0 && p[i] < rows, OutOfRange, op,
                 "id {} at {} of ids {} is outside the {} rows of {} {}", p[i],
                 position_of(i, ids.shape()), shape_string(ids.shape()), rows,
                 what, shape_string(table));
  }
  return flat;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  const char* op = "embedding";
  ops::check_defined(op, weight, "weight");
  ops::check_defined(op, ids, "ids");
  const ops::CheckedOperands checked(op, {&weight, &ids});
  rules::embedding(weight.shape(), ids.shape(), op);
  const Tensor flat = checked_ids(ids, weight.shape(), "weight", op);
  if (is_block_quantized(weight.dtype())) {
    // GGUF token embeddings stay in blocks: each chosen row dequantises to
    // f32 (DESIGN §1 rule 4), the table itself is never expanded.
    const std::int64_t count = flat.numel(), dim = weight.shape()[1];
    Tensor out = empty({count, dim}, DType::F32, weight.device());
    const std::int64_t* p = flat.const_data<std::int64_t>();
    for (std::int64_t i = 0; i < count; ++i) {
      out.select(0, i).copy_(weight.select(0, p[i]).to(DType::F32));
    }
    Shape shape = ids.shape();
    shape.push_back(dim);
    return out.reshape(shape);
  }
  return gather(weight, flat, 0);
}

Tensor embedding_backward(const Tensor& grad_out, const Tensor& ids,
                          std::int64_t num_embeddings) {
  const char* op = "embedding_backward";
  ops::check_defined(op, grad_out, "grad_out");
  ops::check_defined(op, ids, "ids");
  const ops::CheckedOperands checked(op, {&grad_out, &ids});
  TESSEL_CHECK(num_embeddings >= 0, BadShape, op,
               "num_embeddings must be non-negative, got {}", num_embeddings);
  const bool fits = grad_out.rank() == ids.rank() + 1 &&
                    std::equal(ids.shape().begin(), ids.shape().end(),
                               grad_out.shape().begin());
  TESSEL_CHECK(fits, BadShape, op,
               "grad_out {} must be the ids' shape {} plus one axis",
               shape_string(grad_out.shape()), shape_string(ids.shape()));
  TESSEL_CHECK(is_floating_point(grad_out.dtype()), BadDType, op,
               "needs a float grad_out, got {}", dtype_name(grad_out.dtype()));
  const std::int64_t dim = grad_out.shape().back();
  const Tensor flat =
      checked_ids(ids, {num_embeddings, dim}, "the gradient", op);
  const std::int64_t count = flat.numel();
  const DType acc = grad_out.dtype() == DType::F64 ? DType::F64 : DType::F32;
  Tensor out = zeros({num_embeddings, dim}, acc, grad_out.device());
  if (count > 0 && dim > 0) {
    ops::backend_of(out).scatter_add_rows(
        out, flat, grad_out.to(acc).reshape({count, dim}).contiguous());
  }
  return acc == grad_out.dtype() ? out : out.to(grad_out.dtype());
}

RopeTables rope_tables(const Tensor& positions, std::int64_t rotary_dim,
                       double theta, DType dtype) {
  const char* op = "rope_tables";
  const ops::CheckedOperands checked(op, positions, "positions");
  TESSEL_CHECK(rotary_dim > 0 && rotary_dim % 2 == 0, BadShape, op,
               "rotary_dim must be positive and even, got {}", rotary_dim);
  TESSEL_CHECK(theta > 0 && std::isfinite(theta), BadShape, op,
               "theta must be positive and finite, got {}", theta);
  const DType pd = positions.dtype();
  TESSEL_CHECK(pd != DType::Bool && pd != DType::I4 && pd != DType::U4 &&
                   (is_floating_point(pd) || is_integral(pd)),
               BadDType, op, "positions must be real numbers, got {}",
               dtype_name(positions.dtype()));
  const std::int64_t half = rotary_dim / 2;
  // inv_freq[i] = theta^(-2i / rotary_dim), in f64.
  const Tensor i = arange(half, DType::F64).to(positions.device());
  const Tensor inv_freq =
      pow(Scalar(theta), mul(i, -2.0 / static_cast<double>(rotary_dim)));
  const Tensor angles = mul(positions.to(DType::F64).unsqueeze(-1), inv_freq);
  return {cos(angles).to(dtype), sin(angles).to(dtype)};
}

Tensor rope(const Tensor& x, const Tensor& positions, const RopeOptions& o) {
  const ops::CheckedOperands checked("rope", x, "x");
  TESSEL_CHECK(x.rank() >= 1, BadShape, "rope",
               "x must have a head dimension, got {}", shape_string(x.shape()));
  const std::int64_t rotary =
      o.rotary_dim == 0 ? x.shape()[x.rank() - 1] : o.rotary_dim;
  const DType table = x.dtype() == DType::F64 ? DType::F64 : DType::F32;
  const RopeTables t = rope_tables(positions, rotary, o.theta, table);
  return rope_with_tables(x, t.cos, t.sin, o.style);
}

Tensor rope_with_tables(const Tensor& x, const Tensor& cos_table,
                        const Tensor& sin_table, RopeStyle style) {
  const char* op = "rope";
  ops::check_defined(op, x, "x");
  ops::check_defined(op, cos_table, "cos");
  ops::check_defined(op, sin_table, "sin");
  const ops::CheckedOperands checked(op, {&x, &cos_table, &sin_table});
  TESSEL_CHECK(is_floating_point(x.dtype()), BadDType, op,
               "x must be float, got {}", dtype_name(x.dtype()));
  TESSEL_CHECK(x.rank() >= 1, BadShape, op,
               "x must have a head dimension, got {}", shape_string(x.shape()));
  TESSEL_CHECK(cos_table.shape() == sin_table.shape(), BadShape, op,
               "cos {} and sin {} tables differ in shape",
               shape_string(cos_table.shape()),
               shape_string(sin_table.shape()));
  TESSEL_CHECK(cos_table.rank() >= 1, BadShape, op,
               "the tables need a last axis");
  const std::int64_t head_dim = x.shape()[x.rank() - 1];
  const std::int64_t half = cos_table.shape()[cos_table.rank() - 1];
  TESSEL_CHECK(2 * half <= head_dim && half >= 1, BadShape, op,
               "tables {} rotate {} dimensions but x {} has head_dim {}",
               shape_string(cos_table.shape()), 2 * half,
               shape_string(x.shape()), head_dim);
  // Tables broadcast against x.shape[:-1] + (half).
  Shape target(x.shape().begin(), x.shape().end() - 1);
  target.push_back(half);
  bool fits = cos_table.rank() <= static_cast<std::int64_t>(target.size());
  for (std::int64_t i = 1; fits && i <= cos_table.rank(); ++i) {
    const std::int64_t e = cos_table.shape()[cos_table.rank() - i];
    fits = e == 1 || e == target[target.size() - static_cast<std::size_t>(i)];
  }
  TESSEL_CHECK(fits, BadShape, op,
               "tables {} do not broadcast against x {} (want {})",
               shape_string(cos_table.shape()), shape_string(x.shape()),
               shape_string(target));

  const DType compute = x.dtype() == DType::F64 ? DType::F64 : DType::F32;
  const DType kernel =
      x.dtype() == DType::F8E4M3FN || x.dtype() == DType::F8E5M2 ? DType::F32
                                                                 : x.dtype();
  const Tensor c = cos_table.to(compute).contiguous(),
               s = sin_table.to(compute).contiguous();
  const Tensor ce = c.expand(target), se = s.expand(target);
  RopeProblem p;
  p.head_dim = head_dim;
  p.rotary_dim = 2 * half;
  p.interleaved = style == RopeStyle::GPTJ;
  p.row_shape.assign(target.begin(), target.end() - 1);
  p.table_strides.assign(ce.strides().begin(), ce.strides().end() - 1);
  const Tensor xk = x.to(kernel).contiguous();
  Tensor y = empty(x.shape(), kernel, x.device());
  if (y.numel() > 0) ops::backend_of(y).rope(p, xk, y, ce, se);
  return kernel == x.dtype() ? y : y.to(x.dtype());
}

}  // namespace tessel

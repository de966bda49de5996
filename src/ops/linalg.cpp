// matmul and friends: shape rules and dtype choice here; the GEMM itself
// is the backend's (the CPU's engine choice is in backends/cpu/matmul.cpp).
#include "tessel/ops/linalg.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <string>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/core/matmul_precision.hpp"
#include "tessel/ops/complex.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

namespace {

// The dtype a product of a and b is computed and returned in.
DType product_dtype(DType a, DType b, const char* op) {
  TESSEL_CHECK(a != DType::Bool && b != DType::Bool, BadDType, op,
               "not defined for bool operands ({} and {})", dtype_name(a),
               dtype_name(b));
  const bool a8 = a == DType::I8 || a == DType::U8;
  const bool b8 = b == DType::I8 || b == DType::U8;
  if (a8 && b8) return DType::I32;  // exact 8-bit products, VNNI-friendly
  return promote_types(a, b, op);
}

Tensor with_rank(const Tensor& t, std::size_t rank) {
  Tensor r = t;
  while (r.shape().size() < rank) r = r.unsqueeze(0);
  return r;
}

// (ar + i ai)(br + i bi) = (ar br - ai bi) + i (ar bi + ai br): four real
// GEMMs on the parts, so complex products run on the real kernels (the
// three-product form saves one GEMM but loses digits to cancellation).
void complex_matmul(const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor ar = real(a);
  const Tensor ai = imag(a);
  const Tensor br = real(b);
  const Tensor bi = imag(b);
  sub_out(real(out), matmul(ar, br), matmul(ai, bi));
  add_out(imag(out), matmul(ar, bi), matmul(ai, br));
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  const ops::CheckedOperands checked("matmul", {&a_in, &b_in});
  const Device device = checked.device();
  TESSEL_CHECK(a_in.rank() >= 1 && b_in.rank() >= 1, BadShape, "matmul",
               "operands need at least one axis, got shapes {} and {}",
               shape_string(a_in.shape()), shape_string(b_in.shape()));
  const DType dtype = product_dtype(a_in.dtype(), b_in.dtype(), "matmul");
  const Tensor a = a_in.rank() == 1 ? a_in.unsqueeze(0) : a_in;
  const Tensor b = b_in.rank() == 1 ? b_in.unsqueeze(1) : b_in;
  // The shared rule (core/shape_rules.hpp) validates and gives the result;
  // the GEMM runs on the promoted operands, so their axes go back in.
  Shape shape = rules::matmul<Shape>(a_in.shape(), b_in.shape(), "matmul");
  if (a_in.rank() == 1) shape.insert(shape.size() - (b_in.rank() > 1), 1);
  if (b_in.rank() == 1) shape.push_back(1);
  const std::size_t rank = shape.size();
  // Mixed operands are cast to the product dtype; 8-bit pairs stay as they
  // are for the integer kernel.
  const bool int8 = dtype == DType::I32 && element_size(a.dtype()) == 1 &&
                    element_size(b.dtype()) == 1;
  const Tensor ac = with_rank(int8 ? a : a.to(dtype), rank);
  const Tensor bc = with_rank(int8 ? b : b.to(dtype), rank);
  Tensor out = empty(shape, dtype, device);
  if (out.numel() > 0) {
    if (is_complex(dtype)) {
      complex_matmul(ac, bc, out);
    } else {
      ops::backend_of(out).matmul(ac, bc, nullptr, out);
    }
  }
  if (a_in.rank() == 1) out = out.squeeze(-2);
  if (b_in.rank() == 1) out = out.squeeze(-1);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  const ops::CheckedOperands checked("dot", {&a, &b});
  (void)rules::dot(a.shape(), b.shape(), "dot");
  return matmul(a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  const ops::CheckedOperands checked("outer", {&a, &b});
  TESSEL_CHECK(a.rank() == 1 && b.rank() == 1, BadShape, "outer",
               "needs two 1-D tensors, got shapes {} and {}",
               shape_string(a.shape()), shape_string(b.shape()));
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}

namespace {

// What linear(x, weight, bias) computes, after its checks.
struct LinearPlan {
  Shape shape;     // the result's
  std::int64_t m;  // x's leading axes, flattened
  std::int64_t k;
  std::int64_t n;
  DType dtype;  // of the arithmetic and the result
  // The weight multiplies as stored (Backend::narrow_weight_linear), with x
  // in x_dtype.
  bool narrow;
  DType x_dtype;
};

LinearPlan plan_linear(const Tensor& x, const Tensor& weight,
                       const Tensor& bias, const char* op) {
  LinearPlan p;
  p.shape = rules::linear<Shape>(x.shape(), weight.shape(), op);
  p.k = weight.shape()[1];
  p.n = weight.shape()[0];
  if (bias.defined()) {
    TESSEL_CHECK(bias.rank() == 1 && bias.shape()[0] == p.n, BadShape, op,
                 "bias {} must be [{}] for weight {}",
                 shape_string(bias.shape()), p.n, shape_string(weight.shape()));
  }
  p.dtype = product_dtype(x.dtype(), weight.dtype(), op);
  if (bias.defined()) p.dtype = promote_types(p.dtype, bias.dtype(), op);
  // x's leading axes flattened into M, counted rather than inferred: an
  // empty reduction (K = 0) leaves reshape nothing to infer -1 from.
  p.m = 1;
  for (std::size_t i = 0; i + 1 < x.shape().size(); ++i) p.m *= x.shape()[i];
  // GGUF weights (blocks along K) and 16-bit weights under f32 activations
  // (a bf16 checkpoint run in f32) multiply as stored: the backend never
  // widens W whole (DESIGN §1 rule 4 still decides the f32 result).
  const bool narrow_dtype = is_block_quantized(weight.dtype()) ||
                            weight.dtype() == DType::F16 ||
                            weight.dtype() == DType::BF16;
  p.narrow = narrow_dtype && p.dtype == DType::F32 && p.k > 0 &&
             (is_block_quantized(weight.dtype()) || weight.stride(1) == 1);
  // MatmulPrecision::BF16: the activations reach the backend rounded.
  p.x_dtype = weight.dtype() == DType::BF16 &&
                      matmul_precision() == MatmulPrecision::BF16
                  ? DType::BF16
                  : DType::F32;
  return p;
}

// The products of x with weights that multiply as stored (every plan
// narrow, of one x_dtype), in one backend call; biases[i] may be
// undefined.
std::vector<Tensor> narrow_linears(const Tensor& x,
                                   std::span<const Tensor> weights,
                                   std::span<const Tensor> biases,
                                   std::span<const LinearPlan> plans) {
  const Tensor x2 =
      x.reshape({plans[0].m, plans[0].k}).to(plans[0].x_dtype).contiguous();
  std::vector<Tensor> outs, b(weights.size());
  std::vector<const Tensor*> bias_ptrs(weights.size(), nullptr);
  bool empty_product = false;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    outs.push_back(empty({plans[i].m, plans[i].n}, DType::F32, x.device()));
    empty_product = empty_product || outs.back().numel() == 0;
    if (biases[i].defined()) {
      b[i] = biases[i].to(DType::F32).contiguous();
      bias_ptrs[i] = &b[i];
    }
  }
  if (!empty_product) {
    ops::backend_of(outs[0]).narrow_weight_linears(x2, weights, bias_ptrs,
                                                   outs);
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    outs[i] = outs[i].reshape(plans[i].shape);
  }
  return outs;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  const ops::CheckedOperands checked("linear", {&x, &weight});
  const LinearPlan p = plan_linear(x, weight, bias, "linear");
  if (p.narrow) return narrow_linears(x, {&weight, 1}, {&bias, 1}, {&p, 1})[0];
  // Flatten the leading axes of x into M: one GEMM with a fused bias.
  const DType dtype = p.dtype;
  const Tensor x2 = x.reshape({p.m, p.k}).to(dtype);
  const Tensor wt = weight.to(dtype).transpose(0, 1);  // [K, N], no copy
  Tensor out = empty({p.m, p.n}, dtype, x.device());
  const Tensor b = bias.defined() ? bias.to(dtype) : Tensor();
  if (dtype == DType::I32 && element_size(x.dtype()) == 1) {
    return add(matmul(x, weight.transpose(0, 1)),
               bias.defined() ? b : full({}, 0, dtype))
        .to(dtype)
        .reshape(p.shape);
  }
  if (out.numel() > 0)
    ops::backend_of(out).matmul(x2, wt, bias.defined() ? &b : nullptr, out);
  return out.reshape(p.shape);
}

std::vector<Tensor> linear_shared(const Tensor& x,
                                  const std::vector<Tensor>& weights,
                                  const std::vector<Tensor>& biases) {
  constexpr const char* op = "linear_shared";
  TESSEL_CHECK(biases.empty() || biases.size() == weights.size(), BadShape, op,
               "{} biases for {} weights: give one per weight (an "
               "undefined tensor for none) or none",
               biases.size(), weights.size());
  std::vector<Tensor> bias = biases;
  bias.resize(weights.size());
  std::vector<Tensor> operands{x};
  operands.insert(operands.end(), weights.begin(), weights.end());
  const ops::CheckedOperands checked(op, std::span<const Tensor>(operands));
  // Block-quantised weights multiplying f32 rows as stored are what a
  // backend can share work between (x quantised once); anything else is
  // one linear per weight.
  bool shared = weights.size() > 1;
  std::vector<LinearPlan> plans;
  for (std::size_t i = 0; i < weights.size() && shared; ++i) {
    plans.push_back(plan_linear(x, weights[i], bias[i], op));
    shared = plans.back().narrow && is_block_quantized(weights[i].dtype());
  }
  if (shared) return narrow_linears(x, weights, bias, plans);
  std::vector<Tensor> outs;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    outs.push_back(linear(x, weights[i], bias[i]));
  }
  return outs;
}

// ---- einsum ----

namespace {

struct Term {
  std::string labels;  // one char per axis, ellipsis axes as '0'..'9'...
};

// Expands "..." into placeholder labels (upper-case letters from 'A' on are
// reserved for them; operands use lower or upper case letters too, so the
// placeholders come from a private range).
std::string expand_ellipsis(const std::string& term, std::int64_t rank,
                            std::int64_t ellipsis_rank, const char* op) {
  const auto at = term.find("...");
  if (at == std::string::npos) return term;
  std::string out = term.substr(0, at);
  const std::int64_t named = static_cast<std::int64_t>(term.size()) - 3;
  const std::int64_t here = rank - named;
  TESSEL_CHECK(here >= 0, BadShape, op,
               "'{}' names more axes than the operand has ({})", term, rank);
  for (std::int64_t i = ellipsis_rank - here; i < ellipsis_rank; ++i) {
    out.push_back(static_cast<char>(0x01 + i));  // private labels
  }
  out += term.substr(at + 3);
  return out;
}

// Takes the diagonal over repeated labels and sums labels that appear in
// no other operand and not in the output.
Tensor reduce_own_labels(Tensor t, std::string& labels,
                         const std::string& keep) {
  // Diagonals: a repeated label becomes one axis with the summed stride.
  for (std::size_t i = 0; i < labels.size(); ++i) {
    for (std::size_t j = i + 1; j < labels.size();) {
      if (labels[j] != labels[i]) {
        ++j;
        continue;
      }
      TESSEL_CHECK(t.shape()[i] == t.shape()[j], BadShape, "einsum",
                   "label '{}' has extents {} and {}", labels[i], t.shape()[i],
                   t.shape()[j]);
      Shape shape = t.shape();
      Strides strides = t.strides();
      strides[i] += strides[j];
      shape.erase(j);
      strides.erase(j);
      t = Tensor(t.storage(), shape, strides, t.storage_offset(), t.dtype());
      labels.erase(j, 1);
    }
  }
  Axes summed;
  std::string remaining;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (keep.find(labels[i]) == std::string::npos) {
      summed.push_back(static_cast<std::int64_t>(i));
    } else {
      remaining.push_back(labels[i]);
    }
  }
  if (!summed.empty()) t = sum(t, summed);
  labels = remaining;
  return t;
}

Tensor permute_to(const Tensor& t, const std::string& labels,
                  const std::string& order) {
  std::vector<std::int64_t> perm;
  for (char c : order)
    perm.push_back(static_cast<std::int64_t>(labels.find(c)));
  return t.permute(std::span<const std::int64_t>(perm));
}

}  // namespace

Tensor einsum(std::string_view equation_in,
              const std::vector<Tensor>& operands) {
  std::string equation;
  for (char c : equation_in) {
    if (c != ' ') equation.push_back(c);
  }
  TESSEL_CHECK(operands.size() == 1 || operands.size() == 2, BadShape, "einsum",
               "supports one or two operands, got {}", operands.size());
  const ops::CheckedOperands checked("einsum", operands);
  const auto arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  TESSEL_CHECK(terms.size() == operands.size(), BadShape, "einsum",
               "'{}' has {} terms for {} operands", equation, terms.size(),
               operands.size());
  // Ellipsis rank: the most axes any "..." stands for.
  std::int64_t ellipsis_rank = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].find("...") != std::string::npos) {
      ellipsis_rank = std::max(
          ellipsis_rank,
          operands[i].rank() - static_cast<std::int64_t>(terms[i].size() - 3));
    }
  }
  std::vector<std::string> labels;
  std::vector<Tensor> ts;
  std::map<char, int> count;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    labels.push_back(
        expand_ellipsis(terms[i], operands[i].rank(), ellipsis_rank, "einsum"));
    TESSEL_CHECK(
        static_cast<std::int64_t>(labels.back().size()) == operands[i].rank(),
        BadShape, "einsum",
        "term '{}' has {} labels for an operand of shape {}", terms[i],
        labels.back().size(), shape_string(operands[i].shape()));
    for (char c : labels.back()) ++count[c];
    ts.push_back(operands[i]);
  }
  std::string output;
  if (arrow != std::string::npos) {
    const std::string term = equation.substr(arrow + 2);
    const bool has_ellipsis = term.find("...") != std::string::npos;
    const auto rank = static_cast<std::int64_t>(term.size()) -
                      (has_ellipsis ? 3 : 0) +
                      (has_ellipsis ? ellipsis_rank : 0);
    output = expand_ellipsis(term, rank, ellipsis_rank, "einsum");
  } else {
    // Implicit output: ellipsis axes first, then labels used exactly once.
    for (std::int64_t i = 0; i < ellipsis_rank; ++i)
      output.push_back(static_cast<char>(0x01 + i));
    for (const auto& [c, n] : count) {
      if (n == 1 && static_cast<unsigned char>(c) > 0x20) output.push_back(c);
    }
  }
  for (std::size_t i = 0; i < output.size(); ++i) {
    TESSEL_CHECK(output.find(output[i], i + 1) == std::string::npos, BadShape,
                 "einsum", "output label '{}' repeats in '{}'", output[i],
                 equation);
  }
  for (char c : output) {
    TESSEL_CHECK(count.count(c) > 0, BadShape, "einsum",
                 "output label '{}' is in no operand of '{}'", c, equation);
  }
  if (ts.size() == 1) {
    std::string l = labels[0];
    Tensor t = reduce_own_labels(ts[0], l, output);
    return permute_to(t, l, output).contiguous();
  }
  // Two operands: diagonals and private sums first.
  std::string la = labels[0], lb = labels[1];
  Tensor a = reduce_own_labels(ts[0], la, lb + output);
  Tensor b = reduce_own_labels(ts[1], lb, la + output);
  std::string batch, left, right, contracted;
  for (char c : la) {
    const bool in_b = lb.find(c) != std::string::npos;
    const bool in_out = output.find(c) != std::string::npos;
    if (in_b && in_out)
      batch.push_back(c);
    else if (in_b)
      contracted.push_back(c);
    else
      left.push_back(c);
  }
  for (char c : lb) {
    if (la.find(c) == std::string::npos) right.push_back(c);
  }
  auto extent = [&](const Tensor& t, const std::string& l, char c) {
    return t.shape()[static_cast<std::size_t>(l.find(c))];
  };
  // Broadcast batch labels (ellipsis axes of extent 1 on one side).
  Shape batch_shape;
  for (char c : batch)
    batch_shape.push_back(std::max(extent(a, la, c), extent(b, lb, c)));
  auto product = [&](const Tensor& t, const std::string& l,
                     const std::string& group) {
    std::int64_t p = 1;
    for (char c : group) p *= extent(t, l, c);
    return p;
  };
  for (char c : contracted) {
    TESSEL_CHECK(extent(a, la, c) == extent(b, lb, c), InnerDimMismatch,
                 "einsum",
                 "label '{}' has extent {} in one operand and {} in the other",
                 c, extent(a, la, c), extent(b, lb, c));
  }
  Shape a_target = batch_shape, b_target = batch_shape;
  for (char c : left + contracted) a_target.push_back(extent(a, la, c));
  for (char c : contracted + right) b_target.push_back(extent(b, lb, c));
  const std::int64_t nb = checked_numel(batch_shape);
  const std::int64_t m = product(a, la, left), k = product(a, la, contracted),
                     n = product(b, lb, right);
  const Tensor a3 = permute_to(a, la, batch + left + contracted)
                        .expand(a_target)
                        .reshape({nb, m, k});
  const Tensor b3 = permute_to(b, lb, batch + contracted + right)
                        .expand(b_target)
                        .reshape({nb, k, n});
  Tensor r = matmul(a3, b3);
  Shape r_shape = batch_shape;
  for (char c : left) r_shape.push_back(extent(a, la, c));
  for (char c : right) r_shape.push_back(extent(b, lb, c));
  r = r.reshape(r_shape);
  return permute_to(r, batch + left + right, output).contiguous();
}

}  // namespace tessel

// The reduction op layer: axes, result dtypes, empty extents, and the
// canonical (A, R, B) view the kernels work on.
#include "tessel/ops/reduce.hpp"

#include <cmath>
#include <limits>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/core/numerics.hpp"
#include "tessel/ops/complex.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Any: return "any";
    case ReduceOp::All: return "all";
    case ReduceOp::SumSquares: return "sum_squares";
    case ReduceOp::L1:
    case ReduceOp::L2:
    case ReduceOp::LInf: return "norm";
    case ReduceOp::LogSumExp: return "logsumexp";
    case ReduceOp::ArgMax: return "argmax";
    case ReduceOp::ArgMin: return "argmin";
    case ReduceOp::Var: return "var";
    case ReduceOp::Std: return "std";
  }
  return "reduce";
}

// The input after DESIGN §1 rule 4 (packed and block types count as f32).
Tensor operand(const Tensor& x, const char* op) {
  const ops::CheckedOperands checked(op, x, "the tensor");
  return is_byte_addressable(x.dtype()) ? x : x.to(DType::F32);
}

DType widened_integer(DType t) {
  return is_integral(t) && !is_signed(t) ? DType::U64 : DType::I64;
}

DType result_dtype(ReduceOp op, DType in) {
  const bool is_float = is_floating_point(in) || is_complex(in);
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::SumSquares:
    case ReduceOp::L1: return is_float ? in : widened_integer(in);
    case ReduceOp::Max:
    case ReduceOp::Min: return in;
    case ReduceOp::Any:
    case ReduceOp::All: return DType::Bool;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: return DType::I64;
    default: return float_result_type(in);
  }
}

struct Plan {
  Tensor input;  // contiguous, laid out as (A, R, B)
  ReduceShape shape;
  Shape out_shape;
};

Plan plan(const Tensor& x, const SmallVector<bool, 8>& mask, bool keepdims) {
  const auto rank = x.shape().size();
  Plan p;
  std::int64_t kept_before = 1, reduced = 1, kept_after = 1;
  std::size_t first = rank, last = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (mask[d]) {
      first = std::min(first, d);
      last = d;
      reduced *= x.shape()[d];
    }
    if (!mask[d] || keepdims) p.out_shape.push_back(mask[d] ? 1 : x.shape()[d]);
  }
  bool block = true;  // the reduced axes are adjacent
  for (std::size_t d = first; d <= last && first < rank; ++d)
    block = block && mask[d];
  if (first == rank) {  // nothing to reduce (a rank-0 tensor)
    p.input = x.contiguous();
    p.shape = {x.numel(), 1, 1};
    return p;
  }
  if (block) {
    for (std::size_t d = 0; d < first; ++d) kept_before *= x.shape()[d];
    for (std::size_t d = last + 1; d < rank; ++d) kept_after *= x.shape()[d];
    p.input = x.contiguous();
    p.shape = {kept_before, reduced, kept_after};
    return p;
  }
  // Scattered axes: kept axes first, reduced last, then one copy.
  SmallVector<std::int64_t, 8> order;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!mask[d]) {
      order.push_back(static_cast<std::int64_t>(d));
      kept_before *= x.shape()[d];
    }
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (mask[d]) order.push_back(static_cast<std::int64_t>(d));
  }
  p.input = x.permute(std::span<const std::int64_t>(order.data(), order.size()))
                .contiguous();
  p.shape = {kept_before, reduced, 1};
  return p;
}

// The value of a reduction over nothing, or E2102 when there is none.
Scalar empty_reduction(ReduceOp op, const Tensor& x, const char* name) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::SumSquares:
    case ReduceOp::L1:
    case ReduceOp::L2:
    case ReduceOp::LInf: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Any: return false;
    case ReduceOp::All: return true;
    case ReduceOp::LogSumExp: return -std::numeric_limits<double>::infinity();
    case ReduceOp::Mean:
    case ReduceOp::Var:
    case ReduceOp::Std: return std::numeric_limits<double>::quiet_NaN();
    default: break;
  }
  detail::fail(ErrorCode::BadShape, name,
               "cannot reduce over an empty extent (shape {}): there is no "
               "identity for {}",
               shape_string(x.shape()), name);
}

Tensor reduce(ReduceOp op, const Tensor& x_in, const Axes& axes, bool keepdims,
              double correction = 1.0);

// Complex sums and means are the real reduction of view_as_real over the
// same axes (the component axis kept): the SIMD paths, no complex kernel.
Tensor reduce_parts(ReduceOp op, const Tensor& x,
                    const SmallVector<bool, 8>& mask, bool keepdims) {
  Axes real_axes;
  for (std::size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) real_axes.push_back(static_cast<std::int64_t>(d));
  }
  if (real_axes.empty()) return x.clone();  // a rank-0 tensor
  const Tensor parts = reduce(op, view_as_real(x), real_axes, keepdims);
  return view_as_complex(parts.contiguous());
}

Tensor reduce(ReduceOp op, const Tensor& x_in, const Axes& axes, bool keepdims,
              double correction) {
  const char* name = op_name(op);
  const Tensor x = operand(x_in, name);
  const auto rank = static_cast<std::int64_t>(x.shape().size());
  const auto mask = rules::reduced_axes(axes, rank, name);
  if (is_complex(x.dtype())) {
    // any/all test "nonzero"; products have a kernel; the other
    // reductions need an order or are real-only (not in the array API).
    if (op == ReduceOp::Any || op == ReduceOp::All)
      return reduce(op, ne(x, Scalar(0)), axes, keepdims);
    TESSEL_CHECK(
        op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Prod,
        BadDType, name, "is not defined for complex tensors ({})",
        dtype_name(x.dtype()));
    if (op != ReduceOp::Prod) return reduce_parts(op, x, mask, keepdims);
  }
  Plan p = plan(x, mask, keepdims);
  const DType out_dtype = result_dtype(op, x.dtype());
  if (p.shape.reduce == 0) {
    return full(p.out_shape, empty_reduction(op, x, name), out_dtype,
                x.device());
  }
  Tensor out = empty(p.out_shape, out_dtype, x.device());
  if (out.numel() > 0)
    ops::backend_of(out).reduce(op, correction, p.input, out, p.shape);
  return out;
}

Tensor checked(Tensor t, const char* op) {
  check_finite(t, op);
  return t;
}

// (A, R, B) around one axis of a contiguous copy.
Plan axis_plan(const Tensor& x, std::int64_t axis, const char* op) {
  const auto rank = static_cast<std::int64_t>(x.shape().size());
  Plan p;
  p.input = x.contiguous();
  p.out_shape = x.shape();
  if (rank == 0) {
    p.shape = {1, 1, 1};
    return p;
  }
  const auto a = normalize_axis(axis, rank, op);
  std::int64_t before = 1, after = 1;
  for (std::int64_t d = 0; d < a; ++d) before *= x.shape()[d];
  for (std::int64_t d = a + 1; d < rank; ++d) after *= x.shape()[d];
  p.shape = {before, x.shape()[a], after};
  return p;
}

Tensor scan(bool product, const Tensor& x_in, std::int64_t axis, bool exclusive,
            bool reverse) {
  const char* name = product ? "cumprod" : "cumsum";
  const Tensor x = operand(x_in, name);
  if (is_complex(x.dtype()) && !product) {
    // A running sum of complex values is the running sum of each part:
    // the real scan of view_as_real along the same axis.
    const Tensor v = x.rank() == 0 ? x.reshape({1}) : x;
    const std::int64_t a = normalize_axis(axis, v.rank(), name);
    return view_as_complex(
               scan(false, view_as_real(v), a, exclusive, reverse).contiguous())
        .reshape(x.shape());
  }
  Plan p = axis_plan(x, axis, name);
  const DType dtype = is_floating_point(x.dtype()) || is_complex(x.dtype())
                          ? x.dtype()
                          : widened_integer(x.dtype());
  Tensor out = empty(p.out_shape, dtype, x.device());
  if (out.numel() > 0)
    ops::backend_of(out).cumulative(product, exclusive, reverse, p.input, out,
                                    p.shape);
  return out;
}

Tensor softmax_like(SoftmaxKind kind, const Tensor& x_in, std::int64_t axis,
                    const char* name) {
  const Tensor x = operand(x_in, name);
  const DType dtype = float_result_type(x.dtype());
  Plan p = axis_plan(x.to(dtype), axis, name);
  Tensor out = empty(p.out_shape, dtype, x.device());
  if (out.numel() > 0)
    ops::backend_of(out).softmax(kind, p.input, out, p.shape);
  return checked(out, name);
}

Tensor arg_reduce(ReduceOp op, const Tensor& x,
                  std::optional<std::int64_t> axis, bool keepdims) {
  if (axis) return reduce(op, x, Axes{*axis}, keepdims);
  // No axis: the index into the flattened tensor.
  Tensor flat = reduce(op, x.reshape({-1}), Axes{0}, false);
  if (!keepdims) return flat;
  return flat.reshape(Shape(x.shape().size(), 1));
}

}  // namespace

Tensor sum(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Sum, x, axes, keepdims);
}
Tensor prod(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Prod, x, axes, keepdims);
}
Tensor mean(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Mean, x, axes, keepdims);
}
Tensor max(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Max, x, axes, keepdims);
}
Tensor min(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Min, x, axes, keepdims);
}
Tensor any(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::Any, x, axes, keepdims);
}
Tensor all(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::All, x, axes, keepdims);
}
Tensor var(const Tensor& x, Axes axes, double correction, bool keepdims) {
  return reduce(ReduceOp::Var, x, axes, keepdims, correction);
}
Tensor std(const Tensor& x, Axes axes, double correction, bool keepdims) {
  return reduce(ReduceOp::Std, x, axes, keepdims, correction);
}
Tensor norm(const Tensor& x, double ord, Axes axes, bool keepdims) {
  ReduceOp op = ReduceOp::L2;
  if (ord == 1.0) {
    op = ReduceOp::L1;
  } else if (std::isinf(ord) && ord > 0) {
    op = ReduceOp::LInf;
  } else {
    TESSEL_CHECK(ord == 2.0, BadShape, "norm",
                 "ord must be 1, 2 or infinity, got {}", ord);
  }
  const Tensor r = reduce(op, x, axes, keepdims);
  // The L1 norm of integers is exact like sum; the others are floats.
  return checked(op == ReduceOp::L1 ? r : r.to(float_result_type(r.dtype())),
                 "norm");
}
Tensor sum_squares(const Tensor& x, Axes axes, bool keepdims) {
  return reduce(ReduceOp::SumSquares, x, axes, keepdims);
}
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdims) {
  return checked(reduce(ReduceOp::LogSumExp, x, axes, keepdims), "logsumexp");
}
Tensor argmax(const Tensor& x, std::optional<std::int64_t> axis,
              bool keepdims) {
  return arg_reduce(ReduceOp::ArgMax, x, axis, keepdims);
}
Tensor argmin(const Tensor& x, std::optional<std::int64_t> axis,
              bool keepdims) {
  return arg_reduce(ReduceOp::ArgMin, x, axis, keepdims);
}
Tensor cumsum(const Tensor& x, std::int64_t axis, bool exclusive,
              bool reverse) {
  return scan(false, x, axis, exclusive, reverse);
}
Tensor cumprod(const Tensor& x, std::int64_t axis, bool exclusive,
               bool reverse) {
  return scan(true, x, axis, exclusive, reverse);
}
Tensor softmax(const Tensor& x, std::int64_t axis) {
  return softmax_like(SoftmaxKind::Softmax, x, axis, "softmax");
}
Tensor log_softmax(const Tensor& x, std::int64_t axis) {
  return softmax_like(SoftmaxKind::LogSoftmax, x, axis, "log_softmax");
}
Tensor hardmax(const Tensor& x, std::int64_t axis) {
  return softmax_like(SoftmaxKind::Hardmax, x, axis, "hardmax");
}

}  // namespace tessel

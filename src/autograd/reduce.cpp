// Gradients of the reductions, scans and softmax.
#include <algorithm>

#include "autograd/rules.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace autograd {

namespace {

// The reduced axes, non-negative and sorted; all of them when empty.
std::vector<std::int64_t> reduced_axes(const Axes& axes, std::int64_t rank) {
  std::vector<std::int64_t> out;
  if (axes.empty()) {
    for (std::int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (auto a : axes) out.push_back(a < 0 ? a + rank : a);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Tensor expand_back(const Tensor& grad, const Shape& input_shape,
                   const Axes& axes, bool keepdims) {
  const auto rank = static_cast<std::int64_t>(input_shape.size());
  Shape kept = input_shape;
  for (auto a : reduced_axes(axes, rank)) kept[static_cast<std::size_t>(a)] = 1;
  (void)keepdims;  // with or without keepdims the element order is the same
  return grad.reshape(kept).expand(input_shape);
}

}  // namespace autograd

using autograd::expand_back;
using autograd::Needs;
using autograd::one_grad;
using autograd::record;

namespace {

std::int64_t reduced_count(const Shape& shape, const Axes& axes) {
  std::int64_t n = 1;
  if (axes.empty()) {
    for (auto e : shape) n *= e;
    return n;
  }
  const auto rank = static_cast<std::int64_t>(shape.size());
  for (auto a : axes)
    n *= shape[static_cast<std::size_t>(a < 0 ? a + rank : a)];
  return n;
}

// The gradient of a reduction y = r(x) whose local derivative is
// dy/dx = derivative(x, y broadcast back to x's shape).
Variable reduction(const char* op, const Variable& x, const Tensor& y,
                   const Axes& axes, bool keepdims,
                   autograd::Derivative derivative) {
  const Tensor xv = x.value();
  return record(
      op, y, {x},
      [xv, y, axes, keepdims, derivative](const Tensor& g, const Needs&) {
        const Tensor gx = expand_back(g, xv.shape(), axes, keepdims);
        const Tensor yx = expand_back(y, xv.shape(), axes, keepdims);
        return one_grad(derivative ? mul(gx, derivative(xv, yx)).to(xv.dtype())
                                   : gx.to(xv.dtype()));
      });
}

}  // namespace

Variable sum(const Variable& x, Axes axes, bool keepdims) {
  return reduction("sum", x, sum(x.value(), axes, keepdims), axes, keepdims,
                   nullptr);
}

Variable mean(const Variable& x, Axes axes, bool keepdims) {
  const double n = static_cast<double>(reduced_count(x.shape(), axes));
  return reduction("mean", x, mean(x.value(), axes, keepdims), axes, keepdims,
                   [n](const Tensor& xv, const Tensor&) {
                     return full({}, 1.0 / n, xv.dtype(), xv.device());
                   });
}

Variable prod(const Variable& x, Axes axes, bool keepdims) {
  // d prod / d x_i = product of the others: move the reduced axes last,
  // flatten them, and multiply exclusive prefix and suffix products, which
  // stays exact when some x_i are zero.
  const Tensor xv = x.value();
  const Tensor y = prod(xv, axes, keepdims);
  return record(
      "prod", y, {x}, [xv, axes, keepdims](const Tensor& g, const Needs&) {
        const auto rank = xv.rank();
        std::vector<std::int64_t> red, keep, perm;
        std::vector<bool> is_red(static_cast<std::size_t>(rank), axes.empty());
        for (auto a : axes)
          is_red[static_cast<std::size_t>(a < 0 ? a + rank : a)] = true;
        for (std::int64_t d = 0; d < rank; ++d)
          (is_red[static_cast<std::size_t>(d)] ? red : keep).push_back(d);
        perm = keep;
        perm.insert(perm.end(), red.begin(), red.end());
        const Tensor moved =
            xv.permute(std::span<const std::int64_t>(perm)).contiguous();
        Shape flat_shape(
            moved.shape().begin(),
            moved.shape().begin() + static_cast<std::ptrdiff_t>(keep.size()));
        flat_shape.push_back(-1);
        const Tensor flat = moved.reshape(flat_shape);
        const std::int64_t last = flat.rank() - 1;
        const Tensor left = cumprod(flat, last, /*exclusive=*/true);
        const Tensor right =
            cumprod(flat, last, /*exclusive=*/true, /*reverse=*/true);
        const Tensor others = mul(left, right).reshape(moved.shape());
        std::vector<std::int64_t> inverse(perm.size());
        for (std::size_t i = 0; i < perm.size(); ++i)
          inverse[static_cast<std::size_t>(perm[i])] =
              static_cast<std::int64_t>(i);
        const Tensor d = others.permute(std::span<const std::int64_t>(inverse));
        return one_grad(
            mul(expand_back(g, xv.shape(), axes, keepdims), d).to(xv.dtype()));
      });
}

namespace {

Variable extreme(const char* op, const Variable& x, const Tensor& y,
                 const Axes& axes, bool keepdims) {
  // Shared evenly by every element equal to the extreme.
  return reduction(op, x, y, axes, keepdims,
                   [axes](const Tensor& xv, const Tensor& yx) {
                     const Tensor hit = eq(xv, yx).to(xv.dtype());
                     const Tensor count = sum(hit, axes, true);
                     return div(hit, count);
                   });
}

}  // namespace

Variable max(const Variable& x, Axes axes, bool keepdims) {
  return extreme("max", x, max(x.value(), axes, keepdims), axes, keepdims);
}
Variable min(const Variable& x, Axes axes, bool keepdims) {
  return extreme("min", x, min(x.value(), axes, keepdims), axes, keepdims);
}

Variable var(const Variable& x, Axes axes, double correction, bool keepdims) {
  const double n = static_cast<double>(reduced_count(x.shape(), axes));
  return reduction(
      "var", x, var(x.value(), axes, correction, keepdims), axes, keepdims,
      [axes, n, correction](const Tensor& xv, const Tensor&) {
        return mul(sub(xv, mean(xv, axes, true)), 2.0 / (n - correction));
      });
}

Variable std(const Variable& x, Axes axes, double correction, bool keepdims) {
  const double n = static_cast<double>(reduced_count(x.shape(), axes));
  return reduction(
      "std", x, tessel::std(x.value(), axes, correction, keepdims), axes,
      keepdims, [axes, n, correction](const Tensor& xv, const Tensor& yx) {
        return div(mul(sub(xv, mean(xv, axes, true)), 1.0 / (n - correction)),
                   yx);
      });
}

Variable norm(const Variable& x, double ord, Axes axes, bool keepdims) {
  return reduction("norm", x, norm(x.value(), ord, axes, keepdims), axes,
                   keepdims, [ord, axes](const Tensor& xv, const Tensor& yx) {
                     if (ord == 1.0) return sign(xv);
                     if (std::isinf(ord)) {
                       // The largest (or smallest) |x|, shared at ties.
                       const Tensor hit = eq(abs(xv), yx).to(xv.dtype());
                       return div(mul(hit, sign(xv)), sum(hit, axes, true));
                     }
                     // L2: x / ||x||, 0 where the norm is 0 (the Tensor op
                     // refuses other orders).
                     const Tensor safe = where(
                         eq(yx, 0), ones({}, yx.dtype(), yx.device()), yx);
                     return where(eq(yx, 0), zeros({}, xv.dtype(), xv.device()),
                                  div(xv, safe));
                   });
}

Variable sum_squares(const Variable& x, Axes axes, bool keepdims) {
  return reduction(
      "sum_squares", x, sum_squares(x.value(), axes, keepdims), axes, keepdims,
      [](const Tensor& xv, const Tensor&) { return mul(xv, 2.0); });
}

Variable logsumexp(const Variable& x, Axes axes, bool keepdims) {
  return reduction(
      "logsumexp", x, logsumexp(x.value(), axes, keepdims), axes, keepdims,
      [](const Tensor& xv, const Tensor& yx) { return exp(sub(xv, yx)); });
}

Variable cumsum(const Variable& x, std::int64_t axis, bool exclusive,
                bool reverse) {
  // Each output sums the inputs on one side of it, so each input's gradient
  // sums the output gradients on the other side: the same scan reversed.
  const DType d = x.dtype();
  return record("cumsum", cumsum(x.value(), axis, exclusive, reverse), {x},
                [axis, d, exclusive, reverse](const Tensor& g, const Needs&) {
                  return one_grad(cumsum(g, axis, exclusive, !reverse).to(d));
                });
}

namespace {

// The gradient of a forward cumulative product along axis `a` of x.
// Inclusive, y_i = prod_{j<=i} x_j: dx_k = L_k S_k with L_k = prod_{j<k} x_j
// and S_k = sum_{i>=k} g_i prod_{k<j<=i} x_j = g_k + x_{k+1} S_{k+1}.
// Exclusive, y_i = prod_{j<i} x_j: the sum runs over i > k, so
// S_k = g_{k+1} + x_{k+1} S_{k+1}. The recursion runs backwards along the
// axis, vectorised over the rest, so zeros need no special case.
Tensor forward_cumprod_grad(const Tensor& xv, const Tensor& g, std::int64_t a,
                            bool exclusive) {
  const std::int64_t n = xv.shape()[a];
  Tensor s = empty(xv.shape(), g.dtype(), g.device());
  for (std::int64_t k = n - 1; k >= 0; --k) {
    Tensor sk;
    if (!exclusive)
      sk = g.select(a, k);
    else if (k + 1 < n)
      sk = g.select(a, k + 1);
    else
      sk = zeros(s.select(a, k).shape(), g.dtype(), g.device());
    if (k + 1 < n) sk = add(sk, mul(xv.select(a, k + 1), s.select(a, k + 1)));
    s.select(a, k).copy_(sk);
  }
  return mul(cumprod(xv, a, /*exclusive=*/true), s).to(xv.dtype());
}

}  // namespace

Variable cumprod(const Variable& x, std::int64_t axis, bool exclusive,
                 bool reverse) {
  // A reverse scan is the forward scan of the flipped axis.
  const Tensor xv = x.value();
  return record(
      "cumprod", cumprod(xv, axis, exclusive, reverse), {x},
      [xv, axis, exclusive, reverse](const Tensor& g, const Needs&) {
        const std::int64_t a = axis < 0 ? axis + xv.rank() : axis;
        if (!reverse)
          return one_grad(forward_cumprod_grad(xv, g, a, exclusive));
        return one_grad(flip(
            forward_cumprod_grad(flip(xv, {a}), flip(g, {a}), a, exclusive),
            {a}));
      });
}

Variable softmax(const Variable& x, std::int64_t axis) {
  const Tensor y = softmax(x.value(), axis);
  const DType d = x.dtype();
  return record("softmax", y, {x}, [y, axis, d](const Tensor& g, const Needs&) {
    const Tensor gy = mul(g, y);
    return one_grad(sub(gy, mul(y, sum(gy, {axis}, true))).to(d));
  });
}

Variable log_softmax(const Variable& x, std::int64_t axis) {
  const Tensor y = log_softmax(x.value(), axis);
  const DType d = x.dtype();
  return record(
      "log_softmax", y, {x}, [y, axis, d](const Tensor& g, const Needs&) {
        return one_grad(sub(g, mul(exp(y), sum(g, {axis}, true))).to(d));
      });
}

}  // namespace tessel

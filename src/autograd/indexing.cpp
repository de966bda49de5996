// Gradients of concatenation, gathers and scatters, padding and the other
// layout ops: each sends the gradient back to where the values came from.
#include <numeric>

#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

using autograd::Needs;
using autograd::one_grad;
using autograd::record;

namespace {

std::int64_t wrap_axis(std::int64_t axis, std::int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

std::vector<Tensor> values_of(const std::vector<Variable>& xs) {
  std::vector<Tensor> v;
  for (const auto& x : xs) v.push_back(x.value());
  return v;
}

// zeros(shape) with g added at positions index along `axis`: the gradient
// of every gather (index has g's shape).
Tensor scatter_back(const Shape& shape, std::int64_t axis, const Tensor& index,
                    const Tensor& g) {
  return scatter_add(zeros(shape, g.dtype(), g.device()), axis, index, g);
}

}  // namespace

Variable concat(const std::vector<Variable>& xs, std::int64_t axis) {
  const std::vector<Tensor> v = values_of(xs);
  const Tensor y = concat(v, axis);
  const std::int64_t a = wrap_axis(axis, y.rank());
  std::vector<std::int64_t> sizes;
  for (const auto& t : v) sizes.push_back(t.shape()[a]);
  return record("concat", y, xs, [sizes, a](const Tensor& g, const Needs& n) {
    std::vector<Tensor> grads(n.size());
    std::int64_t start = 0;
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (n[i]) grads[i] = g.slice(a, start, start + sizes[i]);
      start += sizes[i];
    }
    return grads;
  });
}

Variable stack(const std::vector<Variable>& xs, std::int64_t axis) {
  const Tensor y = stack(values_of(xs), axis);
  const std::int64_t a = wrap_axis(axis, y.rank());
  return record("stack", y, xs, [a](const Tensor& g, const Needs& n) {
    std::vector<Tensor> grads(n.size());
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (n[i]) grads[i] = g.select(a, static_cast<std::int64_t>(i));
    }
    return grads;
  });
}

std::vector<Variable> split(const Variable& x,
                            const std::vector<std::int64_t>& sizes,
                            std::int64_t axis) {
  // Check the sizes with the Tensor op, then take differentiable slices.
  const std::vector<Tensor> pieces = split(x.value(), sizes, axis);
  const std::int64_t a = wrap_axis(axis, x.rank());
  std::vector<Variable> out;
  std::int64_t start = 0;
  for (const auto& p : pieces) {
    out.push_back(x.slice(a, start, start + p.shape()[a]));
    start += p.shape()[a];
  }
  return out;
}

std::vector<Variable> chunk(const Variable& x, std::int64_t chunks,
                            std::int64_t axis) {
  const std::vector<Tensor> pieces = chunk(x.value(), chunks, axis);
  std::vector<std::int64_t> sizes;
  const std::int64_t a = wrap_axis(axis, x.rank());
  for (const auto& p : pieces) sizes.push_back(p.shape()[a]);
  return split(x, sizes, axis);
}

Variable gather(const Variable& x, const Tensor& index, std::int64_t axis) {
  const Tensor xv = x.value();
  const Tensor y = gather(xv, index, axis);
  const std::int64_t a = wrap_axis(axis, xv.rank());
  return record(
      "gather", y, {x}, [xv, index, a](const Tensor& g, const Needs&) {
        // Flatten to (outer, m, inner) against x as (outer, n, inner).
        std::int64_t outer = 1, inner = 1;
        for (std::int64_t d = 0; d < a; ++d) outer *= xv.shape()[d];
        for (std::int64_t d = a + 1; d < xv.rank(); ++d) inner *= xv.shape()[d];
        const std::int64_t n = xv.shape()[a], m = index.numel();
        Tensor idx = index.to(DType::I64).reshape({1, m, 1});
        idx = where(lt(idx, 0), add(idx, n), idx).expand({outer, m, inner});
        const Tensor gx = scatter_back({outer, n, inner}, 1, idx,
                                       g.reshape({outer, m, inner}));
        return one_grad(gx.reshape(xv.shape()));
      });
}

Variable index_select(const Variable& x, std::int64_t axis,
                      const Tensor& index) {
  TESSEL_CHECK(index.rank() == 1, BadShape, "index_select",
               "needs a 1-D index, got {}", shape_string(index.shape()));
  return gather(x, index, axis);
}

Variable gather_elements(const Variable& x, const Tensor& index,
                         std::int64_t axis) {
  const Tensor xv = x.value();
  const Tensor y = gather_elements(xv, index, axis);
  return record("gather_elements", y, {x},
                [xv, index, axis](const Tensor& g, const Needs&) {
                  return one_grad(scatter_back(xv.shape(), axis, index, g));
                });
}

Variable take_along_axis(const Variable& x, const Tensor& index,
                         std::int64_t axis) {
  return gather_elements(x, index, axis);
}

Variable scatter(const Variable& x, std::int64_t axis, const Tensor& index,
                 const Variable& updates, ScatterReduce reduce) {
  TESSEL_CHECK(
      reduce == ScatterReduce::None || reduce == ScatterReduce::Add, BadDType,
      "scatter",
      "gradients exist for scatter with no reduction or with Add only");
  const Tensor xv = x.value(), uv = updates.value();
  const Tensor y = scatter(xv, axis, index, uv, reduce);
  return record("scatter", y, {x, updates},
                [axis, index, uv, reduce](const Tensor& g, const Needs& n) {
                  Tensor gx, gu;
                  if (n[0]) {
                    gx =
                        reduce == ScatterReduce::Add
                            ? g
                            : scatter(g, axis, index,
                                      zeros(uv.shape(), g.dtype(), g.device()));
                  }
                  if (n[1]) gu = gather_elements(g, index, axis).to(uv.dtype());
                  return std::vector<Tensor>{gx, gu};
                });
}

Variable scatter_add(const Variable& x, std::int64_t axis, const Tensor& index,
                     const Variable& updates) {
  return scatter(x, axis, index, updates, ScatterReduce::Add);
}

Variable masked_fill(const Variable& x, const Tensor& mask, Scalar value) {
  const Tensor xv = x.value();
  return record("masked_fill", masked_fill(xv, mask, value), {x},
                [xv, mask](const Tensor& g, const Needs&) {
                  return one_grad(autograd::grad_for(
                      where(mask, zeros({}, g.dtype(), g.device()), g), xv));
                });
}

Variable tril(const Variable& x, std::int64_t k) {
  return record(
      "tril", tril(x.value(), k), {x},
      [k](const Tensor& g, const Needs&) { return one_grad(tril(g, k)); });
}
Variable triu(const Variable& x, std::int64_t k) {
  return record(
      "triu", triu(x.value(), k), {x},
      [k](const Tensor& g, const Needs&) { return one_grad(triu(g, k)); });
}

Variable pad(const Variable& x,
             const std::vector<std::pair<std::int64_t, std::int64_t>>& pads,
             PadMode mode, Scalar value) {
  const Tensor xv = x.value();
  const Tensor y = pad(xv, pads, mode, value);
  return record("pad", y, {x}, [xv, pads, mode](const Tensor& g, const Needs&) {
    // Axis by axis, the source position of every padded position (the same
    // pad applied to an arange) says where each gradient element goes.
    Tensor cur = g;
    for (std::size_t d = 0;
         d < pads.size() && d < static_cast<std::size_t>(xv.rank()); ++d) {
      if (pads[d].first == 0 && pads[d].second == 0) continue;
      const auto axis = static_cast<std::int64_t>(d);
      const std::int64_t n = xv.shape()[axis];
      Tensor source;
      if (mode == PadMode::Constant) {
        // Padding positions come from nowhere: mark them -1 and drop them.
        source = pad(arange(n, DType::I64).to(g.device()), {pads[d]},
                     PadMode::Constant, -1);
      } else {
        source = pad(arange(n, DType::I64).to(g.device()), {pads[d]}, mode);
      }
      Shape view(static_cast<std::size_t>(cur.rank()), 1);
      view[d] = source.numel();
      const Tensor keep = ge(source, 0).reshape(view).expand(cur.shape());
      const Tensor idx = clip(source, Scalar(0), std::nullopt)
                             .reshape(view)
                             .expand(cur.shape());
      Shape target = cur.shape();
      target[d] = n;
      cur = scatter_add(zeros(target, g.dtype(), g.device()), axis,
                        idx.contiguous(),
                        where(keep, cur, zeros({}, g.dtype(), g.device())));
    }
    return one_grad(cur);
  });
}

Variable tile(const Variable& x, const std::vector<std::int64_t>& reps) {
  const Tensor xv = x.value();
  const Tensor y = tile(xv, reps);
  return record("tile", y, {x}, [xv](const Tensor& g, const Needs&) {
    // g is x (left-padded with ones to g's rank) repeated reps[d] times
    // along each axis: view it as (reps[0], x[0], reps[1], x[1], ...) and
    // sum the reps axes.
    const std::int64_t r = g.rank();
    Shape xs(static_cast<std::size_t>(r - xv.rank()), 1);
    for (auto e : xv.shape()) xs.push_back(e);
    Shape pairs;
    Axes reps_axes;
    for (std::int64_t d = 0; d < r; ++d) {
      const std::int64_t e = xs[static_cast<std::size_t>(d)];
      reps_axes.push_back(static_cast<std::int64_t>(pairs.size()));
      pairs.push_back(e == 0 ? 0 : g.shape()[d] / e);
      pairs.push_back(e);
    }
    return one_grad(sum(g.reshape(pairs), reps_axes).reshape(xv.shape()));
  });
}

Variable repeat(const Variable& x, std::int64_t repeats,
                std::optional<std::int64_t> axis) {
  if (!axis)
    return repeat(x.flatten(), repeats, std::optional<std::int64_t>(0));
  const Tensor xv = x.value();
  const std::int64_t a = wrap_axis(*axis, xv.rank());
  const Tensor y = repeat(xv, repeats, std::optional<std::int64_t>(a));
  return record("repeat", y, {x},
                [xv, repeats, a](const Tensor& g, const Needs&) {
                  Shape s = xv.shape();
                  s.insert(static_cast<std::size_t>(a + 1), repeats);
                  return one_grad(sum(g.reshape(s), {a + 1}));
                });
}

Variable flip(const Variable& x, Axes axes) {
  return record("flip", flip(x.value(), axes), {x},
                [axes](const Tensor& g, const Needs&) {
                  return one_grad(flip(g, axes));
                });
}

Variable roll(const Variable& x, const std::vector<std::int64_t>& shifts,
              Axes axes) {
  std::vector<std::int64_t> back;
  for (auto s : shifts) back.push_back(-s);
  return record("roll", roll(x.value(), shifts, axes), {x},
                [back, axes](const Tensor& g, const Needs&) {
                  return one_grad(roll(g, back, axes));
                });
}

Variable sort(const Variable& x, std::int64_t axis, bool descending) {
  return take_along_axis(x, argsort(x.value(), axis, descending), axis);
}

VariableTopK topk(const Variable& x, std::int64_t k, std::int64_t axis,
                  bool largest, bool sorted) {
  const TopK r = topk(x.value(), k, axis, largest, sorted);
  return {take_along_axis(x, r.indices, axis), r.indices};
}

}  // namespace tessel

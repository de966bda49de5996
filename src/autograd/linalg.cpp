// Gradients of the matrix products.
#include <algorithm>
#include <set>
#include <string>

#include "autograd/rules.hpp"
#include "core/check.hpp"
#include "tessel/autograd/functions.hpp"
#include "tessel/ops/linalg.hpp"

namespace tessel {

using autograd::grad_for;
using autograd::Needs;
using autograd::one_grad;
using autograd::record;

Variable matmul(const Variable& a, const Variable& b) {
  const Tensor av = a.value(), bv = b.value();
  const Tensor y = matmul(av, bv);
  return record("matmul", y, {a, b}, [av, bv](const Tensor& g, const Needs& n) {
    // The 1-D operands as matmul sees them: a row, a column.
    const Tensor a2 = av.rank() == 1 ? av.unsqueeze(0) : av;
    const Tensor b2 = bv.rank() == 1 ? bv.unsqueeze(1) : bv;
    Tensor g2 = g;
    if (av.rank() == 1) g2 = g2.unsqueeze(bv.rank() == 1 ? 0 : g2.rank() - 1);
    if (bv.rank() == 1) g2 = g2.unsqueeze(g2.rank());
    Tensor ga, gb;
    if (n[0]) {
      ga = autograd::sum_to(matmul(g2, b2.transpose(-1, -2)), a2.shape())
               .reshape(av.shape());
      ga = ga.to(av.dtype());
    }
    if (n[1]) {
      gb = autograd::sum_to(matmul(a2.transpose(-1, -2), g2), b2.shape())
               .reshape(bv.shape());
      gb = gb.to(bv.dtype());
    }
    return std::vector<Tensor>{ga, gb};
  });
}

Variable dot(const Variable& a, const Variable& b) {
  TESSEL_CHECK(a.rank() == 1 && b.rank() == 1, BadShape, "dot",
               "needs two 1-D tensors, got shapes {} and {} (use matmul)",
               shape_string(a.shape()), shape_string(b.shape()));
  return matmul(a, b);
}

Variable outer(const Variable& a, const Variable& b) {
  TESSEL_CHECK(a.rank() == 1 && b.rank() == 1, BadShape, "outer",
               "needs two 1-D tensors, got shapes {} and {}",
               shape_string(a.shape()), shape_string(b.shape()));
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}

Variable linear(const Variable& x, const Variable& weight,
                const Variable& bias) {
  const Tensor xv = x.value(), wv = weight.value();
  const Tensor bv = bias.defined() ? bias.value() : Tensor();
  const Tensor y = linear(xv, wv, bv);
  std::vector<Variable> inputs = {x, weight};
  if (bias.defined()) inputs.push_back(bias);
  return record(
      "linear", y, inputs, [xv, wv, bv](const Tensor& g, const Needs& n) {
        const std::int64_t k = wv.shape()[1], out = wv.shape()[0];
        const Tensor g2 = g.reshape({-1, out});
        std::vector<Tensor> grads(n.size());
        if (n[0]) grads[0] = matmul(g2, wv).reshape(xv.shape()).to(xv.dtype());
        if (n[1])
          grads[1] =
              matmul(g2.transpose(0, 1), xv.reshape({-1, k})).to(wv.dtype());
        if (n.size() > 2 && n[2]) grads[2] = sum(g2, {0}).to(bv.dtype());
        return grads;
      });
}

Variable hadamard_transform(const Variable& x, std::int64_t block) {
  const DType d = x.dtype();
  return record("hadamard_transform", hadamard_transform(x.value(), block), {x},
                [block, d](const Tensor& g, const Needs&) {
                  // H / sqrt(n) is symmetric: its own transpose.
                  return one_grad(hadamard_transform(g, block).to(d));
                });
}

namespace {

// An einsum equation with explicit output and no ellipsis: one label per
// axis of every operand.
struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation explicit_equation(std::string_view eq,
                           const std::vector<Variable>& operands) {
  std::string s;
  for (char c : eq) {
    if (c != ' ') s.push_back(c);
  }
  const auto arrow = s.find("->");
  std::string lhs = arrow == std::string::npos ? s : s.substr(0, arrow);
  Equation out;
  std::size_t start = 0;
  while (true) {
    const auto comma = lhs.find(',', start);
    out.inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  TESSEL_CHECK(out.inputs.size() == operands.size(), BadShape, "einsum",
               "'{}' names {} operands but {} were given", eq,
               out.inputs.size(), operands.size());
  // Ellipses become upper-case labels not used elsewhere, right-aligned.
  std::set<char> used(s.begin(), s.end());
  std::string spare;
  for (char c = 'Z'; c >= 'A'; --c) {
    if (!used.count(c)) spare.push_back(c);
  }
  std::int64_t ell = 0;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (out.inputs[i].find("...") != std::string::npos) {
      ell = std::max<std::int64_t>(
          ell, operands[i].rank() -
                   static_cast<std::int64_t>(out.inputs[i].size() - 3));
    }
  }
  TESSEL_CHECK(ell <= static_cast<std::int64_t>(spare.size()), BadShape,
               "einsum", "too many axes under '...'");
  const std::string all_ell = spare.substr(0, static_cast<std::size_t>(ell));
  // "..." standing for its last n of the ellipsis labels (right-aligned).
  auto expand = [&](const std::string& term, std::int64_t n) {
    const auto p = term.find("...");
    if (p == std::string::npos) return term;
    return term.substr(0, p) +
           all_ell.substr(all_ell.size() - static_cast<std::size_t>(n)) +
           term.substr(p + 3);
  };
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const auto& t = out.inputs[i];
    const std::int64_t n =
        t.find("...") == std::string::npos
            ? 0
            : operands[i].rank() - static_cast<std::int64_t>(t.size() - 3);
    out.inputs[i] = expand(t, n);
  }
  if (arrow != std::string::npos) {
    out.output = expand(s.substr(arrow + 2), ell);
  } else {
    // NumPy's implicit output: the ellipsis, then the labels used once, in
    // alphabetical order.
    std::string once;
    for (char c = 'a'; c <= 'z'; ++c) {
      std::size_t count = 0;
      for (const auto& t : out.inputs)
        count += static_cast<std::size_t>(std::count(t.begin(), t.end(), c));
      if (count == 1) once.push_back(c);
    }
    out.output = all_ell + once;
  }
  return out;
}

// The gradient of operand `i` of an einsum: the einsum of the output's
// gradient with the other operands, then broadcast over the labels only
// this operand has and summed over its size-1 broadcast axes.
Tensor einsum_grad(const Equation& e, std::size_t i, const Tensor& g,
                   const std::vector<Tensor>& values) {
  const std::string& mine = e.inputs[i];
  for (std::size_t a = 0; a < mine.size(); ++a) {
    TESSEL_CHECK(
        mine.find(mine[a], a + 1) == std::string::npos, BadDType, "einsum",
        "no gradient through the repeated label '{}' of '{}' (a diagonal)",
        mine[a], mine);
  }
  std::string available = e.output;
  std::vector<Tensor> operands = {g};
  std::string lhs = e.output;
  for (std::size_t j = 0; j < e.inputs.size(); ++j) {
    if (j == i) continue;
    lhs += "," + e.inputs[j];
    available += e.inputs[j];
    operands.push_back(values[j]);
  }
  std::string produced;
  for (char c : mine) {
    if (available.find(c) != std::string::npos) produced.push_back(c);
  }
  Tensor r = einsum(lhs + "->" + produced, operands);
  // Labels only this operand has: the gradient is the same along them.
  Shape with_ones;
  std::size_t k = 0;
  for (std::size_t a = 0; a < mine.size(); ++a) {
    if (k < produced.size() && produced[k] == mine[a]) {
      with_ones.push_back(r.shape()[static_cast<std::int64_t>(k)]);
      ++k;
    } else {
      with_ones.push_back(1);
    }
  }
  r = r.reshape(with_ones);
  const Shape& target = values[i].shape();
  Shape full = with_ones;
  for (std::size_t a = 0; a < full.size(); ++a) {
    if (full[a] == 1) full[a] = target[a];
  }
  return autograd::sum_to(r.expand(full), target).to(values[i].dtype());
}

}  // namespace

Variable einsum(std::string_view equation,
                const std::vector<Variable>& operands) {
  std::vector<Tensor> values;
  for (const auto& v : operands) values.push_back(v.value());
  const Tensor y = einsum(equation, values);
  const Equation e = explicit_equation(equation, operands);
  return record("einsum", y, operands,
                [e, values](const Tensor& g, const Needs& n) {
                  std::vector<Tensor> grads(n.size());
                  for (std::size_t i = 0; i < n.size(); ++i) {
                    if (n[i]) grads[i] = einsum_grad(e, i, g, values);
                  }
                  return grads;
                });
}

}  // namespace tessel

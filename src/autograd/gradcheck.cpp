#include "tessel/autograd/gradcheck.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/check.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

GradcheckResult gradcheck(
    const std::function<Variable(const std::vector<Variable>&)>& f,
    const std::vector<Tensor>& inputs, const GradcheckOptions& o) {
  std::vector<Tensor> xs;
  for (const auto& t : inputs) xs.push_back(t.to(DType::F64).clone());
  std::vector<Variable> leaves;
  for (const auto& x : xs) leaves.emplace_back(x, true);
  const Variable out = f(leaves);
  TESSEL_CHECK(out.defined() && out.requires_grad(), BadShape, "gradcheck",
               "the function's output does not depend on its inputs");
  Generator gen(o.seed);
  const Tensor v = randn(out.shape(), gen, DType::F64);
  out.backward(v);

  auto objective = [&](const std::vector<Variable>& at) {
    NoGradGuard no_grad;
    return sum(mul(f(at).value().to(DType::F64), v)).item<double>();
  };
  GradcheckResult r;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Tensor analytic = leaves[i].grad().defined()
                                ? leaves[i].grad().contiguous()
                                : zeros(xs[i].shape(), DType::F64);
    const double* a = analytic.const_data<double>();
    double* x = xs[i].data<double>();
    for (std::int64_t j = 0; j < xs[i].numel(); ++j) {
      const double keep = x[j];
      std::vector<Variable> probe;
      for (const auto& t : xs) probe.emplace_back(t, false);
      x[j] = keep + o.eps;
      const double up = objective(probe);
      x[j] = keep - o.eps;
      const double down = objective(probe);
      x[j] = keep;
      const double numeric = (up - down) / (2 * o.eps);
      const double err = std::abs(a[j] - numeric);
      r.max_error = std::max(r.max_error, std::isnan(err) ? INFINITY : err);
      if (r.ok && !(err <= o.atol + o.rtol * std::abs(numeric))) {
        r.ok = false;
        r.detail = fmt::format("input {} element {}: analytic {} vs numeric {}",
                               i, j, a[j], numeric);
      }
    }
  }
  return r;
}

}  // namespace tessel

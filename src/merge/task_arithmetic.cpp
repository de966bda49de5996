// mergekit's generalized task arithmetic (task_arithmetic, ties, dare_*,
// breadcrumbs*, della*) in one pass per output element once each model's
// keep-mask is drawn: the deltas are recomputed from the inputs instead
// of stored, so memory holds the inputs, one byte of mask per element and
// model, and the output.
#include <cmath>

#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/sparsify.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

float sign_of(float v) { return v > 0 ? 1.0f : v < 0 ? -1.0f : 0.0f; }

}  // namespace

Tensor task_arithmetic(const Tensor& base, std::span<const TaskInput> inputs,
                       const TaskArithmeticOptions& options) {
  constexpr const char* kLabel = "task arithmetic";
  detail::check_merge_input(base, base, kLabel);
  for (const TaskInput& in : inputs) {
    detail::check_merge_input(in.tensor, base, kLabel);
  }
  const std::int64_t n = base.numel();
  // della ranks within rows: a matrix's rows, a vector as one row.
  const std::int64_t rows = base.rank() >= 2 ? base.shape()[0] : 1;
  const std::int64_t cols = rows > 0 ? n / rows : 0;
  const float* b = base.data<float>();
  const std::size_t models = inputs.size();
  std::vector<detail::Thinned> thinned;
  std::vector<const float*> x;
  std::vector<float> w;
  for (const TaskInput& in : inputs) {
    x.push_back(in.tensor.data<float>());
    w.push_back(static_cast<float>(in.weight));
    thinned.push_back(detail::thin(x.back(), b, rows, cols,
                                   options.sparsification, in, options.rescale,
                                   kLabel));
  }
  // Without a consensus the divisor is the sum of the weights, or 1 when
  // that is within 1e-8 of zero.
  float weight_sum = 0.0f;
  for (const float v : w) weight_sum += v;
  if (std::abs(weight_sum) < 1e-8f) weight_sum = 1.0f;
  const float lambda = static_cast<float>(options.lambda);

  Tensor out = detail::new_like(base);
  float* o = out.data<float>();
  detail::for_ranges(n, [&](std::int64_t i0, std::int64_t i1) {
    std::vector<float> d(models);
    for (std::int64_t i = i0; i < i1; ++i) {
      float sum = 0.0f;
      for (std::size_t m = 0; m < models; ++m) {
        const detail::Thinned& t = thinned[m];
        float delta = x[m][i] - b[i];
        if (!t.keep_all) {
          delta = t.mask[static_cast<std::size_t>(i)] ? delta * t.scale : 0.0f;
        }
        d[m] = delta * w[m];
        sum += d[m];
      }
      float mixed = sum;
      float divisor = weight_sum;
      if (options.consensus != Consensus::None) {
        float vote = sum;
        if (options.consensus == Consensus::Count) {
          vote = 0.0f;
          for (std::size_t m = 0; m < models; ++m) vote += sign_of(d[m]);
        }
        const float majority = vote >= 0.0f ? 1.0f : -1.0f;
        mixed = 0.0f;
        divisor = 0.0f;
        for (std::size_t m = 0; m < models; ++m) {
          if (sign_of(d[m]) == majority) {
            mixed += d[m];
            divisor += w[m];
          }
        }
        if (divisor == 0.0f) divisor = 1.0f;
      }
      if (options.normalize) mixed /= divisor;
      if (lambda != 1.0f) mixed *= lambda;
      o[i] = b[i] + mixed;
    }
  });
  return out;
}

std::vector<std::uint8_t> sparsification_mask(const Tensor& delta,
                                              Sparsification method,
                                              const TaskInput& input) {
  detail::check_merge_input(delta, delta, "sparsification");
  const std::int64_t n = delta.numel();
  const std::int64_t rows = delta.rank() >= 2 ? delta.shape()[0] : 1;
  detail::Thinned t =
      detail::thin(delta.data<float>(), nullptr, rows, rows ? n / rows : 0,
                   method, input, false, "sparsification");
  if (t.keep_all) t.mask.assign(static_cast<std::size_t>(n), 1);
  return t.mask;
}

}  // namespace tessel::merge

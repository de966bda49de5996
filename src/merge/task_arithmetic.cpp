// mergekit's generalized task arithmetic (task_arithmetic, ties, dare_*,
// breadcrumbs*, della*) in one pass per output element once each model's
// keep-mask is drawn: the deltas are recomputed from the inputs instead
// of stored, so memory holds the inputs, one byte of mask per element and
// model, and the output.
#include <algorithm>
#include <cmath>

#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/sparsify.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

float sign_of(float v) { return float(v > 0) - float(v < 0); }

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
  // Per model: the keep mask (null: all kept) and the rescale factor.
  std::vector<const std::uint8_t*> mask;
  std::vector<float> scale;
  thinned.reserve(models);  // the masks' addresses must stay put
  for (const TaskInput& in : inputs) {
    x.push_back(in.tensor.data<float>());
    w.push_back(static_cast<float>(in.weight));
    const detail::Thinned& t = thinned.emplace_back(
        detail::thin(x.back(), b, rows, cols, options.sparsification, in,
                     options.rescale, kLabel));
    mask.push_back(t.keep_all ? nullptr : t.mask.data());
    scale.push_back(t.scale);
  }
  // Without a consensus the divisor is the sum of the weights, or 1 when
  // that is within 1e-8 of zero.
  float weight_sum = 0.0f;
  for (const float v : w) weight_sum += v;
  if (std::abs(weight_sum) < 1e-8f) weight_sum = 1.0f;
  const float lambda = static_cast<float>(options.lambda);

  const bool consensus = options.consensus != Consensus::None;
  const bool by_count = options.consensus == Consensus::Count;
  Tensor out = detail::new_output(base);
  float* o = out.data<float>();
  // Blocks of elements, one model at a time within a block, every step a
  // loop over the block without branches (masks and signs are random, and
  // a branch on each would mispredict half the time): the compiler
  // vectorises each. Multiplying by a 0/1 factor and adding the (signed)
  // zeros it leaves gives the same floats, in the same order, as skipping
  // those terms.
  constexpr std::int64_t kBlock = 512;
  detail::for_ranges(n, [&](std::int64_t i0, std::int64_t i1) {
    // Rows of the block: the sums, the mixed deltas, the divisors, the
    // elected signs, then each model's weighted delta.
    std::vector<float> scratch((models + 4) * kBlock);
    float* sum = scratch.data();
    float* mixed = sum + kBlock;
    float* divisor = mixed + kBlock;
    float* majority = divisor + kBlock;
    const auto delta_row = [&](std::size_t m) {
      return majority + kBlock * (1 + std::int64_t(m));
    };
    for (std::int64_t start = i0; start < i1; start += kBlock) {
      const std::int64_t len = std::min(kBlock, i1 - start);
      const float* bb = b + start;
      std::fill(sum, sum + len, 0.0f);
      for (std::size_t m = 0; m < models; ++m) {
        float* d = delta_row(m);
        const float* xm = x[m] + start;
        const float wm = w[m];
        if (mask[m]) {
          const std::uint8_t* keep = mask[m] + start;
          const float s = scale[m];
          for (std::int64_t j = 0; j < len; ++j) {
            d[j] = (xm[j] - bb[j]) * (float(keep[j]) * s) * wm;
          }
        } else {
          for (std::int64_t j = 0; j < len; ++j) d[j] = (xm[j] - bb[j]) * wm;
        }
        for (std::int64_t j = 0; j < len; ++j) sum[j] += d[j];
      }
      if (consensus) {
        if (by_count) {
          std::fill(mixed, mixed + len, 0.0f);
          for (std::size_t m = 0; m < models; ++m) {
            const float* d = delta_row(m);
            for (std::int64_t j = 0; j < len; ++j) mixed[j] += sign_of(d[j]);
          }
          for (std::int64_t j = 0; j < len; ++j) {
            majority[j] = mixed[j] >= 0.0f ? 1.0f : -1.0f;
          }
        } else {
          for (std::int64_t j = 0; j < len; ++j) {
            majority[j] = sum[j] >= 0.0f ? 1.0f : -1.0f;
          }
        }
        std::fill(mixed, mixed + len, 0.0f);
        std::fill(divisor, divisor + len, 0.0f);
        for (std::size_t m = 0; m < models; ++m) {
          const float* d = delta_row(m);
          const float wm = w[m];
          for (std::int64_t j = 0; j < len; ++j) {
            const float agree = sign_of(d[j]) == majority[j] ? 1.0f : 0.0f;
            mixed[j] += d[j] * agree;
            divisor[j] += wm * agree;
          }
        }
        for (std::int64_t j = 0; j < len; ++j) {
          divisor[j] = divisor[j] == 0.0f ? 1.0f : divisor[j];
        }
      } else {
        std::copy(sum, sum + len, mixed);
        std::fill(divisor, divisor + len, weight_sum);
      }
      if (options.normalize) {
        for (std::int64_t j = 0; j < len; ++j) mixed[j] /= divisor[j];
      }
      if (lambda != 1.0f) {
        for (std::int64_t j = 0; j < len; ++j) mixed[j] *= lambda;
      }
      for (std::int64_t j = 0; j < len; ++j) o[start + j] = bb[j] + mixed[j];
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

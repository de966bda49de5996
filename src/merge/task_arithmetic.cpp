// mergekit's generalized task arithmetic (task_arithmetic, ties, dare_*,
// breadcrumbs*, della*) in one pass per output element once each model's
// keep-mask is known: the deltas are recomputed from the inputs, block by
// block, instead of stored, and DARE's random masks are redrawn from the
// counter-based generator, so memory holds the (mapped) inputs, one byte
// of mask per element and model for the ranked methods only, and the
// output.
#include <algorithm>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/sparsify.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

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
  const detail::Elements b(base);
  const std::size_t models = inputs.size();
  std::vector<detail::Elements> x;
  std::vector<detail::Thinned> thinned;
  std::vector<float> w;
  for (const TaskInput& in : inputs) {
    x.emplace_back(in.tensor);
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

  Tensor out = detail::new_output(base);
  float* o = out.data<float>();
  // Blocks of elements: the inputs widened, each model's keep-factors
  // (mask times rescale) drawn or expanded, then one vector kernel.
  // Masks and signs are random, so the kernel selects instead of
  // branching; multiplying by a 0 factor and adding the zeros it leaves
  // gives the same floats, in the same order, as skipping those terms.
  detail::for_ranges(n, [&](std::int64_t i0, std::int64_t i1) {
    const std::int64_t p = detail::padded(detail::kBlock);
    // Rows: the base, the result, then per model its input, keep-factors
    // and delta.
    float* scratch = detail::block_scratch(2 + 3 * std::int64_t(models));
    float* bb = scratch;
    float* result = bb + p;
    std::vector<float*> xs(models), keep(models);
    for (std::size_t m = 0; m < models; ++m) {
      xs[m] = result + p * (1 + std::int64_t(m));
      keep[m] = thinned[m].keep_all
                    ? nullptr
                    : result + p * (1 + std::int64_t(models + m));
    }
    const std::vector<const float*> xs_read(xs.begin(), xs.end());
    const std::vector<const float*> keep_read(keep.begin(), keep.end());
    float* deltas = result + p * (1 + 2 * std::int64_t(models));
    simd::TaskBlock block;
    block.base = bb;
    block.models = models;
    block.x = xs_read.data();
    block.keep = keep_read.data();
    block.weight = w.data();
    block.consensus = options.consensus;
    block.normalize = options.normalize;
    block.weight_sum = weight_sum;
    block.lambda = static_cast<float>(options.lambda);
    block.deltas = deltas;
    block.out = result;
    for (std::int64_t start = i0; start < i1; start += detail::kBlock) {
      const std::int64_t len = std::min(detail::kBlock, i1 - start);
      b.load(start, len, bb);
      for (std::size_t m = 0; m < models; ++m) {
        x[m].load(start, len, xs[m]);
        if (keep[m]) {
          thinned[m].keep_factors(start, len, thinned[m].scale, keep[m]);
        }
      }
      block.n = detail::padded(len);
      simd::task_block(block);
      std::copy(result, result + len, o + start);
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
  const detail::Thinned t =
      detail::thin(detail::Elements(delta), detail::Elements(), rows,
                   rows ? n / rows : 0, method, input, false, "sparsification");
  if (t.keep_all) return std::vector<std::uint8_t>(std::size_t(n), 1);
  if (!t.random) return t.mask;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
  std::vector<float> keep(static_cast<std::size_t>(detail::padded(n)));
  t.keep_factors(0, n, 1.0f, keep.data());
  for (std::int64_t i = 0; i < n; ++i)
    mask[std::size_t(i)] = keep[std::size_t(i)] != 0.0f;
  return mask;
}

}  // namespace tessel::merge

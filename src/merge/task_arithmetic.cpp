// mergekit's generalized task arithmetic (task_arithmetic, ties, dare_*,
// breadcrumbs*, della*) in one pass per output element once each model's
// keep-mask is known: the deltas are recomputed from the inputs, block by
// block, instead of stored, and DARE's masks are drawn from the
// counter-based generator (kept as bits when the rescale pass drew them
// already), so memory holds the (mapped) inputs and one byte of mask per
// element and model for the ranked methods only.
#include <algorithm>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/prepared.hpp"
#include "merge/sparsify.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

class TaskMerge final : public PreparedMerge {
 public:
  TaskMerge(const Tensor& base, std::span<const TaskInput> inputs,
            const TaskArithmeticOptions& options)
      : base_tensor_(base), base_(base) {
    // block_ points into weights_: not to be copied.
    const std::int64_t n = base.numel();
    // della ranks within rows: a matrix's rows, a vector as one row.
    const std::int64_t rows = base.rank() >= 2 ? base.shape()[0] : 1;
    const std::int64_t cols = rows > 0 ? n / rows : 0;
    for (const TaskInput& in : inputs) {
      tensors_.push_back(in.tensor);
      x_.emplace_back(in.tensor);
      weights_.push_back(static_cast<float>(in.weight));
      thinned_.push_back(detail::thin(x_.back(), base_, rows, cols,
                                      options.sparsification, in,
                                      options.rescale, "task arithmetic"));
    }
    // Without a consensus the divisor is the sum of the weights, or 1 when
    // that is within 1e-8 of zero.
    float weight_sum = 0.0f;
    for (const float v : weights_) weight_sum += v;
    if (std::abs(weight_sum) < 1e-8f) weight_sum = 1.0f;
    block_.models = inputs.size();
    block_.weight = weights_.data();
    block_.consensus = options.consensus;
    block_.normalize = options.normalize;
    block_.weight_sum = weight_sum;
    block_.lambda = static_cast<float>(options.lambda);
  }

  // The inputs widened, each model's keep-factors (mask times rescale)
  // drawn or expanded, then one vector kernel. Masks and signs are random,
  // so the kernel selects instead of branching; multiplying by a 0 factor
  // and adding the zeros it leaves gives the same floats, in the same
  // order, as skipping those terms.
  TaskMerge(const TaskMerge&) = delete;
  TaskMerge& operator=(const TaskMerge&) = delete;

  void block(std::int64_t first, std::int64_t n, float* out) const override {
    const std::size_t models = x_.size();
    const std::int64_t p = detail::padded(detail::kBlock);
    // Rows: the base, then per model its input, keep-factors and delta.
    float* bb = detail::block_scratch(1 + 3 * std::int64_t(models));
    std::vector<const float*> xs(models), keep(models);
    simd::TaskBlock block = block_;
    block.n = detail::padded(n);
    block.base = bb;
    block.deltas = bb + p * (1 + 2 * std::int64_t(models));
    block.out = out;
    base_.load(first, n, bb);
    for (std::size_t m = 0; m < models; ++m) {
      float* x = bb + p * (1 + std::int64_t(m));
      x_[m].load(first, n, x);
      xs[m] = x;
      if (!thinned_[m].keep_all) {
        float* k = bb + p * (1 + std::int64_t(models + m));
        thinned_[m].keep_factors(first, n, thinned_[m].scale, k);
        keep[m] = k;
      }
    }
    block.x = xs.data();
    block.keep = keep.data();
    simd::task_block(block);
  }

 private:
  Tensor base_tensor_;
  std::vector<Tensor> tensors_;
  detail::Elements base_;
  std::vector<detail::Elements> x_;
  std::vector<detail::Thinned> thinned_;
  std::vector<float> weights_;
  simd::TaskBlock block_;
};

}  // namespace

namespace detail {

std::unique_ptr<PreparedMerge> prepare_task_arithmetic(
    const Tensor& base, std::span<const TaskInput> inputs,
    const TaskArithmeticOptions& options) {
  constexpr const char* kLabel = "task arithmetic";
  detail::check_merge_input(base, base, kLabel);
  for (const TaskInput& in : inputs) {
    detail::check_merge_input(in.tensor, base, kLabel);
  }
  return std::make_unique<TaskMerge>(base, inputs, options);
}

}  // namespace detail

Tensor task_arithmetic(const Tensor& base, std::span<const TaskInput> inputs,
                       const TaskArithmeticOptions& options) {
  return detail::produce_output(
      *detail::prepare_task_arithmetic(base, inputs, options), base);
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

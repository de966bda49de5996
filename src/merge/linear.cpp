// linear and passthrough: sums of scaled inputs, one pass over memory.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/prepared.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

class LinearMerge final : public PreparedMerge {
 public:
  LinearMerge(std::span<const Tensor> inputs, std::vector<float> weights,
              float total, bool normalize)
      : inputs_(inputs.begin(), inputs.end()),
        weights_(std::move(weights)),
        total_(total),
        normalize_(normalize) {
    for (const Tensor& t : inputs_) x_.emplace_back(t);
  }

  void block(std::int64_t first, std::int64_t n, float* out) const override {
    float* xb = detail::block_scratch(1);
    std::fill(out, out + n, 0.0f);
    for (std::size_t m = 0; m < x_.size(); ++m) {
      x_[m].load(first, n, xb);
      const float w = weights_[m];
      for (std::int64_t j = 0; j < n; ++j) out[j] += xb[j] * w;
    }
    if (normalize_) {
      for (std::int64_t j = 0; j < n; ++j) out[j] /= total_;
    }
  }

 private:
  std::vector<Tensor> inputs_;
  std::vector<detail::Elements> x_;
  std::vector<float> weights_;
  float total_;
  bool normalize_;
};

}  // namespace

namespace detail {

std::unique_ptr<PreparedMerge> prepare_linear(std::span<const Tensor> inputs,
                                              std::span<const double> weights,
                                              bool normalize) {
  if (inputs.empty() || inputs.size() != weights.size()) {
    detail::bad_parameter("linear", "needs one weight per input model");
  }
  for (const Tensor& t : inputs) {
    detail::check_merge_input(t, inputs[0], "linear");
  }
  // mergekit keeps the weights as f32 and divides by their f32 sum.
  std::vector<float> w(weights.begin(), weights.end());
  float total = 0.0f;
  for (const float x : w) total += x;
  if (normalize && total == 0.0f) {
    detail::bad_parameter(
        "linear",
        fmt::format("the weights sum to zero, so normalize (on by default) "
                    "would divide by zero; set normalize: false or change "
                    "the weights"));
  }
  return std::make_unique<LinearMerge>(inputs, std::move(w), total, normalize);
}

}  // namespace detail

Tensor linear(std::span<const Tensor> inputs, std::span<const double> weights,
              bool normalize) {
  const auto merge = detail::prepare_linear(inputs, weights, normalize);
  return detail::produce_output(*merge, inputs[0]);
}

Tensor passthrough(const Tensor& input, std::optional<double> scale) {
  detail::check_merge_input(input, input, "passthrough");
  Tensor out = detail::new_output(input);
  const Tensor f32 = detail::as_f32(input);
  const float* x = f32.data<float>();
  float* o = out.data<float>();
  const float s = scale ? static_cast<float>(*scale) : 1.0f;
  detail::for_ranges(out.numel(), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) o[i] = scale ? x[i] * s : x[i];
  });
  return out;
}

}  // namespace tessel::merge

// linear and passthrough: sums of scaled inputs, one pass over memory.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

Tensor linear(std::span<const Tensor> inputs, std::span<const double> weights,
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
  Tensor out = detail::new_output(inputs[0]);
  float* o = out.data<float>();
  std::vector<detail::Elements> x;
  for (const Tensor& t : inputs) x.emplace_back(t);
  detail::for_ranges(out.numel(), [&](std::int64_t b, std::int64_t e) {
    const std::int64_t p = detail::padded(detail::kBlock);
    float* xb = detail::block_scratch(2);
    float* acc = xb + p;
    for (std::int64_t start = b; start < e; start += detail::kBlock) {
      const std::int64_t len = std::min(detail::kBlock, e - start);
      std::fill(acc, acc + len, 0.0f);
      for (std::size_t m = 0; m < x.size(); ++m) {
        x[m].load(start, len, xb);
        for (std::int64_t j = 0; j < len; ++j) acc[j] += xb[j] * w[m];
      }
      for (std::int64_t j = 0; j < len; ++j) {
        o[start + j] = normalize ? acc[j] / total : acc[j];
      }
    }
  });
  return out;
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

// linear and passthrough: sums of scaled inputs, one pass over memory.
#include <fmt/format.h>

#include <cmath>

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
  std::vector<const float*> x;
  for (const Tensor& t : inputs) x.push_back(t.data<float>());
  detail::for_ranges(out.numel(), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      float acc = 0.0f;
      for (std::size_t m = 0; m < x.size(); ++m) acc += x[m][i] * w[m];
      o[i] = normalize ? acc / total : acc;
    }
  });
  return out;
}

Tensor passthrough(const Tensor& input, std::optional<double> scale) {
  detail::check_merge_input(input, input, "passthrough");
  Tensor out = detail::new_output(input);
  const float* x = input.data<float>();
  float* o = out.data<float>();
  const float s = scale ? static_cast<float>(*scale) : 1.0f;
  detail::for_ranges(out.numel(), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) o[i] = scale ? x[i] * s : x[i];
  });
  return out;
}

}  // namespace tessel::merge

// Model Stock (Jang et al. 2024) as mergekit computes it: the mean
// pairwise cosine of the fine-tuned models' deltas from the base sets how
// far to move from the base towards their average.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

Tensor model_stock(const Tensor& base, std::span<const Tensor> others,
                   bool filter_wise) {
  detail::check_merge_input(base, base, "model_stock");
  for (const Tensor& t : others) {
    detail::check_merge_input(t, base, "model_stock");
  }
  if (others.size() < 2) {
    detail::bad_parameter(
        "model_stock",
        fmt::format("needs a base model and at least two others, got {} "
                    "other{}",
                    others.size(), others.size() == 1 ? "" : "s"));
  }
  const std::int64_t n = base.numel();
  const std::int64_t last =
      base.rank() >= 1 ? base.shape()[base.rank() - 1] : 1;
  // Whole tensor, or each last-axis row.
  const std::int64_t length = filter_wise ? last : n;
  const std::int64_t rows = length > 0 ? n / length : 0;
  const std::size_t count = others.size();
  // Not one of the streamed methods: whole f32 tensors.
  const Tensor base_f32 = detail::as_f32(base);
  std::vector<Tensor> others_f32;
  for (const Tensor& t : others) others_f32.push_back(detail::as_f32(t));
  const float* w0 = base_f32.data<float>();
  std::vector<const float*> w;
  for (const Tensor& t : others_f32) w.push_back(t.data<float>());

  // t per row from the f64 dots of the deltas.
  std::vector<float> t_row(static_cast<std::size_t>(rows), 0.0f);
  const auto row_t = [&](std::int64_t r, bool whole) {
    const std::int64_t begin = r * length;
    const auto dot = [&](std::size_t p, std::size_t q) {
      const auto term = [&](std::int64_t j) {
        const std::int64_t i = begin + j;
        return double(w[p][i] - w0[i]) * double(w[q][i] - w0[i]);
      };
      if (whole) return detail::ordered_sum(length, term);
      double s = 0.0;
      for (std::int64_t j = 0; j < length; ++j) s += term(j);
      return s;
    };
    std::vector<double> norm(count);
    for (std::size_t p = 0; p < count; ++p) norm[p] = std::sqrt(dot(p, p));
    double cos_sum = 0.0;
    std::size_t pairs = 0;
    for (std::size_t p = 0; p < count; ++p) {
      for (std::size_t q = p + 1; q < count; ++q) {
        const double c = dot(p, q) / std::max(norm[p] * norm[q], 1e-6);
        cos_sum += std::clamp(c, -1.0, 1.0);
        ++pairs;
      }
    }
    const double cos_theta = cos_sum / double(pairs);
    const double k = double(count);
    const double denominator = 1 + (k - 1) * cos_theta;
    // At the singularity mergekit keeps the base.
    if (std::abs(denominator) < 1e-6) return 0.0f;
    return static_cast<float>(k * cos_theta / denominator);
  };
  if (rows == 1) {
    t_row[0] = row_t(0, true);
  } else if (rows > 1) {
    parallel_for(0, rows, 1, [&](std::int64_t rb, std::int64_t re) {
      for (std::int64_t r = rb; r < re; ++r) {
        t_row[static_cast<std::size_t>(r)] = row_t(r, false);
      }
    });
  }

  Tensor out = detail::new_output(base);
  float* o = out.data<float>();
  const float count_f = static_cast<float>(count);
  detail::for_ranges(n, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      float sum = 0.0f;
      for (const float* p : w) sum += p[i];
      const float average = sum / count_f;
      const float t = t_row[static_cast<std::size_t>(i / length)];
      o[i] = t * average + (1 - t) * w0[i];
    }
  });
  return out;
}

}  // namespace tessel::merge

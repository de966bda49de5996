// Magnitude selections rank |delta| by (value, position): mergekit's
// torch.argsort breaks ties in no documented order, so ties are the one
// place tessel's masks may differ from mergekit's; docs/merge.md.
#include "merge/sparsify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "tessel/core/random.hpp"

namespace tessel::merge::detail {

namespace {

float delta_at(const float* x, const float* base, std::int64_t i) {
  return base ? x[i] - base[i] : x[i];
}

std::vector<float> magnitudes(const float* x, const float* base,
                              std::int64_t n) {
  std::vector<float> m(static_cast<std::size_t>(n));
  for_ranges(n, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      m[static_cast<std::size_t>(i)] = std::abs(delta_at(x, base, i));
    }
  });
  return m;
}

// Marks (1) the elements whose rank in ascending (|delta|, position) order
// lies in [lo, hi).
std::vector<std::uint8_t> rank_window(const std::vector<float>& mag,
                                      std::int64_t lo, std::int64_t hi) {
  const std::int64_t n = static_cast<std::int64_t>(mag.size());
  std::vector<std::uint8_t> mask(mag.size(), 0);
  if (lo >= hi) return mask;
  // The value at rank r, and how many elements of that value rank below r.
  struct Cut {
    float value;
    std::int64_t equal_below;
  };
  std::vector<float> sorted = mag;
  const auto cut_at = [&](std::int64_t r) -> Cut {
    if (r >= n) return {INFINITY, n};
    std::nth_element(sorted.begin(), sorted.begin() + r, sorted.end());
    const float v = sorted[static_cast<std::size_t>(r)];
    const std::int64_t less =
        std::count_if(mag.begin(), mag.end(), [v](float m) { return m < v; });
    return {v, r - less};
  };
  const Cut a = cut_at(lo);
  const Cut b = cut_at(hi);
  // rank(i) < r  <=>  mag < v, or mag == v and fewer than equal_below
  // equal elements come before i.
  std::int64_t seen_a = 0, seen_b = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float m = mag[static_cast<std::size_t>(i)];
    bool below_a = m < a.value;
    if (m == a.value) below_a = seen_a++ < a.equal_below;
    bool below_b = m < b.value;
    if (m == b.value) below_b = seen_b++ < b.equal_below;
    mask[static_cast<std::size_t>(i)] = !below_a && below_b;
  }
  return mask;
}

// A uniform draw in [0, 1) per element from (seed, stream, i): the top 24
// bits of word i % 4 of Philox block (i / 4, stream).
template <class KeepIf>
std::vector<std::uint8_t> random_mask(std::int64_t n, const RandomStream& r,
                                      KeepIf&& keep_if) {
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
  const std::array<std::uint32_t, 2> key{
      static_cast<std::uint32_t>(r.seed),
      static_cast<std::uint32_t>(r.seed >> 32)};
  for_ranges((n + 3) / 4, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t blk = b; blk < e; ++blk) {
      const auto w = philox4x32_10(
          {static_cast<std::uint32_t>(blk),
           static_cast<std::uint32_t>(static_cast<std::uint64_t>(blk) >> 32),
           static_cast<std::uint32_t>(r.stream),
           static_cast<std::uint32_t>(r.stream >> 32)},
          key);
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = blk * 4 + k;
        if (i >= n) break;
        const double u = static_cast<double>(w[k] >> 8) * 0x1p-24;
        mask[static_cast<std::size_t>(i)] = keep_if(i, u) ? 1 : 0;
      }
    }
  });
  return mask;
}

// Della's keep probabilities: within each row, density - epsilon for the
// smallest |delta| rising linearly to density + epsilon for the largest.
std::vector<std::uint8_t> della_mask(const float* x, const float* base,
                                     std::int64_t rows, std::int64_t cols,
                                     const TaskInput& in) {
  const std::int64_t n = rows * cols;
  std::vector<float> prob(static_cast<std::size_t>(n));
  const double lo = in.density - in.epsilon;
  parallel_for(0, rows, 1, [&](std::int64_t rb, std::int64_t re) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(cols));
    for (std::int64_t r = rb; r < re; ++r) {
      const std::int64_t row = r * cols;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::sort(order.begin(), order.end(),
                [&](std::int64_t p, std::int64_t q) {
                  const float mp = std::abs(delta_at(x, base, row + p));
                  const float mq = std::abs(delta_at(x, base, row + q));
                  return mp < mq || (mp == mq && p < q);
                });
      for (std::int64_t k = 0; k < cols; ++k) {
        // (rank - min rank) / (max rank - min rank); a one-element row
        // (mergekit: 0 / 0) takes the lowest probability.
        const double norm = cols > 1 ? double(k) / double(cols - 1) : 0.0;
        prob[static_cast<std::size_t>(row +
                                      order[static_cast<std::size_t>(k)])] =
            static_cast<float>(lo + norm * 2 * in.epsilon);
      }
    }
  });
  return random_mask(n, in.random, [&](std::int64_t i, double u) {
    return u < prob[static_cast<std::size_t>(i)];
  });
}

}  // namespace

Thinned thin(const float* x, const float* base, std::int64_t rows,
             std::int64_t cols, Sparsification method, const TaskInput& in,
             bool rescale, const char* label) {
  const std::int64_t n = rows * cols;
  Thinned out;
  if (method != Sparsification::None &&
      !(in.density > 0.0 && in.density <= 1.0)) {
    bad_parameter(label,
                  fmt::format("density = {} is outside (0, 1]", in.density));
  }
  if (method == Sparsification::MagnitudeOutliers &&
      !(in.gamma >= 0.0 && in.gamma <= 1.0)) {
    bad_parameter(label, fmt::format("gamma = {} is outside [0, 1]", in.gamma));
  }
  if (method == Sparsification::DellaMagprune && in.density < 1.0 &&
      !(in.density - in.epsilon > 0.0 && in.density + in.epsilon < 1.0)) {
    bad_parameter(label, fmt::format("density -/+ epsilon ({} -/+ {}) must lie "
                                     "inside (0, 1)",
                                     in.density, in.epsilon));
  }
  if (method == Sparsification::None || in.density >= 1.0 || n == 0) {
    out.keep_all = true;
    return out;
  }
  switch (method) {
    case Sparsification::Magnitude: {
      const std::int64_t k = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(in.density * double(n)));
      out.mask = rank_window(magnitudes(x, base, n), n - k, n);
      break;
    }
    case Sparsification::MagnitudeOutliers: {
      const auto target = static_cast<std::int64_t>(in.density * double(n));
      const auto top = static_cast<std::int64_t>(in.gamma * double(n));
      const std::int64_t bottom = std::max<std::int64_t>(0, n - target - top);
      out.mask = rank_window(magnitudes(x, base, n), bottom, bottom + target);
      break;
    }
    case Sparsification::Random:
      out.mask = random_mask(
          n, in.random, [&](std::int64_t, double u) { return u < in.density; });
      break;
    case Sparsification::DellaMagprune:
      out.mask = della_mask(x, base, rows, cols, in);
      break;
    case Sparsification::None: break;
  }
  if (rescale) {
    // mergekit's RescaleNorm.l1: the kept part scaled back to the L1 norm
    // of the whole, unless either norm is below 1e-7.
    const std::uint8_t* m = out.mask.data();
    const double before = ordered_sum(n, [&](std::int64_t i) {
      return double(std::abs(delta_at(x, base, i)));
    });
    const double after = ordered_sum(n, [&](std::int64_t i) {
      return m[i] ? double(std::abs(delta_at(x, base, i))) : 0.0;
    });
    if (before >= 1e-7 && after >= 1e-7) {
      out.scale = static_cast<float>(before / after);
    }
  }
  return out;
}

}  // namespace tessel::merge::detail

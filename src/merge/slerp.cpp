// slerp and nuslerp. The angle between two tensors comes from an f64 dot
// of the normalised vectors (the seed's rule: in f32 the dot of nearly
// colinear tensors of millions of elements loses the angle entirely);
// the combination itself is f32.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "merge/blocks.hpp"
#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "merge/prepared.hpp"
#include "tessel/merge/methods.hpp"

namespace tessel::merge {

namespace {

// Coefficients of a and b for interpolating by t over angle acos(cos).
struct Coefficients {
  double a;
  double b;
};

Coefficients spherical(double t, double cos_theta) {
  const double theta = std::acos(cos_theta);
  const double s = std::sin(theta);
  return {std::sin((1 - t) * theta) / s, std::sin(t * theta) / s};
}

// The vectors a tensor is cut into: vector v's element j lies at
// v * vstride + j * estride.
struct Vectors {
  std::int64_t count;
  std::int64_t length;
  std::int64_t vstride;
  std::int64_t estride;
  std::int64_t at(std::int64_t v, std::int64_t j) const {
    return v * vstride + j * estride;
  }
};

struct Sums {
  double aa = 0, bb = 0, ab = 0;
};

// Per vector, sum of a*a, b*b and a*b in f64 — of a - base and b - base
// when `base` is given, computed on the fly — the same on any thread count.
std::vector<Sums> vector_sums(const float* a, const float* b, const float* base,
                              const Vectors& vs) {
  const auto delta = [base](const float* x, std::int64_t i) {
    return base ? double(x[i] - base[i]) : double(x[i]);
  };
  std::vector<Sums> sums(static_cast<std::size_t>(vs.count));
  if (vs.count == 1) {
    // One pass over both tensors for all three sums.
    const auto s =
        detail::ordered_sums<3>(vs.length, [&](std::int64_t i, int k) {
          const double x = delta(a, i), y = delta(b, i);
          return k == 0 ? x * x : k == 1 ? y * y : x * y;
        });
    sums[0] = {s[0], s[1], s[2]};
    return sums;
  }
  const std::int64_t grain = std::max<std::int64_t>(
      1, detail::kChunk / std::max<std::int64_t>(1, vs.length));
  parallel_for(0, vs.count, grain, [&](std::int64_t vb, std::int64_t ve) {
    for (std::int64_t v = vb; v < ve; ++v) {
      Sums s;
      for (std::int64_t j = 0; j < vs.length; ++j) {
        const double x = delta(a, vs.at(v, j));
        const double y = delta(b, vs.at(v, j));
        s.aa += x * x;
        s.bb += y * y;
        s.ab += x * y;
      }
      sums[static_cast<std::size_t>(v)] = s;
    }
  });
  return sums;
}

}  // namespace

namespace {

class SlerpMerge final : public PreparedMerge {
 public:
  SlerpMerge(const Tensor& a, const Tensor& b, float ca, float cb)
      : inputs_{a, b}, a_(a), b_(b), ca_(ca), cb_(cb) {}

  void block(std::int64_t first, std::int64_t n, float* out) const override {
    float* ab = detail::block_scratch(2);
    float* bb = ab + detail::padded(detail::kBlock);
    a_.load(first, n, ab);
    b_.load(first, n, bb);
    simd::combine2(ca_, ab, cb_, bb, detail::padded(n), out);
  }

 private:
  Tensor inputs_[2];
  detail::Elements a_, b_;
  float ca_, cb_;
};

}  // namespace

namespace detail {

std::unique_ptr<PreparedMerge> prepare_slerp(const Tensor& base,
                                             const Tensor& other, double t) {
  detail::check_merge_input(base, base, "slerp");
  detail::check_merge_input(other, base, "slerp");
  if (!(t >= 0.0 && t <= 1.0)) {
    detail::bad_parameter("slerp", fmt::format("t = {} is outside [0, 1]", t));
  }
  const std::int64_t n = base.numel();
  const detail::Elements a(base), b(other);
  // Sums of a*a, b*b and a*b in f64, block by block.
  const auto sums = detail::chunk_sums<3>(
      n, [&](std::int64_t begin, std::int64_t end, double* acc) {
        float* ab = detail::block_scratch(2);
        float* bb = ab + detail::padded(detail::kBlock);
        for (std::int64_t i0 = begin; i0 < end; i0 += detail::kBlock) {
          const std::int64_t len = std::min(detail::kBlock, end - i0);
          a.load(i0, len, ab);
          b.load(i0, len, bb);
          simd::add_dot_sums(ab, bb, detail::padded(len), acc);
        }
      });
  const Sums s{sums[0], sums[1], sums[2]};
  // mergekit's thresholds: a norm at most 1e-8 counts as 1, and a cosine
  // past 0.9995 in magnitude interpolates linearly.
  constexpr double kEps = 1e-8;
  constexpr double kDotThreshold = 0.9995;
  double na = std::sqrt(s.aa);
  double nb = std::sqrt(s.bb);
  if (!(na > kEps)) na = 1.0;
  if (!(nb > kEps)) nb = 1.0;
  const double cos_theta = std::clamp(s.ab / (na * nb), -1.0, 1.0);
  Coefficients c{1 - t, t};
  if (std::abs(cos_theta) <= kDotThreshold) c = spherical(t, cos_theta);
  const float ca = static_cast<float>(c.a);
  const float cb = static_cast<float>(c.b);
  return std::make_unique<SlerpMerge>(base, other, ca, cb);
}

}  // namespace detail

Tensor slerp(const Tensor& base, const Tensor& other, double t) {
  return detail::produce_output(*detail::prepare_slerp(base, other, t), base);
}

Tensor nuslerp(const Tensor* base_input, const Tensor& a_input,
               const Tensor& b_input, const NuslerpOptions& options) {
  detail::check_merge_input(a_input, a_input, "nuslerp");
  detail::check_merge_input(b_input, a_input, "nuslerp");
  if (base_input) detail::check_merge_input(*base_input, a_input, "nuslerp");
  // Not one of the streamed methods: whole f32 tensors.
  const Tensor a = detail::as_f32(a_input), b = detail::as_f32(b_input);
  const Tensor base_f32 = base_input ? detail::as_f32(*base_input) : Tensor();
  const Tensor* base = base_input ? &base_f32 : nullptr;
  const double total = options.weight_a + options.weight_b;
  const double t = std::abs(total) < 1e-6 ? 0.5 : options.weight_b / total;
  const std::int64_t n = a.numel();
  Vectors vs{1, n, 0, 1};
  if (!options.flatten && a.rank() >= 1 && n > 0) {
    const std::int64_t first = a.shape()[0];
    const std::int64_t last = a.shape()[a.rank() - 1];
    if (options.row_wise && a.rank() >= 2) {
      vs = {n / first, first, 1, n / first};  // along axis 0
    } else {
      vs = {n / last, last, last, 1};  // along the last axis
    }
  }
  // The vectors to interpolate: the differences from the base, when there
  // is one (recomputed where needed rather than stored).
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  const float* z = base ? base->data<float>() : nullptr;
  const std::vector<Sums> sums = vector_sums(x, y, z, vs);
  std::vector<float> ca(sums.size()), cb(sums.size());
  for (std::size_t v = 0; v < sums.size(); ++v) {
    // mergekit normalises by max(norm, 1e-7) and falls back to linear
    // interpolation only when 1 - cos^2 <= 1e-16.
    const double na = std::max(std::sqrt(sums[v].aa), 1e-7);
    const double nb = std::max(std::sqrt(sums[v].bb), 1e-7);
    const double cos_theta = std::clamp(sums[v].ab / (na * nb), -1.0, 1.0);
    Coefficients c{1 - t, t};
    if (1 - cos_theta * cos_theta > 1e-16) c = spherical(t, cos_theta);
    ca[v] = static_cast<float>(c.a);
    cb[v] = static_cast<float>(c.b);
  }
  Tensor out = detail::new_output(a);
  float* o = out.data<float>();
  detail::for_ranges(n, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i) {
      // Which vector element i belongs to.
      const std::size_t v =
          static_cast<std::size_t>(vs.count == 1     ? 0
                                   : vs.vstride == 1 ? i % vs.count
                                                     : i / vs.length);
      if (z) {
        o[i] = z[i] + (ca[v] * (x[i] - z[i]) + cb[v] * (y[i] - z[i]));
      } else {
        o[i] = ca[v] * x[i] + cb[v] * y[i];
      }
    }
  });
  return out;
}

}  // namespace tessel::merge

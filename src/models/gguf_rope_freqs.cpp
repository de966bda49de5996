// Llama 3's RoPE scaling as llama.cpp's converter writes it: the f32
// divisors of conversion/llama.py's generate_extra_tensors, and back.
// Compiled without FMA contraction: every step rounds to f32 as torch's
// f32 ops do.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/check.hpp"
#include "tessel/models/gguf_conversion.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// 2 * math.pi / freq, which torch evaluates as reciprocal(freq) * 2pi.
float wavelength(float inverse_frequency) {
  return (1.0f / inverse_frequency) *
         static_cast<float>(2.0 * std::numbers::pi);
}

// 1 / base ** (arange(0, dim, 2) / dim) in f32. torch's pow is its own
// (vectorised Sleef, within 1 ulp); this one is correctly rounded (f64 pow,
// rounded once), which agrees for Llama 3's theta 500000 with head_dim 64
// and 128.
std::vector<float> inverse_frequencies(const DecoderConfig& c) {
  const auto base = static_cast<float>(c.rope_theta);
  const auto dim = static_cast<float>(c.head_dim);
  std::vector<float> out;
  for (std::int64_t i = 0; i < c.head_dim; i += 2) {
    const float exponent = static_cast<float>(i) / dim;
    const auto p = static_cast<float>(
        std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    out.push_back(1.0f / p);
  }
  return out;
}

std::vector<float> divisors(const DecoderConfig& c,
                            const Llama3RopeScaling& s) {
  // Python computes these bounds in f64; comparing with an f32 tensor
  // rounds them to f32.
  const auto old = static_cast<double>(s.original_max_position_embeddings);
  const auto low_wavelen = static_cast<float>(old / s.low_freq_factor);
  const auto high_wavelen = static_cast<float>(old / s.high_freq_factor);
  const auto factor = static_cast<float>(s.factor);
  const auto low = static_cast<float>(s.low_freq_factor);
  const auto span = static_cast<float>(s.high_freq_factor - s.low_freq_factor);
  std::vector<float> out;
  for (const float freq : inverse_frequencies(c)) {
    const float wavelen = wavelength(freq);
    if (wavelen < high_wavelen) {
      out.push_back(1.0f);
    } else if (wavelen > low_wavelen) {
      out.push_back(factor);
    } else {
      // old / wavelen is reciprocal(wavelen) * old; 1 / x likewise.
      const float ratio = (1.0f / wavelen) * static_cast<float>(old);
      const float smooth = (ratio - low) / span;
      const float blended = (1.0f - smooth) / factor + smooth;
      out.push_back(1.0f / blended);
    }
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

Tensor gguf_rope_freqs(const DecoderConfig& config) {
  if (!config.rope_scaling) return Tensor();
  const std::vector<float> d = divisors(config, *config.rope_scaling);
  Tensor out = from_vector(d, {static_cast<std::int64_t>(d.size())});
  out.set_name("rope_freqs.weight");
  return out;
}

std::optional<Llama3RopeScaling> llama3_scaling_from_rope_freqs(
    const DecoderConfig& config, const Tensor& rope_freqs) {
  const std::int64_t half = config.head_dim / 2;
  TESSEL_CHECK(rope_freqs.rank() == 1 && rope_freqs.size(0) == half &&
                   is_floating_point(rope_freqs.dtype()),
               BadConfig, "GGUF model",
               "rope_freqs.weight must be {} floats (head_dim / 2), not {} "
               "of shape [{}]",
               half, dtype_name(rope_freqs.dtype()),
               fmt::join(rope_freqs.shape(), ", "));
  const Tensor f32 = rope_freqs.to(DType::F32).contiguous();
  const std::vector<float> want(f32.data<float>(), f32.data<float>() + half);
  if (std::all_of(want.begin(), want.end(), [](float v) { return v == 1; })) {
    return std::nullopt;
  }
  const float top = *std::max_element(want.begin(), want.end());
  // Llama 3 divides by factors of 1 and more; anything else is not its
  // curve (and would divide by zero below).
  const bool plausible =
      top > 1 && std::isfinite(top) &&
      std::all_of(want.begin(), want.end(), [](float v) { return v >= 1; });
  const double factor = plausible ? f32_shortest_decimal(top) : 0;

  // Between the two bounds the divisor is 1 / ((1 - s) / factor + s) with
  // s = (old / wavelen - low) / (high - low): s is linear in 1 / wavelen,
  // and scaling old, low and high together changes nothing, so low = 1
  // and a line through the smooth points gives old and high.
  std::vector<std::pair<double, double>> smooth;  // (1 / wavelen, s)
  const std::vector<float> inverse = inverse_frequencies(config);
  for (std::int64_t i = 0; plausible && i < half; ++i) {
    const float v = want[static_cast<std::size_t>(i)];
    if (v > 1 && v < top) {
      const double s = (1.0 / v - 1.0 / factor) / (1.0 - 1.0 / factor);
      smooth.emplace_back(
          1.0 / wavelength(inverse[static_cast<std::size_t>(i)]), s);
    }
  }
  std::vector<std::pair<double, double>> guesses;  // (high, old)
  if (smooth.size() >= 2) {
    double mx = 0, my = 0;
    for (const auto& [x, y] : smooth) {
      mx += x;
      my += y;
    }
    mx /= static_cast<double>(smooth.size());
    my /= static_cast<double>(smooth.size());
    double sxy = 0, sxx = 0;
    for (const auto& [x, y] : smooth) {
      sxy += (x - mx) * (y - my);
      sxx += (x - mx) * (x - mx);
    }
    const double slope = sxx > 0 ? sxy / sxx : 0;
    const double intercept = my - slope * mx;  // -1 / (high - 1)
    if (intercept < 0) {
      const double high = 1 - 1 / intercept;
      const double old = std::round(slope * (high - 1));
      for (const double h :
           {std::round(high), std::round(high * 2) / 2,
            std::round(high * 10) / 10, std::round(high * 100) / 100,
            f32_shortest_decimal(high)}) {
        guesses.emplace_back(h, old);
      }
    }
  } else if (smooth.size() == 1) {
    for (const double high : {4.0, 2.0, 8.0}) {
      const auto [x, s] = smooth[0];
      guesses.emplace_back(high, std::round((s * (high - 1) + 1) / x));
    }
  }
  std::vector<double> olds = {
      8192, static_cast<double>(config.max_position_embeddings),
      std::round(static_cast<double>(config.max_position_embeddings) /
                 std::max(factor, 1.0))};
  for (int k = 4; k <= 20; ++k) olds.push_back(std::ldexp(1.0, k));
  for (const double old : olds) {
    for (const double high : {4.0, 2.0, 8.0}) guesses.emplace_back(high, old);
  }
  for (const auto& [high, old] : guesses) {
    if (!plausible || !(high > 1) || !(old >= 1) || old > 1e12) continue;
    Llama3RopeScaling s;
    s.factor = factor;
    s.low_freq_factor = 1;
    s.high_freq_factor = high;
    s.original_max_position_embeddings = static_cast<std::int64_t>(old);
    if (same_bits(divisors(config, s), want)) return s;
  }
  detail::fail(ErrorCode::BadConfig, "GGUF model",
               "rope_freqs.weight is not Llama 3's RoPE scaling for any "
               "factor, low/high frequency factors and original context "
               "tessel tried (rope_theta {}, head_dim {}), so config.json "
               "cannot express it",
               config.rope_theta, config.head_dim);
}

}  // namespace tessel

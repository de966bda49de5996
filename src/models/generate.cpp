#include "tessel/models/generate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

Sampler::Sampler(const SamplingOptions& options)
    : options_(options), generator_(options.seed) {
  TESSEL_CHECK(options.temperature >= 0, BadConfig, "Sampler",
               "temperature must be >= 0, not {}", options.temperature);
  TESSEL_CHECK(options.top_k >= 0, BadConfig, "Sampler",
               "top_k must be >= 0, not {}", options.top_k);
  TESSEL_CHECK(options.top_p > 0 && options.top_p <= 1, BadConfig, "Sampler",
               "top_p must be in (0, 1], not {}", options.top_p);
}

std::int64_t Sampler::sample(const Tensor& logits) {
  TESSEL_CHECK(logits.rank() == 1 && logits.numel() > 0, BadShape, "Sampler",
               "logits must be one non-empty row, not shape [{}]",
               fmt::join(logits.shape(), ", "));
  const Tensor row = logits.to(DType::F64).contiguous();
  const double* z = row.data<double>();
  const auto n = static_cast<std::size_t>(row.numel());
  if (options_.temperature == 0) {
    // Greedy: the first maximum (argmax's rule), without sorting the
    // vocabulary.
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (z[i] > z[best]) best = i;
    }
    return static_cast<std::int64_t>(best);
  }
  // Highest logit first; ties keep the lower id.
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return z[a] > z[b]; });
  std::size_t keep = n;
  if (options_.top_k > 0) {
    keep = std::min(keep, static_cast<std::size_t>(options_.top_k));
  }
  std::vector<double> p(keep);
  const double top = z[order[0]];
  double total = 0;
  for (std::size_t i = 0; i < keep; ++i) {
    p[i] = std::exp((z[order[i]] - top) / options_.temperature);
    total += p[i];
  }
  if (options_.top_p < 1) {
    double mass = 0;
    std::size_t cut = 0;
    while (cut < keep && mass < options_.top_p * total) mass += p[cut++];
    keep = std::max<std::size_t>(cut, 1);
    total = std::accumulate(p.begin(), p.begin() + keep, 0.0);
  }
  // One Philox block per draw: a uniform double in [0, 1).
  const auto words = generator_.block(draws_++);
  const std::uint64_t bits =
      (static_cast<std::uint64_t>(words[0]) << 21) ^ (words[1] >> 11);
  const double u = static_cast<double>(bits & ((1ull << 53) - 1)) * 0x1p-53;
  double target = u * total;
  for (std::size_t i = 0; i < keep; ++i) {
    target -= p[i];
    if (target < 0) return order[i];
  }
  return order[keep - 1];
}

std::vector<std::vector<std::int64_t>> generate(
    const CausalLM& lm, const Tensor& prompts, const GenerateOptions& options,
    const std::function<void(std::int64_t, std::int64_t)>& on_token) {
  TESSEL_CHECK(prompts.rank() == 2 && prompts.size(1) > 0, BadShape, "generate",
               "prompts must be (batch, length > 0), not [{}]",
               fmt::join(prompts.shape(), ", "));
  TESSEL_CHECK(options.max_new_tokens >= 0, BadConfig, "generate",
               "max_new_tokens must be >= 0");
  const std::int64_t batch = prompts.size(0);
  const std::int64_t capacity =
      std::min(prompts.size(1) + options.max_new_tokens,
               lm.config().max_position_embeddings);
  KVCache cache(lm.config(), batch, std::max(capacity, prompts.size(1)),
                options.cache_dtype);
  Sampler sampler(options.sampling);
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(batch));
  std::vector<bool> done(static_cast<std::size_t>(batch), false);
  Tensor ids = prompts.to(DType::I64);
  for (std::int64_t step = 0; step < options.max_new_tokens; ++step) {
    if (step > 0 &&
        cache.length() + ids.size(1) > lm.config().max_position_embeddings) {
      break;  // the model has no positions left
    }
    const Tensor logits = lm.next_token_logits(ids, &cache);
    std::vector<std::int64_t> next(static_cast<std::size_t>(batch));
    bool all_done = true;
    for (std::int64_t b = 0; b < batch; ++b) {
      const auto i = static_cast<std::size_t>(b);
      if (done[i]) {
        next[i] = *options.stop_token;
        continue;
      }
      next[i] = sampler.sample(logits.select(0, b));
      out[i].push_back(next[i]);
      if (on_token) on_token(b, next[i]);
      done[i] = options.stop_token && next[i] == *options.stop_token;
      all_done = all_done && done[i];
    }
    if (all_done) break;
    ids = from_vector(next, {batch, 1});
  }
  return out;
}

}  // namespace tessel

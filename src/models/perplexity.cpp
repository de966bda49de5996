#include "tessel/models/perplexity.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

constexpr const char* kOp = "perplexity";
// Positions run per forward pass: bounds the (positions, vocab) logits of
// a long window (a 150k vocabulary makes 600 MB of them at 1024).
constexpr std::int64_t kPiece = 512;

// -log p(token) from one row of logits, computed as llama.cpp's
// log_softmax does (max in float, the sum of expf in double), so that the
// same logits give the same bits.
double negative_log_prob(const float* logits, std::int64_t vocab,
                         std::int64_t token) {
  float max_logit = logits[0];
  for (std::int64_t i = 1; i < vocab; ++i) {
    max_logit = std::max(max_logit, logits[i]);
  }
  double sum_exp = 0.0;
  for (std::int64_t i = 0; i < vocab; ++i) {
    sum_exp += std::exp(logits[i] - max_logit);
  }
  return -(logits[token] - max_logit - std::log(sum_exp));
}

}  // namespace

PerplexityMeter::PerplexityMeter(const CausalLM& lm,
                                 std::vector<std::int64_t> tokens,
                                 std::int64_t context,
                                 std::optional<std::int64_t> bos,
                                 DType cache_dtype)
    : lm_(lm),
      tokens_(std::move(tokens)),
      context_(context),
      bos_(bos),
      cache_dtype_(cache_dtype) {
  const std::int64_t positions = lm.config().max_position_embeddings;
  TESSEL_CHECK(context >= 3 && context <= positions, BadConfig, kOp,
               "the context must be between 3 and the model's {} positions, "
               "not {}",
               positions, context);
  const auto n = static_cast<std::int64_t>(tokens_.size());
  TESSEL_CHECK(n >= 2 * context, BadConfig, kOp,
               "the text has {} tokens; a context of {} needs at least {} "
               "(two windows)",
               n, context, 2 * context);
  const std::int64_t vocab = lm.config().vocab_size;
  for (const std::int64_t t : tokens_) {
    TESSEL_CHECK(t >= 0 && t < vocab, OutOfRange, kOp,
                 "token {} is outside the model's vocabulary of {}", t, vocab);
  }
  windows_ = n / context;
}

void PerplexityMeter::score_next() {
  TESSEL_CHECK(done_ < windows_, OutOfRange, kOp, "all {} windows are scored",
               windows_);
  const std::int64_t start = done_ * context_;
  std::vector<std::int64_t> window(tokens_.begin() + start,
                                   tokens_.begin() + start + context_);
  if (bos_) window[0] = *bos_;
  const std::int64_t first = context_ / 2;
  const std::int64_t vocab = lm_.config().vocab_size;
  KVCache cache(lm_.config(), 1, context_, cache_dtype_);
  const auto piece_ids = [&](std::int64_t p, std::int64_t q) {
    const std::vector<std::int64_t> piece(window.begin() + p,
                                          window.begin() + q);
    return from_vector(piece, {1, q - p});
  };
  // The unscored first half only fills the cache: no head product for it.
  for (std::int64_t p = 0; p < first; p += kPiece) {
    lm_.next_token_logits(piece_ids(p, std::min(p + kPiece, first)), &cache);
  }
  for (std::int64_t p = first; p < context_; p += kPiece) {
    const std::int64_t q = std::min(p + kPiece, context_);
    const Tensor logits =
        lm_.logits(piece_ids(p, q), &cache).to(DType::F32).contiguous();
    const float* rows = logits.data<float>();
    // Position j predicts token j + 1; the last position predicts nothing
    // inside the window.
    for (std::int64_t j = p; j < std::min(q, context_ - 1); ++j) {
      const double v =
          negative_log_prob(rows + (j - p) * vocab, vocab,
                            tokens_[static_cast<std::size_t>(start + j + 1)]);
      nll_ += v;
      nll2_ += v * v;
      ++count_;
    }
  }
  ++done_;
}

double PerplexityMeter::perplexity() const {
  return count_ > 0 ? std::exp(nll_ / static_cast<double>(count_)) : NAN;
}

double PerplexityMeter::perplexity_error() const {
  if (count_ < 2) return 0;
  const double n = static_cast<double>(count_);
  const double mean = nll_ / n;
  const double variance = nll2_ / n - mean * mean;
  if (variance <= 0) return 0;
  return std::sqrt(variance / (n - 1)) * std::exp(mean);
}

}  // namespace tessel

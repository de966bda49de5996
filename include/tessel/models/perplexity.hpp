// Perplexity over a text as llama.cpp's perplexity tool measures it, so
// that the numbers compare: the tokens are cut into non-overlapping
// windows of `context` tokens (the rest dropped), each window is run from
// position 0 with its first token replaced by BOS when the vocabulary adds
// one, and only the second half is scored (the token after each of
// positions context/2 .. context-2), log-softmax summed in double.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/models/decoder.hpp"

namespace tessel {

class PerplexityMeter {
 public:
  // `tokens`: the whole text as llama.cpp tokenises it (BOS first when the
  // vocabulary adds it). `bos`: the token each window starts with, or none.
  // `cache_dtype`: what the KV cache keeps keys and values in (KVCache).
  // E4001 for a context below 3 or past the model's positions, and for
  // fewer than 2 * context tokens (llama.cpp's rule).
  PerplexityMeter(const CausalLM& lm, std::vector<std::int64_t> tokens,
                  std::int64_t context, std::optional<std::int64_t> bos,
                  DType cache_dtype = DType::F32);

  std::int64_t windows() const { return windows_; }
  std::int64_t windows_done() const { return done_; }
  std::int64_t context() const { return context_; }
  // Runs and scores the next window (E2302 when all are done).
  void score_next();

  // Tokens scored so far.
  std::int64_t scored() const { return count_; }
  // exp(mean negative log-likelihood) over the scored tokens.
  double perplexity() const;
  // llama.cpp's uncertainty of it: ppl * sqrt(var(nll) / (count - 1)),
  // 0 when the variance is not positive.
  double perplexity_error() const;

 private:
  const CausalLM& lm_;
  std::vector<std::int64_t> tokens_;
  std::int64_t context_;
  std::optional<std::int64_t> bos_;
  DType cache_dtype_;
  std::int64_t windows_;
  std::int64_t done_ = 0;
  std::int64_t count_ = 0;
  double nll_ = 0;
  double nll2_ = 0;
};

}  // namespace tessel

// Sampling the next token from logits, and autoregressive generation with
// a KV cache.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "tessel/core/random.hpp"
#include "tessel/models/decoder.hpp"

namespace tessel {

struct SamplingOptions {
  // 0 picks the most likely token (greedy); otherwise logits / temperature.
  double temperature = 1.0;
  // Keep only the k most likely tokens (0: all).
  std::int64_t top_k = 0;
  // Keep the smallest set of most likely tokens whose probability reaches
  // top_p (1: all).
  double top_p = 1.0;
  std::uint64_t seed = 0;
};

// Draws token ids from rows of logits; the same seed and logits give the
// same tokens on every machine.
class Sampler {
 public:
  // E4001 for a negative temperature or top_k, or top_p outside (0, 1].
  explicit Sampler(const SamplingOptions& options);
  // logits (vocab) of any float dtype -> a token id.
  std::int64_t sample(const Tensor& logits);

 private:
  SamplingOptions options_;
  Generator generator_;
  std::uint64_t draws_ = 0;
};

struct GenerateOptions {
  std::int64_t max_new_tokens = 32;
  SamplingOptions sampling;
  // Generation of a sequence stops after this token (it is included).
  std::optional<std::int64_t> stop_token;
  // What the KV cache keeps keys and values in (KVCache).
  DType cache_dtype = DType::F32;
};

// Continues each row of prompts (B, S) (ids) and returns the new tokens of
// every row (a row ends at its stop token, at max_new_tokens, or where the
// model runs out of positions).
// `on_token(row, id)` sees each new token as it is produced. Runs without
// recording a graph.
std::vector<std::vector<std::int64_t>> generate(
    const CausalLM& lm, const Tensor& prompts, const GenerateOptions& options,
    const std::function<void(std::int64_t, std::int64_t)>& on_token = {});

}  // namespace tessel

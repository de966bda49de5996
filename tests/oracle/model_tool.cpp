// Drives a checkpoint for the model oracles (test_models.py):
//   model_tool logits MODEL IDS OUT.npy   logits (n, vocab) f32 of one
//                                          forward over the ids
//   model_tool generate MODEL IDS N       N greedy tokens (no EOS stop),
//                                          printed space-separated
// MODEL is an HF checkpoint directory or a GGUF file; IDS a comma-
// separated list of token ids.
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "tessel/tessel.hpp"

namespace {

std::vector<std::int64_t> parse_ids(const std::string& csv) {
  std::vector<std::int64_t> ids;
  std::stringstream in(csv);
  for (std::string item; std::getline(in, item, ',');) {
    ids.push_back(std::stoll(item));
  }
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc != 5) {
    std::fprintf(stderr,
                 "usage: model_tool logits|logits-bf16-matmul MODEL IDS "
                 "OUT.npy\n"
                 "       model_tool generate MODEL IDS N\n");
    return 2;
  }
  const std::string mode = argv[1];
  try {
    const auto lm = CausalLM::load(argv[2]);
    const std::vector<std::int64_t> ids = parse_ids(argv[3]);
    const Tensor prompt =
        from_vector(ids, {1, static_cast<std::int64_t>(ids.size())});
    if (mode == "logits" || mode == "logits-bf16-matmul") {
      const MatmulPrecisionGuard precision(
          mode == "logits" ? MatmulPrecision::F32 : MatmulPrecision::BF16);
      save_npy(argv[4], lm->logits(prompt).select(0, 0));
      return 0;
    }
    if (mode == "generate") {
      GenerateOptions options;
      options.max_new_tokens = std::atoll(argv[4]);
      options.sampling.temperature = 0;
      const auto rows = generate(*lm, prompt, options);
      for (std::size_t i = 0; i < rows[0].size(); ++i) {
        std::printf(i ? " %lld" : "%lld", static_cast<long long>(rows[0][i]));
      }
      std::printf("\n");
      return 0;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}

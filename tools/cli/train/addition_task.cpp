#include <fmt/format.h>

#include <unordered_set>

#include "cli/train/task.hpp"

namespace tessel::cli {

std::uint64_t random_u64(std::uint64_t seed, std::uint64_t stream,
                         std::uint64_t index) {
  const auto w = philox4x32_10({static_cast<std::uint32_t>(index),
                                static_cast<std::uint32_t>(index >> 32),
                                static_cast<std::uint32_t>(stream),
                                static_cast<std::uint32_t>(stream >> 32)},
                               {static_cast<std::uint32_t>(seed),
                                static_cast<std::uint32_t>(seed >> 32)});
  return (static_cast<std::uint64_t>(w[0]) << 32) | w[1];
}

namespace {

constexpr std::int64_t kPromptLength = 8;  // "123+456="
constexpr std::int64_t kAnswerLength = 5;  // "9750\n"
constexpr std::int64_t kSequence = kPromptLength + kAnswerLength - 1;
constexpr std::int64_t kHeldOut = 1000;
constexpr std::int64_t kProblems = 1000 * 1000;
constexpr std::uint64_t kTrainStream = 1;
constexpr std::uint64_t kHeldOutStream = 2;

std::string prompt_text(std::int64_t a, std::int64_t b) {
  return fmt::format("{:03}+{:03}=", a, b);
}

std::string answer_text(std::int64_t a, std::int64_t b) {
  std::string digits = fmt::format("{:04}", a + b);
  return std::string(digits.rbegin(), digits.rend()) + "\n";
}

// A digit of the sum depends on two operand digits jointly: with uniform
// operands, (a + b) mod 10 is independent of a alone, so neither attention
// target pays off before the other is found, and runs plateau (sometimes
// for good). A quarter of the training problems therefore have each operand
// digit zeroed with probability 1/2, which makes single digits informative;
// held-out problems stay uniform. `bits` are random bits of the draw.
std::int64_t sparse_digits(std::int64_t problem, std::uint64_t bits) {
  if ((bits & 3) != 0) return problem;
  bits >>= 2;
  std::int64_t out = 0;
  for (std::int64_t place = 100000; place > 0; place /= 10, bits >>= 1) {
    const std::int64_t digit = problem / place % 10;
    out += (bits & 1) ? 0 : digit * place;
  }
  return out;
}

class AdditionTask : public Task {
 public:
  explicit AdditionTask(std::uint64_t seed) {
    // The held-out problems are fixed by the seed and never trained on.
    for (std::uint64_t i = 0; held_out_.size() < kHeldOut; ++i) {
      const auto p = static_cast<std::int64_t>(
          random_u64(seed, kHeldOutStream, i) % kProblems);
      if (held_out_set_.insert(p).second) held_out_.push_back(p);
    }
  }

  std::string kind() const override { return "addition"; }
  std::int64_t sequence_length() const override { return kSequence; }

  void configure(DecoderConfig& c) const override {
    c.vocab_size = ByteTokenizer::kVocabSize;
    c.max_position_embeddings = kPromptLength + kAnswerLength;
    c.eos_token_id = '\n';
    // 13 positions: with RoPE's usual base of 10000 most frequency pairs
    // barely turn over so short a range, and attention to "the units digit
    // of each operand" is slow to find; a base of 10 spreads them
    // (docs/training.md).
    c.rope_theta = 10.0;
  }

  Batch batch(std::uint64_t seed, std::int64_t step,
              std::int64_t size) const override {
    std::vector<std::int64_t> inputs, targets;
    inputs.reserve(static_cast<std::size_t>(size * kSequence));
    targets.reserve(static_cast<std::size_t>(size * kSequence));
    std::uint64_t draw = static_cast<std::uint64_t>(step) << 24;
    for (std::int64_t row = 0; row < size; ++row) {
      std::int64_t p;
      do {
        const std::uint64_t r = random_u64(seed, kTrainStream, draw++);
        p = sparse_digits(static_cast<std::int64_t>(r % kProblems), r >> 20);
      } while (held_out_set_.count(p));
      const std::string text =
          prompt_text(p / 1000, p % 1000) + answer_text(p / 1000, p % 1000);
      for (std::int64_t i = 0; i < kSequence; ++i) {
        inputs.push_back(static_cast<unsigned char>(text[i]));
        // Only the answer is scored: the operands are random.
        targets.push_back(i + 1 >= kPromptLength
                              ? static_cast<unsigned char>(text[i + 1])
                              : -100);
      }
    }
    return {from_vector(inputs, {size, kSequence}),
            from_vector(targets, {size, kSequence})};
  }

  Evaluation evaluate(const CausalLM& lm) const override {
    const auto answers = complete(lm, held_out_);
    std::int64_t correct = 0;
    for (std::size_t i = 0; i < held_out_.size(); ++i) {
      const std::int64_t p = held_out_[i];
      correct += answers[i] == answer_text(p / 1000, p % 1000);
    }
    const double accuracy =
        100.0 * static_cast<double>(correct) / static_cast<double>(kHeldOut);
    return {fmt::format("held-out accuracy: {:.1f}% ({}/{} exact answers)",
                        accuracy, correct, kHeldOut),
            accuracy};
  }

  std::string samples(const CausalLM& lm) const override {
    const std::vector<std::int64_t> shown(held_out_.begin(),
                                          held_out_.begin() + 3);
    const auto answers = complete(lm, shown);
    std::string out;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const std::int64_t a = shown[i] / 1000, b = shown[i] % 1000;
      std::string reversed = answers[i];
      if (!reversed.empty() && reversed.back() == '\n') reversed.pop_back();
      const std::string sum(reversed.rbegin(), reversed.rend());
      out += fmt::format("  {}{} -> {} {}\n", prompt_text(a, b), reversed, sum,
                         answers[i] == answer_text(a, b) ? "ok" : "WRONG");
    }
    return out;
  }

 private:
  // Greedy answers to the problems, in batches with a KV cache.
  std::vector<std::string> complete(
      const CausalLM& lm, const std::vector<std::int64_t>& problems) const {
    std::vector<std::string> out;
    const ByteTokenizer tokenizer;
    constexpr std::size_t kChunk = 500;
    for (std::size_t start = 0; start < problems.size(); start += kChunk) {
      const std::size_t end = std::min(problems.size(), start + kChunk);
      std::vector<std::int64_t> ids;
      for (std::size_t i = start; i < end; ++i) {
        const auto p = tokenizer.encode(
            prompt_text(problems[i] / 1000, problems[i] % 1000));
        ids.insert(ids.end(), p.begin(), p.end());
      }
      GenerateOptions options;
      options.max_new_tokens = kAnswerLength;
      options.sampling.temperature = 0;
      options.stop_token = '\n';
      const auto rows = generate(
          lm,
          from_vector(ids,
                      {static_cast<std::int64_t>(end - start), kPromptLength}),
          options);
      for (const auto& row : rows) out.push_back(tokenizer.decode(row));
    }
    return out;
  }

  std::vector<std::int64_t> held_out_;
  std::unordered_set<std::int64_t> held_out_set_;
};

}  // namespace

std::unique_ptr<Task> make_addition_task(std::uint64_t seed) {
  return std::make_unique<AdditionTask>(seed);
}

}  // namespace tessel::cli

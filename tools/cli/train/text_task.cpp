#include <fmt/format.h>

#include <cmath>

#include "cli/train/task.hpp"

namespace tessel::cli {

namespace {

constexpr std::uint64_t kWindowStream = 3;
constexpr std::int64_t kEvalWindows = 64;

class TextTask : public Task {
 public:
  TextTask(const std::filesystem::path& path, std::int64_t sequence)
      : sequence_(sequence) {
    if (sequence < 2) {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[train] --seq-len must be at least 2, not {}",
                              sequence));
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) {
      throw_error(ErrorCode::IoFailure,
                  fmt::format("[train] cannot read '{}': {}", path.string(),
                              ec.message()));
    }
    // Training needs windows of sequence + 1 bytes in both parts.
    const auto needed = static_cast<std::uintmax_t>(10 * (sequence + 1));
    if (size < needed) {
      throw_error(ErrorCode::BadConfig,
                  fmt::format("[train] '{}' has {} bytes; training with "
                              "--seq-len {} needs at least {}",
                              path.string(), size, sequence, needed));
    }
    bytes_ = Storage::map_file(path);
    const auto n = static_cast<std::int64_t>(size);
    split_ = n - n / 10;
  }

  std::string kind() const override { return "text"; }
  std::int64_t sequence_length() const override { return sequence_; }

  void configure(DecoderConfig& c) const override {
    c.vocab_size = ByteTokenizer::kVocabSize;
    c.max_position_embeddings = sequence_;
    c.eos_token_id.reset();
  }

  Batch batch(std::uint64_t seed, std::int64_t step,
              std::int64_t size) const override {
    std::vector<std::int64_t> starts;
    const auto span = static_cast<std::uint64_t>(split_ - sequence_);
    for (std::int64_t row = 0; row < size; ++row) {
      starts.push_back(static_cast<std::int64_t>(
          random_u64(seed, kWindowStream,
                     (static_cast<std::uint64_t>(step) << 24) +
                         static_cast<std::uint64_t>(row)) %
          span));
    }
    return windows(starts);
  }

  Evaluation evaluate(const CausalLM& lm) const override {
    // Evenly spaced windows of the held-out part.
    const std::int64_t span =
        (static_cast<std::int64_t>(bytes_.nbytes()) - split_ - sequence_ - 1);
    std::vector<std::int64_t> starts;
    for (std::int64_t i = 0; i < kEvalWindows; ++i) {
      starts.push_back(split_ + span * i / kEvalWindows);
    }
    const Batch b = windows(starts);
    NoGradGuard no_grad;
    const double loss =
        cross_entropy(lm.forward(b.inputs), b.targets).item<double>();
    return {fmt::format("held-out loss: {:.4f} (perplexity {:.2f})", loss,
                        std::exp(loss)),
            loss};
  }

  std::string samples(const CausalLM& lm) const override {
    const ByteTokenizer tokenizer;
    const auto* data = static_cast<const std::uint8_t*>(bytes_.data());
    const std::int64_t prompt = std::min<std::int64_t>(16, sequence_ / 2);
    std::vector<std::int64_t> ids(data + split_, data + split_ + prompt);
    GenerateOptions options;
    options.max_new_tokens = sequence_ - prompt;
    options.sampling.temperature = 0;
    const auto out = generate(lm, from_vector(ids, {1, prompt}), options);
    std::string text = tokenizer.decode(ids) + tokenizer.decode(out[0]);
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 32 && c != '\n') c = ' ';
    }
    return fmt::format("  sample: {}\n", text);
  }

 private:
  Batch windows(const std::vector<std::int64_t>& starts) const {
    const auto* data = static_cast<const std::uint8_t*>(bytes_.data());
    std::vector<std::int64_t> inputs, targets;
    for (const std::int64_t s : starts) {
      for (std::int64_t i = 0; i < sequence_; ++i) {
        inputs.push_back(data[s + i]);
        targets.push_back(data[s + i + 1]);
      }
    }
    const auto rows = static_cast<std::int64_t>(starts.size());
    return {from_vector(inputs, {rows, sequence_}),
            from_vector(targets, {rows, sequence_})};
  }

  std::int64_t sequence_;
  Storage bytes_;
  std::int64_t split_;
};

}  // namespace

std::unique_ptr<Task> make_text_task(const std::filesystem::path& path,
                                     std::int64_t sequence_length) {
  return std::make_unique<TextTask>(path, sequence_length);
}

}  // namespace tessel::cli

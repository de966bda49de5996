// What `tessel train` learns: a source of training batches and a held-out
// evaluation. Batches depend only on (seed, step), so a resumed run sees
// exactly the batches the uninterrupted one would have.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "tessel/tessel.hpp"

namespace tessel::cli {

struct Batch {
  Tensor inputs;   // (B, S) i64 token ids
  Tensor targets;  // (B, S) i64 next tokens; -100 where nothing is scored
};

struct Evaluation {
  std::string line;  // e.g. "held-out accuracy: 99.7% (997/1000)"
  double value;      // the number the line reports
};

class Task {
 public:
  virtual ~Task() = default;
  // How the checkpoint records the task ("addition", or "text").
  virtual std::string kind() const = 0;
  virtual std::int64_t sequence_length() const = 0;
  // The model shape that suits the task (vocabulary, positions, stop token).
  virtual void configure(DecoderConfig& config) const = 0;
  virtual Batch batch(std::uint64_t seed, std::int64_t step,
                      std::int64_t size) const = 0;
  virtual Evaluation evaluate(const CausalLM& lm) const = 0;
  // A few sample completions for the log ("" when there is nothing to
  // show).
  virtual std::string samples(const CausalLM& lm) const = 0;
};

// 3-digit addition "123+456=" -> the sum's 4 digits least significant
// first and a newline ("9750\n"): reversed digits let the model emit each
// carry after the digits it depends on.
std::unique_ptr<Task> make_addition_task(std::uint64_t seed);
// Next-byte prediction on a file: the last tenth is held out.
std::unique_ptr<Task> make_text_task(const std::filesystem::path& path,
                                     std::int64_t sequence_length);

// A uniform 64-bit draw that depends only on its arguments (Philox).
std::uint64_t random_u64(std::uint64_t seed, std::uint64_t stream,
                         std::uint64_t index);

}  // namespace tessel::cli

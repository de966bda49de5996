// The output of a `tessel merge` as a TensorSource: tensor i is merged
// when the writer first asks for it — its inputs read from the mapped
// files (f32, f16 and bf16 as they lie, blocks dequantised to f32),
// merged, cast (or block-quantised) to its output dtype, llama's q/k rows
// interleaved for a GGUF file — and freed once written. So memory holds
// one tensor's inputs and result at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/merge_inputs.hpp"
#include "cli/progress.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

struct MergeOutputTensor {
  std::size_t planned = 0;  // index into MergePlan::tensors
  std::string name;         // in the output's naming (HF or GGUF)
  DType dtype = DType::F32;
  std::int64_t interleave_heads = 0;  // > 0: rows into llama.cpp's order
  // A tensor written as it is instead of a merged one (a GGUF file's
  // rope_freqs, which follows from the config).
  Tensor constant;
};

class MergedTensorSource final : public TensorSource {
 public:
  MergedTensorSource(const merge::MergePlan& plan,
                     const std::vector<MergeInput>& inputs,
                     std::vector<MergeOutputTensor> outputs,
                     std::optional<DType> round_inputs_to, std::uint64_t seed);

  void set_progress(Progress* progress) { progress_ = progress; }

  std::size_t size() const override { return specs_.size(); }
  const TensorSpec& spec(std::size_t i) const override { return specs_[i]; }
  const std::uint8_t* bytes(std::size_t i) override;
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override;
  void written(std::size_t i, std::int64_t end) override;

  std::int64_t total_bytes() const;
  // Bytes of every input tensor read so far (for the throughput report).
  std::int64_t bytes_read() const { return bytes_read_; }

 private:
  // Working memory for the largest tensor, reused for every one: the
  // inputs' dequantised copies (touched only for quantised inputs), the
  // f32 result and the result cast to each output dtype. Two sets: one
  // holds the tensor being written, the other the one merged meanwhile.
  struct Buffers {
    std::vector<Tensor> inputs;
    Tensor output;
    std::map<DType, Tensor> typed;
  };

  const Tensor& merged(std::size_t i);
  // Tensor i merged (or constant) and cast to its output dtype, in
  // `buffers`.
  Tensor compute(std::size_t i, Buffers& buffers);

  const merge::MergePlan& plan_;
  const std::vector<MergeInput>& inputs_;
  std::vector<MergeOutputTensor> outputs_;
  std::vector<TensorSpec> specs_;
  std::optional<DType> round_to_;
  std::uint64_t seed_;
  Progress* progress_ = nullptr;
  std::int64_t largest_ = 0;
  Buffers buffers_[2];
  std::size_t cached_index_ = static_cast<std::size_t>(-1);
  Tensor cached_;
  std::int64_t done_tensors_ = 0;
  std::atomic<std::int64_t> bytes_read_ = 0;
  // The next tensor, merging in the background; declared last so that it
  // is waited for before the buffers it writes go.
  std::size_t pending_index_ = static_cast<std::size_t>(-1);
  std::future<Tensor> pending_;
};

}  // namespace tessel::cli

// The output of a whole-checkpoint merge as a TensorSource: tensor i is merged
// when the writer first asks for it — its inputs read from the mapped
// files (f32, f16 and bf16 as they lie, blocks dequantised to f32),
// merged, cast (or block-quantised) to its output dtype, llama's q/k rows
// interleaved for a GGUF file — and freed once written. So memory holds
// one tensor's inputs at a time, and its result only when it cannot be
// streamed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <functional>

#include "merge/model_input.hpp"
#include "tessel/tessel.hpp"

namespace tessel::merge {

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
  MergedTensorSource(const MergePlan& plan,
                     const std::vector<MergeInput>& inputs,
                     std::vector<MergeOutputTensor> outputs,
                     std::optional<DType> round_inputs_to, std::uint64_t seed);

  // Called after each tensor is written: tensors done, input bytes read,
  // the tensor's name.
  using ProgressFn =
      std::function<void(std::int64_t, std::int64_t, const std::string&)>;
  void set_progress(ProgressFn progress) { progress_ = std::move(progress); }

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
  // Tensors of a float dtype in HF row order are streamed: prepared once
  // (the passes that need the whole tensor), then each chunk the writer
  // asks for is produced straight into its buffer in the output dtype, so
  // no whole result is ever held. The others (block-quantised outputs,
  // llama's interleaved GGUF rows, constants) are merged whole.
  bool streamed(std::size_t i) const;
  std::vector<Tensor> read_inputs(const PlannedTensor& p);
  void release_inputs(const PlannedTensor& p);
  const PreparedMerge& prepared(std::size_t i);
  const Tensor& whole(std::size_t i);

  const MergePlan& plan_;
  const std::vector<MergeInput>& inputs_;
  std::vector<MergeOutputTensor> outputs_;
  std::vector<TensorSpec> specs_;
  std::optional<DType> round_to_;
  std::uint64_t seed_;
  ProgressFn progress_;
  // f32 working memory for the largest tensor, reused for every one: the
  // inputs' dequantised copies (touched only for quantised inputs) and a
  // whole result.
  std::int64_t largest_ = 0;
  std::vector<Tensor> input_buffers_;
  Tensor output_buffer_;
  std::size_t prepared_index_ = static_cast<std::size_t>(-1);
  std::vector<Tensor> prepared_inputs_;
  std::unique_ptr<PreparedMerge> prepared_;
  std::size_t cached_index_ = static_cast<std::size_t>(-1);
  Tensor cached_;
  std::int64_t done_tensors_ = 0;
  std::int64_t bytes_read_ = 0;
};

}  // namespace tessel::merge

// The tensors of a model conversion as a TensorSource: each output tensor
// is an input tensor (a view of the mapped file) under a new name, cast to
// its output dtype, block-quantised rows decoded, and for llama's q/k
// projections its rows reordered between HF's and llama.cpp's rotary
// layouts, all chunk by chunk as the writer asks, so that memory holds a
// chunk (or a row), not the model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/progress.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

enum class RowOrder {
  Same,
  Interleave,    // HF -> GGUF for llama q/k (interleave_rope_rows)
  Deinterleave,  // GGUF -> HF (deinterleave_rope_rows)
};

struct ModelTensor {
  std::string name;  // the output's name
  Tensor input;      // any dtype Tensor::to converts from, quantised too
  DType dtype;       // a floating-point dtype
  RowOrder order = RowOrder::Same;
  std::int64_t heads = 0;  // for a reordering: q or kv heads
};

// Whether t's output bytes are its input's as they lie (same dtype, rows
// in order; the source makes its input contiguous first): no cast, no
// reordering.
inline bool written_as_stored(const ModelTensor& t) {
  return t.order == RowOrder::Same && t.input.dtype() == t.dtype;
}

class ModelTensorSource final : public TensorSource {
 public:
  // E2102 when a reordered tensor's rows are not whole pairs of halves
  // per head.
  ModelTensorSource(std::vector<ModelTensor> tensors, CastOptions options);
  // `progress` hears of every chunk written (nullptr: nothing does).
  void set_progress(Progress* progress) { progress_ = progress; }
  // A progress bar over the bytes this source writes, on a terminal only
  // (none when stderr is piped); it must outlive the writing.
  std::unique_ptr<Progress> progress_on_terminal();

  std::size_t size() const override { return specs_.size(); }
  const TensorSpec& spec(std::size_t i) const override { return specs_[i]; }
  const std::uint8_t* bytes(std::size_t i) override;
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override;
  void written(std::size_t i, std::int64_t end) override;

  std::int64_t total_bytes() const;
  const ModelTensor& tensor(std::size_t i) const { return tensors_[i]; }

 private:
  std::int64_t source_row(std::size_t i, std::int64_t row) const;

  std::vector<ModelTensor> tensors_;
  std::vector<TensorSpec> specs_;
  CastOptions options_;
  Progress* progress_ = nullptr;
  std::vector<std::int64_t> before_;  // output bytes of tensors 0 .. i-1
  // Input bytes of tensor released_index_ already released.
  std::size_t released_index_ = static_cast<std::size_t>(-1);
  std::int64_t released_bytes_ = 0;
};

}  // namespace tessel::cli

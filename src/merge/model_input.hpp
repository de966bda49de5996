// The models of a whole-checkpoint merge (run, `tessel merge`), opened from
// headers alone: an HF checkpoint directory (sharded safetensors,
// affine-quantised tensors too) or a GGUF file (any block type), each seen as
// HF-named tensors in HF's row order. A tensor is read — dequantised, llama's
// GGUF q/k rows put back in HF order — only when the merge reaches it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::merge {

class MergeInput {
 public:
  // E4001 when `reference` names nothing, or a directory without
  // config.json; the loaders' errors (E3001, E3002, E4001) otherwise.
  static MergeInput open(const std::string& reference);

  const std::string& reference() const { return reference_; }
  const std::filesystem::path& path() const { return path_; }
  bool is_gguf() const { return gguf_.has_value(); }
  const GgufFile* gguf() const { return gguf_ ? &*gguf_ : nullptr; }
  // The decoder, in HF terms (rope_interleaved false).
  const DecoderConfig& config() const { return config_; }
  ModelSummary summary() const;
  // The stored dtype of tensor `name` (HF name).
  DType stored_dtype(const std::string& name) const;

  // Tensor `name` in HF row order, first rounded to `round_to` when given
  // (mergekit's `dtype`), as the merge methods read it: f32, f16 and bf16
  // as stored (a view of the mapped file, no copy), anything else
  // dequantised to f32 into `buffer` (1-D f32) when it is large enough, so
  // that a streamed merge reuses the same pages for every tensor. E2401
  // naming the tensor and the model when it holds NaN or Inf.
  Tensor read(const std::string& name, std::optional<DType> round_to,
              const Tensor& buffer = {}) const;
  // Tensor `name`'s mapped pages leave the resident set (the page cache
  // keeps them; a later read faults them back): called once the merge is
  // done with it, so memory holds one tensor's inputs, not the models.
  void release(const std::string& name) const;

 private:
  std::string reference_;
  std::filesystem::path path_;
  DecoderConfig config_;
  std::optional<GgufFile> gguf_;
  std::optional<SafetensorsFile> safetensors_;
  std::map<std::string, Tensor> tensors_;  // HF name -> stored view
};

}  // namespace tessel::merge

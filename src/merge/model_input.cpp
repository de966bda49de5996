#include "merge/model_input.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace tessel::merge {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[merge] " + what);
}

}  // namespace

MergeInput MergeInput::open(const std::string& reference) {
  MergeInput in;
  in.reference_ = reference;
  in.path_ = reference;
  std::error_code ec;
  if (!fs::exists(in.path_, ec)) {
    refuse(
        fmt::format("model '{}' does not exist (tessel merge reads local "
                    "HF checkpoint directories and GGUF files)",
                    reference));
  }
  if (fs::is_directory(in.path_, ec)) {
    if (!fs::exists(in.path_ / "config.json", ec)) {
      refuse(fmt::format("model '{}' is a directory without config.json",
                         reference));
    }
    in.config_ = DecoderConfig::load(in.path_ / "config.json");
    in.safetensors_ = load_safetensors_checkpoint(in.path_);
    std::set<std::string> parameters;  // scales and zero points
    for (const auto& [name, q] : in.safetensors_->quantization) {
      parameters.insert(q.scale.name());
      if (q.zero_point.defined()) parameters.insert(q.zero_point.name());
    }
    for (const Tensor& t : in.safetensors_->tensors) {
      if (!parameters.contains(t.name())) in.tensors_[t.name()] = t;
    }
  } else {
    in.gguf_ = load_gguf(in.path_);
    in.config_ = decoder_config_from_gguf(*in.gguf_);
    for (Tensor& t : gguf_tensors_as_hf(*in.gguf_)) {
      // rope_freqs follows from the config; the output writes its own.
      if (t.name() != kRopeFreqsTensor) in.tensors_[t.name()] = t;
    }
  }
  return in;
}

ModelSummary MergeInput::summary() const {
  ModelSummary s;
  s.config = config_;
  s.config.rope_interleaved = false;
  for (const auto& [name, t] : tensors_) s.shapes[name] = t.shape();
  return s;
}

DType MergeInput::stored_dtype(const std::string& name) const {
  return tensors_.at(name).dtype();
}

Tensor MergeInput::read(const std::string& name, std::optional<DType> round_to,
                        const Tensor& buffer) const {
  Tensor t = tensors_.at(name);
  if (safetensors_ && safetensors_->quantization.contains(name)) {
    t = safetensors_->dequantized(name, DType::F32);
  } else if (const auto heads = rope_interleave_heads(config_, name);
             gguf_ && heads) {
    // llama's q/k rows are interleaved in llama.cpp's files.
    t = deinterleave_rope_rows(t, *heads);
  }
  // mergekit's `dtype` rounds the inputs (nothing to do when they already
  // have it; widening to f32 is exact).
  if (round_to && *round_to != DType::F32) t = t.to(*round_to);
  // f32, f16 and bf16 are merged as they lie (a view of the mapping);
  // blocks are dequantised into the reused buffer.
  const DType d = t.dtype();
  if (!(d == DType::F32 || d == DType::F16 || d == DType::BF16) ||
      !t.is_contiguous()) {
    Tensor wide = buffer.defined() && buffer.numel() >= t.numel()
                      ? buffer.slice(0, 0, t.numel()).reshape(t.shape())
                      : empty(t.shape(), DType::F32);
    t = wide.copy_(t);
  }
  if (const std::int64_t i = first_non_finite(t); i >= 0) {
    const float v = t.reshape({-1})
                        .slice(0, i, i + 1)
                        .to(DType::F32)
                        .const_data<float>()[0];
    throw_error(
        ErrorCode::NonFinite,
        fmt::format("[merge] {} in model {} holds {} at element {}", name,
                    reference_, std::isnan(v) ? "NaN" : "Inf", i));
  }
  return t;
}

void MergeInput::release(const std::string& name) const {
  const Tensor& t = tensors_.at(name);
  if (t.defined()) t.release_pages(0, t.nbytes());
}

}  // namespace tessel::merge

#include "cli/merge_inputs.hpp"

#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <set>

namespace tessel::cli {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& what) {
  throw_error(ErrorCode::BadConfig, "[merge] " + what);
}

// The first NaN or Inf of an f32 tensor, or -1.
std::int64_t first_non_finite(const Tensor& t) {
  const float* x = t.const_data<float>();
  const std::int64_t n = t.numel();
  std::atomic<std::int64_t> first{-1};
  parallel_for(0, n, 1 << 16, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      if (!std::isfinite(x[i])) {
        std::int64_t seen = first.load();
        while ((seen < 0 || i < seen) &&
               !first.compare_exchange_weak(seen, i)) {
        }
        return;
      }
    }
  });
  return first.load();
}

// bf16 -> f32 with the finiteness check in the same pass (one read of the
// mapped bytes instead of a cast and then a scan); `first` gets the first
// NaN or Inf, or -1.
Tensor widen_bf16_checked(const Tensor& t, const Tensor& buffer,
                          std::int64_t& first) {
  Tensor out = buffer.defined() && buffer.numel() >= t.numel()
                   ? buffer.slice(0, 0, t.numel()).reshape(t.shape())
                   : empty(t.shape(), DType::F32);
  const auto* in = static_cast<const std::uint16_t*>(t.raw_data());
  float* o = out.data<float>();
  std::atomic<std::int64_t> bad{-1};
  parallel_for(0, t.numel(), 1 << 16, [&](std::int64_t b, std::int64_t e) {
    std::uint16_t all_ones = 0;
    for (std::int64_t i = b; i < e; ++i) {
      const std::uint16_t bits = in[i];
      all_ones |= static_cast<std::uint16_t>((bits & 0x7f80u) == 0x7f80u);
      o[i] = std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }
    if (!all_ones) return;
    for (std::int64_t i = b; i < e; ++i) {
      if ((in[i] & 0x7f80u) != 0x7f80u) continue;
      std::int64_t seen = bad.load();
      while ((seen < 0 || i < seen) && !bad.compare_exchange_weak(seen, i)) {
      }
      return;
    }
  });
  first = bad.load();
  return out;
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

merge::ModelSummary MergeInput::summary() const {
  merge::ModelSummary s;
  s.config = config_;
  s.config.rope_interleaved = false;
  for (const auto& [name, t] : tensors_) s.shapes[name] = t.shape();
  return s;
}

DType MergeInput::stored_dtype(const std::string& name) const {
  return tensors_.at(name).dtype();
}

Tensor MergeInput::read_f32(const std::string& name,
                            std::optional<DType> round_to,
                            const Tensor& buffer) const {
  Tensor t;
  std::int64_t bad = -2;  // -2: not scanned yet
  const Tensor& stored = tensors_.at(name);
  const bool plain_bf16 =
      stored.dtype() == DType::BF16 && stored.is_contiguous() &&
      !(safetensors_ && safetensors_->quantization.contains(name)) &&
      !(gguf_ && rope_interleave_heads(config_, name));
  if (plain_bf16 && (!round_to || *round_to == DType::BF16)) {
    t = widen_bf16_checked(stored, buffer, bad);
  } else if (safetensors_) {
    t = safetensors_->dequantized(name, DType::F32);
  } else {
    t = tensors_.at(name);
    // llama's q/k rows are interleaved in llama.cpp's files.
    if (const auto heads = rope_interleave_heads(config_, name)) {
      t = deinterleave_rope_rows(t, *heads);
    }
    t = t.to(DType::F32);
  }
  // bf16 values are already bf16: rounding to it changes nothing.
  if (round_to && *round_to != DType::F32 && bad == -2) {
    t = t.to(*round_to).to(DType::F32);
  }
  t = t.contiguous();
  if (bad == -2) bad = first_non_finite(t);
  if (const std::int64_t i = bad; i >= 0) {
    throw_error(
        ErrorCode::NonFinite,
        fmt::format("[merge] {} in model {} holds {} at element {}", name,
                    reference_,
                    std::isnan(t.const_data<float>()[i]) ? "NaN" : "Inf", i));
  }
  return t;
}

void MergeInput::release(const std::string& name) const {
  const Tensor& t = tensors_.at(name);
  if (!t.defined() || t.nbytes() == 0) return;
  const std::int64_t start =
      static_cast<const std::uint8_t*>(t.raw_data()) -
      static_cast<const std::uint8_t*>(t.storage().data());
  t.storage().release_pages(start, t.nbytes());
}

}  // namespace tessel::cli

// The rules of llama.cpp's HF -> GGUF converter (convert_hf_to_gguf.py,
// its conversion/ package and gguf-py) that `tessel convert` follows to
// write the files it writes, and their inverses for GGUF -> HF: which
// tensors stay f32, the file type, general.name and size label, and
// Llama 3's rope_freqs tensor. docs/models.md, "Converting models".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tessel/core/tensor.hpp"
#include "tessel/models/config.hpp"

namespace tessel {

// The dtype the converter writes a tensor in for --outtype `outtype` (f32,
// f16 or bf16): f32 for 1-D tensors, "*_norm.weight" and anything not
// named "*.weight" (biases, rope_freqs), else `outtype`. E2201 for another
// outtype.
DType gguf_converted_dtype(std::string_view gguf_name, std::int64_t rank,
                           DType outtype);

// general.file_type for --outtype `outtype`: llama.cpp's LlamaFileType
// (0 all f32, 1 mostly f16, 32 mostly bf16); E2201 for another dtype.
std::uint32_t gguf_file_type(DType outtype);

// general.size_label from the parameter count of every tensor written
// (gguf-py's size_label: 1692960 -> "1.7M", 494032768 -> "494M").
std::string gguf_size_label(std::int64_t parameters);

// general.name from a model id ("org/Some-model_v2" or a directory name),
// as gguf-py's Metadata heuristics title it: the part after '/', dashes
// as spaces, lower-case words capitalised unless they are versions or
// start with a digit ("qwen3-sharded" -> "Qwen3 Sharded"). ASCII letters
// only are re-cased.
std::string gguf_model_name(std::string_view model_id);

// The double a Python float literal written as the shortest decimal of
// the f32 nearest `value` would be: what a GGUF f32 key or tensor value
// was written from (1e-05, not 9.999999747378752e-06; 8.0, not
// 8.000000476837158 for 8 + 2^-21).
double f32_shortest_decimal(double value);

// Llama 3's frequency-dependent RoPE scaling as the converter writes it:
// one f32 divisor per rotary frequency (head_dim / 2), computed in f32 as
// its generate_extra_tensors does with torch (docs/models.md says where
// torch's vectorised pow may differ by an ulp). Undefined when `config`
// has no llama3 scaling.
Tensor gguf_rope_freqs(const DecoderConfig& config);

// The inverse: Llama 3 scaling parameters whose gguf_rope_freqs equals
// `rope_freqs` bit for bit (rope_theta and head_dim from `config`), found
// among the usual values (low_freq_factor 1) and those the smooth part of
// the curve implies; nullopt when every divisor is 1 (no scaling). E4001
// naming rope_freqs.weight when no parameters reproduce it.
std::optional<Llama3RopeScaling> llama3_scaling_from_rope_freqs(
    const DecoderConfig& config, const Tensor& rope_freqs);

}  // namespace tessel

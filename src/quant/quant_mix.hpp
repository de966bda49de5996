// The named quantisation mixes of `tessel quantize` (llama.cpp's llama_ftype
// names: Q4_K_M, Q8_0, ...) and the planner that picks, tensor by tensor, the
// dtype llama.cpp's llama_model_quantize would write for the same input
// without an importance matrix (llama-quant.cpp, llama_tensor_get_type).
//
// The planner is a pure function over names, shapes and a few hyper-
// parameters from the GGUF metadata, so it is unit-testable without files.
// It covers the architectures llama, qwen2 and qwen3; other architectures
// have extra rules in llama.cpp and are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/core/dtype.hpp"

namespace tessel::quant {

// One value per llama_ftype that tessel can produce without an importance
// matrix; the numbers are llama.h's and go into general.file_type.
enum class QuantMix : std::uint8_t {
  F32,
  F16,
  BF16,
  Q4_0,
  Q4_1,
  Q5_0,
  Q5_1,
  Q8_0,
  Q2_K,
  Q2_K_S,
  Q3_K_S,
  Q3_K_M,
  Q3_K_L,
  Q4_K_S,
  Q4_K_M,
  Q5_K_S,
  Q5_K_M,
  Q6_K,
  IQ4_NL,
  IQ4_XS,
  TQ1_0,
  TQ2_0,
  MXFP4_MOE,
};

struct QuantMixInfo {
  QuantMix mix;
  std::string_view name;  // as users type it, e.g. "Q4_K_M"
  int file_type;          // llama_ftype value, written to general.file_type
  DType base;             // llama_ftype_get_default_type: the bulk dtype
};

// All mixes, in llama_ftype order of the enum above.
std::span<const QuantMixInfo> quant_mixes();
const QuantMixInfo& quant_mix_info(QuantMix mix);

// "Q4_K_M", "q4_k_m" -> QuantMix::Q4_K_M. E4001 (ConfigError) for unknown
// names, for the llama.cpp mixes that need an importance matrix (IQ1_*,
// IQ2_*, IQ3_XXS, IQ3_XS) and for IQ3_S/IQ3_M (no IQ3_S encoder in tessel).
QuantMix parse_quant_mix(std::string_view name);

// GGUF general.quantization_version that llama.cpp writes (GGML_QNT_VERSION).
inline constexpr std::uint32_t kQuantizationVersion = 2;

// The hyper-parameters llama.cpp's rules look at, from the GGUF metadata.
struct ModelFacts {
  std::string arch;    // general.architecture: "llama", "qwen2", "qwen3"
  int n_layer = 0;     // {arch}.block_count
  int n_head = 0;      // {arch}.attention.head_count (layer 0)
  int n_head_kv = -1;  // {arch}.attention.head_count_kv; -1: absent
  int n_expert = 0;    // {arch}.expert_count; 0: absent
};

struct TensorInfo {
  std::string name;                 // GGUF name, e.g. "blk.0.attn_q.weight"
  std::vector<std::int64_t> shape;  // tessel row-major: reverse of ggml's ne
  DType dtype;                      // dtype in the input file
};

struct TensorPlan {
  DType dtype;           // dtype to write; == input dtype: copy unchanged
  std::string fallback;  // llama.cpp's warning line when the row length
                         // forced a fallback type; empty otherwise
};

// One plan per tensor, in the order of `tensors`. Throws E4001 for an
// unsupported architecture, for a tensor that would need an importance
// matrix (as llama.cpp refuses Q2_K_S without one), and for requantising an
// already block-quantised tensor (llama.cpp's allow_requantize is off).
std::vector<TensorPlan> plan_quantization(const ModelFacts& model,
                                          std::span<const TensorInfo> tensors,
                                          QuantMix mix);

// Indices of `tensors` in the order llama.cpp writes them: tensors outside
// the blocks first, then block by block, by name within each group.
std::vector<std::size_t> llama_tensor_order(
    std::span<const TensorInfo> tensors);

// llama.cpp's closing warning when any tensor fell back; empty when none:
// "llama_model_quantize_impl: WARNING: N of M tensor(s) required fallback
// quantization".
std::string fallback_summary(std::span<const TensorPlan> plans);

}  // namespace tessel::quant

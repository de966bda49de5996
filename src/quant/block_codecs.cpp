// The one table from block dtype to its codec. A block dtype without a row
// here fails block_codecs_complete() at compile time.
#include "quant/block_codecs.hpp"

#include <array>

namespace tessel::quant {

namespace {

constexpr BlockCodec kCodecs[] = {
    {DType::Q4_0, dequantize_q4_0, quantize_q4_0},
    {DType::Q4_1, dequantize_q4_1, quantize_q4_1},
    {DType::Q5_0, dequantize_q5_0, quantize_q5_0},
    {DType::Q5_1, dequantize_q5_1, quantize_q5_1},
    {DType::Q8_0, dequantize_q8_0, quantize_q8_0},
    {DType::Q8_1, dequantize_q8_1, quantize_q8_1},
    {DType::Q2_K, dequantize_q2_k, quantize_q2_k},
    {DType::Q3_K, dequantize_q3_k, quantize_q3_k},
    {DType::Q4_K, dequantize_q4_k, quantize_q4_k},
    {DType::Q5_K, dequantize_q5_k, quantize_q5_k},
    {DType::Q6_K, dequantize_q6_k, quantize_q6_k},
    {DType::Q8_K, dequantize_q8_k, quantize_q8_k},
    // ggml quantises the IQ1/IQ2/IQ3 lattices only with an importance
    // matrix (a calibration of which weights matter), which tessel does not
    // take yet: decode only.
    {DType::IQ2_XXS, dequantize_iq2_xxs, nullptr},
    {DType::IQ2_XS, dequantize_iq2_xs, nullptr},
    {DType::IQ2_S, dequantize_iq2_s, nullptr},
    {DType::IQ3_XXS, dequantize_iq3_xxs, nullptr},
    {DType::IQ3_S, dequantize_iq3_s, nullptr},
    {DType::IQ1_S, dequantize_iq1_s, nullptr},
    {DType::IQ1_M, dequantize_iq1_m, nullptr},
    {DType::IQ4_NL, dequantize_iq4_nl, quantize_iq4_nl,
     quantize_iq4_nl_runtime},
    {DType::IQ4_XS, dequantize_iq4_xs, quantize_iq4_xs},
    {DType::TQ1_0, dequantize_tq1_0, quantize_tq1_0},
    {DType::TQ2_0, dequantize_tq2_0, quantize_tq2_0},
    {DType::MXFP4, dequantize_mxfp4, quantize_mxfp4},
};

constexpr std::array<const BlockCodec*, kNumDTypes> index_codecs() {
  std::array<const BlockCodec*, kNumDTypes> by_dtype{};
  for (const BlockCodec& c : kCodecs) {
    by_dtype[static_cast<int>(c.dtype)] = &c;
  }
  return by_dtype;
}

constexpr auto kByDType = index_codecs();

constexpr bool block_codecs_complete() {
  for (int i = 0; i < kNumDTypes; ++i) {
    const bool block = is_block_quantized(static_cast<DType>(i));
    if (block != (kByDType[i] != nullptr)) return false;
  }
  return true;
}
static_assert(block_codecs_complete(),
              "every block-quantised dtype needs exactly one codec row");

}  // namespace

const BlockCodec* block_codec(DType t) { return kByDType[static_cast<int>(t)]; }

QuantizeBlocks runtime_quantizer(DType t) {
  const BlockCodec* codec = block_codec(t);
  if (codec == nullptr) return nullptr;
  return codec->quantize_runtime != nullptr ? codec->quantize_runtime
                                            : codec->quantize;
}

}  // namespace tessel::quant

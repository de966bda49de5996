// The byte-level codecs of the GGUF block-quantised types: one dequantiser
// and (where ggml has one that needs no importance matrix) one quantiser per
// type, each bit-identical to ggml's reference C code (dequantize_row_* and
// quantize_row_*_ref / quantize_* without an imatrix in ggml-quants.c). The
// block layouts are GGUF's (../shared/FORMATS.md §2, docs/quantisation.md).
//
// This is the `quant` layer of DESIGN §3: it depends on core only (dtype
// traits, f16 conversions). The CPU backend calls it; ops never do.
//
// Every function works on `nblocks` whole, independent blocks: callers split
// rows across threads at block boundaries. Both directions are scalar C++
// compiled without FMA contraction (-ffp-contract=off), in the operation
// order of ggml's reference code, so that results match it to the bit.
#pragma once

#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::quant {

// blocks -> nblocks * block_size floats.
using DequantizeBlocks = void (*)(const std::uint8_t* blocks, float* out,
                                  std::int64_t nblocks);
// nblocks * block_size floats -> blocks.
using QuantizeBlocks = void (*)(const float* in, std::uint8_t* blocks,
                                std::int64_t nblocks);

struct BlockCodec {
  DType dtype;
  DequantizeBlocks dequantize;
  // Null where ggml needs an importance matrix to quantise (IQ1, IQ2, IQ3).
  QuantizeBlocks quantize;
  // ggml's run-time quantiser where it is not `quantize` (runtime_quantizer
  // below): IQ4_NL's.
  QuantizeBlocks quantize_runtime = nullptr;
};

// The codec of a block-quantised dtype; nullptr for other dtypes.
const BlockCodec* block_codec(DType t);

// The quantiser ggml applies to tensors at run time (its reference
// from_float, which fills llama.cpp's KV cache) rather than to model files
// (ggml_quantize_chunk, block_codec(t)->quantize). The two differ only for
// IQ4_NL: at run time ggml takes the scale from the block's largest value
// and skips the search over 15 nearby scales. (On x86 ggml's CPU backend
// quantises Q8_0 and Q8_1 by SIMD routines that give the reference's bytes
// except on subnormal blocks and around NaN and Inf.) Null where block_codec's
// quantiser is.
QuantizeBlocks runtime_quantizer(DType t);
void quantize_iq4_nl_runtime(const float* in, std::uint8_t* blocks,
                             std::int64_t nblocks);

// ---- the per-type functions (block_codecs.cpp lists them in one table) ----
#define TESSEL_DECLARE_DEQUANTIZE(name)                          \
  void dequantize_##name(const std::uint8_t* blocks, float* out, \
                         std::int64_t nblocks);
#define TESSEL_DECLARE_QUANTIZE(name)                         \
  void quantize_##name(const float* in, std::uint8_t* blocks, \
                       std::int64_t nblocks);

// legacy_blocks.cpp: 32-element blocks with one or two f16 scalars, plus
// the 4-bit codebook (IQ4_NL), microscaling FP4 (MXFP4) and ternary (TQ*)
// types.
#define TESSEL_LEGACY_BLOCK_TYPES(X) \
  X(q4_0)                            \
  X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1) X(iq4_nl) X(mxfp4) X(tq1_0) X(tq2_0)
// k_blocks.cpp: the 256-element super-blocks of the K-quants.
#define TESSEL_K_BLOCK_TYPES(X) X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k)
// iq_blocks.cpp: the codebook (lattice) types. Only IQ4_XS quantises.
#define TESSEL_IQ_BLOCK_TYPES(X) \
  X(iq2_xxs) X(iq2_xs) X(iq2_s) X(iq3_xxs) X(iq3_s) X(iq1_s) X(iq1_m) X(iq4_xs)

TESSEL_LEGACY_BLOCK_TYPES(TESSEL_DECLARE_DEQUANTIZE)
TESSEL_LEGACY_BLOCK_TYPES(TESSEL_DECLARE_QUANTIZE)
TESSEL_K_BLOCK_TYPES(TESSEL_DECLARE_DEQUANTIZE)
TESSEL_K_BLOCK_TYPES(TESSEL_DECLARE_QUANTIZE)
TESSEL_IQ_BLOCK_TYPES(TESSEL_DECLARE_DEQUANTIZE)
TESSEL_DECLARE_QUANTIZE(iq4_xs)

#undef TESSEL_DECLARE_QUANTIZE
#undef TESSEL_DECLARE_DEQUANTIZE

}  // namespace tessel::quant

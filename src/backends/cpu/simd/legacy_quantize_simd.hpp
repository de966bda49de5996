// Vector encoders for the two legacy block types that model files use most
// (Q4_0, Q8_0): the bytes of quant/legacy_blocks.cpp's scalar encoders
// (ggml's quantize_row_q4_0_ref and quantize_row_q8_0_ref), NaN, Inf and
// subnormal blocks included. The scalar loops find the block's largest
// value with a compare and branch per element and round with a branch per
// code: before these encoders one thread encoded Q4_0 at ggml's rate and
// Q8_0 at 1.6x, a few times under the memory's read rate.
#pragma once

#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd {

// Encodes `nblocks` blocks of 32 floats each as `type`; false (nothing
// written) when this CPU or type has no vector encoder here.
bool quantize_blocks_simd(DType type, const float* in, std::uint8_t* blocks,
                          std::int64_t nblocks);

}  // namespace tessel::cpu::simd

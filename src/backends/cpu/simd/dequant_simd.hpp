// Vector decoders for the block types whose scalar decoders fall short of
// the memory limit (docs/quantisation.md): Q4_0, Q4_K, Q5_K, Q6_K and
// IQ4_XS. Each computes every value with the same f32 operations as the
// scalar codec in src/quant (which matches ggml), so the output is
// bit-identical.
#pragma once

#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd {

// Decodes `nblocks` whole blocks of `type` into floats; false (nothing
// written) when this CPU or type has no vector decoder here. `stream`
// writes the floats with non-temporal stores (where out is 32-byte
// aligned): for an output larger than the last-level cache, whose lines would
// otherwise each be read from DRAM before being written over. A decoder
// writes 3.8-7.5 bytes a byte it reads, so those reads were most of its
// traffic besides the writes.
bool dequantize_blocks_simd(DType type, const std::uint8_t* blocks, float* out,
                            std::int64_t nblocks, bool stream = false);

}  // namespace tessel::cpu::simd

// CPU kernels of the core: no validation here, callers in src/ops check
// shapes, dtypes and devices first.
#pragma once

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"
#include "tessel/core/random.hpp"
#include "tessel/core/scalar.hpp"

namespace tessel::cpu {

// dst[i] = convert(src[i]) for byte-addressable dtypes; src has dst's shape
// (broadcast by stride 0 where needed).
void copy_cast(const KernelOutput& dst, const KernelInput& src, bool saturate);

// One Adam/AdamW step in place; all four contiguous f32 of one size.
void adam_update(const AdamStep& s, const KernelOutput& param,
                 const KernelInput& grad, const KernelOutput& exp_avg,
                 const KernelOutput& exp_avg_sq);

// Every element of the byte-addressable `dst` becomes `value`.
void fill(const KernelOutput& dst, const Scalar& value);

// Packed i4/u4 <-> one byte per element (i8 for i4, u8 for u4), any layout
// on the packed side, contiguous on the byte side.
void unpack_nibbles(const KernelOutput& dst_bytes,
                    const KernelInput& src_packed);
void pack_nibbles(const KernelOutput& dst_packed, const KernelInput& src_bytes);
// quantize.cpp: the block codecs of src/quant over rows, on the pool.
void dequantize_blocks(const KernelOutput& dst_f32,
                       const KernelInput& src_blocks);
void quantize_blocks(const KernelOutput& dst_blocks, const KernelInput& src_f32,
                     bool runtime);
// One run of whole blocks -> floats on this thread: the vector decoder
// where there is one (bit-identical), else the codec's. `stream`: the
// vector decoders write past the caches (simd/dequant_simd.hpp).
void dequantize_run(DType type, const std::uint8_t* blocks, float* out,
                    std::int64_t nblocks, bool stream = false);
// `count` values of dtype t at `in` (f16, bf16, or whole blocks of a block
// type) as f32 on this thread, for an f32 product: numbers exactly (the
// CPU's 16-bit conversion may quiet a signalling NaN; simd/cast_simd.hpp).
void widen_to_f32(DType t, const std::uint8_t* in, float* out,
                  std::int64_t count);

// Contiguous float `dst`: uniform in [low, high) / normal(mean, std), drawn
// from counter blocks starting at `first_block` (see Note [random streams]).
void fill_uniform(const KernelOutput& dst, const Generator& gen,
                  std::uint64_t first_block, double low, double high);
void fill_normal(const KernelOutput& dst, const Generator& gen,
                 std::uint64_t first_block, double mean, double std);
// Contiguous integer `dst`: uniform integers in [low, high).
void fill_randint(const KernelOutput& dst, const Generator& gen,
                  std::uint64_t first_block, std::int64_t low,
                  std::int64_t high);
// Contiguous `dst`: start + i * step, computed in double (f64/f32) or
// exactly in int64.
void fill_arange(const KernelOutput& dst, const Scalar& start,
                 const Scalar& step);
// Contiguous float `dst` of n values evenly spaced from start to end.
void fill_linspace(const KernelOutput& dst, double start, double end);

}  // namespace tessel::cpu

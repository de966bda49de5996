// CPU kernels of the core: no validation here, callers in src/ops check
// shapes, dtypes and devices first.
#pragma once

#include "tessel/core/random.hpp"
#include "tessel/core/scalar.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::cpu {

// dst[i] = convert(src[i]) for byte-addressable dtypes; src has dst's shape
// (broadcast by stride 0 where needed).
void copy_cast(const Tensor& dst, const Tensor& src, bool saturate);

// Every element of the byte-addressable `dst` becomes `value`.
void fill(const Tensor& dst, const Scalar& value);

// Packed i4/u4 <-> one byte per element (i8 for i4, u8 for u4), any layout
// on the packed side, contiguous on the byte side.
void unpack_nibbles(const Tensor& dst_bytes, const Tensor& src_packed);
void pack_nibbles(const Tensor& dst_packed, const Tensor& src_bytes);

// Contiguous float `dst`: uniform in [low, high) / normal(mean, std), drawn
// from counter blocks starting at `first_block` (see Note [random streams]).
void fill_uniform(const Tensor& dst, const Generator& gen,
                  std::uint64_t first_block, double low, double high);
void fill_normal(const Tensor& dst, const Generator& gen,
                 std::uint64_t first_block, double mean, double std);
// Contiguous integer `dst`: uniform integers in [low, high).
void fill_randint(const Tensor& dst, const Generator& gen,
                  std::uint64_t first_block, std::int64_t low,
                  std::int64_t high);
// Philox blocks a draw of `numel` values of `dtype` consumes.
std::uint64_t random_blocks(DType dtype, std::int64_t numel);

// Contiguous `dst`: start + i * step, computed in double (f64/f32) or
// exactly in int64.
void fill_arange(const Tensor& dst, const Scalar& start, const Scalar& step);
// Contiguous float `dst` of n values evenly spaced from start to end.
void fill_linspace(const Tensor& dst, double start, double end);

}  // namespace tessel::cpu

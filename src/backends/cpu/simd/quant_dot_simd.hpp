// Integer dot products of block-quantised weight rows with activations
// quantised to 8 bits: the decode step (M = 1) and small batches of a
// language model over GGUF weights, at the memory limit.
//
// The algorithm is ggml's (llama.cpp's CPU backend), so that results agree
// with it to float rounding: each activation row is quantised once to
// ggml's 8-bit blocks (Q8_0 for the 32-element types, Q8_K for the 256-
// element K-quants and IQ4_XS), and each weight block is multiplied with it
// in integers, the block's scales applied in integers where ggml does, then
// accumulated in f32. The weights are never expanded in memory: a 4-bit row
// streams through once at 4.5 bits per weight.
//
// Compiled per Highway target: AVX2 and AVX-512 CPUs run 256-bit integer
// kernels (u8 x i8 pair products, which the Highway release Debian ships
// has no op for, so that one step is the x86 instruction); every other
// target runs the same integer arithmetic as portable C++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd {

// ggml's vec_dot_type: the 8-bit activation blocks a weight type pairs
// with, as rows laid out by quant_dot_layout.hpp.
enum class ActivationBlocks : std::uint8_t {
  Q8_0,  // 32 values: f16 scale, 32 x i8; then the blocks' f32 scales
  Q8_K,  // 256 values: f32 scale, 256 x i8, 16 x i16 sums of 16
  // Q8_0 rows followed by the code sums, reordered codes and scales the
  // Q4_0 dot kernels read: what every weight row would otherwise
  // recompute.
  Q8_0WithQ4_0Sums,
  // Q8_0 rows followed by their codes back to back and each block's
  // start (-128 x its code sum), which the 512-bit Q8_0 dot kernel reads.
  Q8_0WithQ8_0Lanes,
  // Q8_K rows followed by the scales and sums of 32 the 512-bit Q4_K and
  // Q5_K dot kernels read for four blocks at a time (the 256-bit one its
  // sums of 32 a block at a time), and their codes again in the sub-block
  // order the 512-bit kernels split the weights' nibbles into.
  Q8_KWithK4Groups,
  // Q8_K rows followed by their codes in the order of IQ4_XS's nibbles
  // and each pair of blocks' code sums, which the 512-bit IQ4_XS kernel
  // reads.
  Q8_KWithIq4Lanes,
};

// Values in one block of `kind`'s rows: 32 for the Q8_0 kinds, 256 for
// the Q8_K ones.
constexpr std::int64_t activation_block_values(ActivationBlocks kind) {
  return kind == ActivationBlocks::Q8_0 ||
                 kind == ActivationBlocks::Q8_0WithQ4_0Sums ||
                 kind == ActivationBlocks::Q8_0WithQ8_0Lanes
             ? 32
             : 256;
}

// Whether `w` has an integer kernel here (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K,
// IQ4_XS); other block types take the dequantise-a-tile path.
bool has_quant_dot(DType w);
// The rows the packed GEMM reads for `w` (Q8_0 or Q8_K), and the rows the
// dot kernels read (the same, with what Q4_0's, Q8_0's, Q4_K/Q5_K's and
// IQ4_XS's 512-bit kernels read besides).
ActivationBlocks activation_blocks(DType w);
ActivationBlocks dot_activation_blocks(DType w);

// Bytes of one activation row of length k (a multiple of the block size).
// Rows should start 64-byte aligned: the Q4_0 layout pads its 512-bit
// groups to cache lines (quant_dot_layout.hpp).
// (These and quantize_activations: quant_activations_simd.cpp.)
std::size_t activation_row_bytes(ActivationBlocks kind, std::int64_t k);

// Quantises `rows` f32 rows of length k (row r at x + r * ldx) into
// consecutive activation rows at `out`. Q8_0 follows ggml's x86 quantiser
// (scale amax / 127 stored as f16, codes round(x * 127 / amax) ties to
// even); Q8_K its reference one. A block holding NaN or Inf gets a NaN
// scale, so the products it enters are NaN, as an f32 product would be.
void quantize_activations(ActivationBlocks kind, const float* x,
                          std::int64_t ldx, std::int64_t rows, std::int64_t k,
                          std::uint8_t* out);

// y[m * ldy + r] = dot(weight row r, activation row m) for r < rows and
// m < m_rows: weight row r starts at w + r * w_row_bytes, activation row m
// at act + m * activation_row_bytes(kind, k). w's dtype must have
// has_quant_dot, k a multiple of its block size.
void quant_dot_rows(DType w_dtype, const std::uint8_t* w,
                    std::size_t w_row_bytes, std::int64_t rows,
                    const std::uint8_t* act, std::int64_t m_rows,
                    std::int64_t k, float* y, std::int64_t ldy);

}  // namespace tessel::cpu::simd

// Integer GEMM of block-quantised weights with 8-bit activations: prompt
// processing (many activation rows) over GGUF weights.
//
// The dot kernels (quant_dot_simd.hpp) keep one weight row and one
// activation row per 256-bit register, so every block pays its scale work
// once per (weight row, activation row) pair and a horizontal sum at the
// end. Here weight rows are packed into tiles whose 256-bit registers hold
// eight rows side by side (a 512-bit one sixteen), four code bytes of each
// row per 32-bit lane, the layout ggml's repacked GEMMs use. One u8 x i8
// pair-product instruction then advances eight rows at once against four
// broadcast activation bytes, each lane is one output element, and a block's
// per-row scales apply as one vector multiply. Packing costs one pass over the
// tile's weights, paid once for all activation rows.
//
// Arithmetic: per group of G weights (32, or Q6_K's 16), exact integer
// sums of code x activation code, less the code offset (Q4_0's 8, Q6_K's
// 32) times the group's activation sum; then, in f32, times the
// activation block's scale and the weight row's group scale (d x sub-block
// scale, exact in f32), less the K-quants' min term. Same activations as
// the dot kernels (ggml's Q8_0 / Q8_K), so rows agree with them to f32
// rounding.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd {

// The same six types as has_quant_dot.
bool has_quant_gemm(DType w);

// Weight rows per packed unit of w for m_rows activation rows on this CPU:
// 16 on x86 from AVX2 up (one per 32-bit lane of a 512-bit register, or
// two 8-row tiles for the 256-bit kernel; one at a time below
// gemm::kPairMinRows activation rows, or where gemm::pairs_tiles says
// not), else 8.
std::int64_t gemm_tile_rows(DType w, std::int64_t m_rows);
// Bytes of a packed unit of w for rows of length k, for any m_rows.
std::size_t gemm_tile_bytes(DType w, std::int64_t k);
// Packs `rows` (<= gemm_tile_rows(w_dtype, m)) weight rows, row r at
// w + r * ldw, into `tile`; the padding rows of each tile it fills are
// zero.
void pack_gemm_tile(DType w_dtype, const std::uint8_t* w, std::size_t ldw,
                    std::int64_t rows, std::int64_t k, std::uint8_t* tile);

// Bytes of one activation row prepared for the GEMM: k 8-bit codes, then
// per group its activation block's f32 scale and its code sum (as the
// type uses it: times the code offset, or as f32 for the min term).
std::size_t gemm_activation_row_bytes(DType w, std::int64_t k);
// Rewrites `rows` activation rows written by quantize_activations (for
// w's activation kind) into the GEMM's form.
void prepare_gemm_activations(DType w_dtype, const std::uint8_t* act,
                              std::int64_t rows, std::int64_t k,
                              std::uint8_t* out);

// Whether quant_gemm_tile runs m_rows activation rows' whole blocks of 16
// through AMX tile products on this CPU (quant_gemm_amx.inc): an AVX-512
// target with VNNI, AMX-INT8 granted, 32-weight groups, m_rows >= 16.
// The kernel asks the same question.
bool quant_gemm_takes_amx(DType w_dtype, std::int64_t m_rows);

// y[m * ldy + r] = dot(tile row r, activation row m) for r < rows,
// m < m_rows; activation row m at act + m * gemm_activation_row_bytes.
// `rows` is the count the tile was packed with: it says how many tiles
// the unit holds.
void quant_gemm_tile(DType w_dtype, const std::uint8_t* tile, std::int64_t rows,
                     const std::uint8_t* act, std::int64_t m_rows,
                     std::int64_t k, float* y, std::int64_t ldy);

}  // namespace tessel::cpu::simd

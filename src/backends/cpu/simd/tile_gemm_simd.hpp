// Small f32 products for the tiles of fused attention. A oneDNN sgemm call
// costs about a microsecond before any arithmetic (dispatch, kernel
// lookup, buffer set-up); a 12 x 12 x 16 score tile is 4.6k flops, so at
// short sequences the calls, not the products, were the attention's time.
#pragma once

#include <cstdint>

#include "tessel/core/dtype.hpp"

namespace tessel::cpu::simd {

// c = alpha * op(a) op(b) + beta * c, row-major, with sgemm's conventions:
// op(a) is m x k (a is k x m when trans_a), op(b) is k x n (b is n x k
// when trans_b), leading dimensions in elements. beta = 0 never reads c.
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                std::int64_t k, float alpha, const float* a, std::int64_t lda,
                const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc);

// Up to this many rows of op(a), small_gemm takes op(b) = b^T as one
// horizontal sum per output rather than against a copy of b transposed
// (n * k scalar moves): the sums win while m * n of them cost less than
// n * k moves. A decode step's scores are one query row (or the few that
// share a key/value head) against the keys.
inline constexpr std::int64_t kRowDotsMaxRows = 4;

// The dtypes small_gemm_narrow_b reads: the 16-bit floats and the block
// types a KV cache is kept in.
inline bool small_gemm_reads(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::IQ4_NL: return true;
    default: return false;
  }
}

// small_gemm with b in one of those dtypes (b_dtype), each element widened
// or dequantised exactly as it is loaded: a KV cache kept in 16 bits or
// quantised, read by a decode step without an f32 copy. trans_b needs
// !trans_a and m <= kRowDotsMaxRows. For the block types b is the start of
// a block, ldb and the rows' lengths whole blocks.
void small_gemm_narrow_b(DType b_dtype, bool trans_a, bool trans_b,
                         std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda,
                         const void* b, std::int64_t ldb, float beta, float* c,
                         std::int64_t ldc);

}  // namespace tessel::cpu::simd

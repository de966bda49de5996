// Small f32 products for the tiles of fused attention. A oneDNN sgemm call
// costs about a microsecond before any arithmetic (dispatch, kernel
// lookup, buffer set-up); a 12 x 12 x 16 score tile is 4.6k flops, so at
// short sequences the calls, not the products, were the attention's time.
#pragma once

#include <cstdint>

namespace tessel::cpu::simd {

// c = alpha * op(a) op(b) + beta * c, row-major, with sgemm's conventions:
// op(a) is m x k (a is k x m when trans_a), op(b) is k x n (b is n x k
// when trans_b), leading dimensions in elements. beta = 0 never reads c.
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                std::int64_t k, float alpha, const float* a, std::int64_t lda,
                const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc);

}  // namespace tessel::cpu::simd

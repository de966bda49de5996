// Compiled once per Highway target. See tile_gemm_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/tile_gemm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/simd/tile_gemm_simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// c = alpha * acc + beta * c over `count` lanes (0: a whole vector).
HWY_INLINE void finish(D d, V acc, float alpha, float beta, float* c,
                       std::size_t count) {
  V out = hn::Mul(acc, hn::Set(d, alpha));
  if (beta != 0.0f)
    out = hn::MulAdd(load_lanes(d, c, count), hn::Set(d, beta), out);
  store_lanes(d, out, c, count);
}

// R consecutive output rows from i, one vector of columns from j (count
// lanes, 0 for all): R independent FMA chains that share each load of b,
// so the loop is not bound by the FMA latency.
template <int R>
HWY_INLINE void row_block(std::int64_t i, std::int64_t j, std::size_t count,
                          std::int64_t k, float alpha, const float* a,
                          std::int64_t a_row, std::int64_t a_col,
                          const float* b, std::int64_t ldb, float beta,
                          float* c, std::int64_t ldc) {
  const D d;
  V acc0 = hn::Zero(d), acc1 = hn::Zero(d), acc2 = hn::Zero(d),
    acc3 = hn::Zero(d);
  const float* a0 = a + i * a_row;
  for (std::int64_t p = 0; p < k; ++p) {
    const V bv = load_lanes(d, b + p * ldb + j, count);
    const float* ap = a0 + p * a_col;
    acc0 = hn::MulAdd(hn::Set(d, ap[0]), bv, acc0);
    if constexpr (R > 1) acc1 = hn::MulAdd(hn::Set(d, ap[a_row]), bv, acc1);
    if constexpr (R > 2) acc2 = hn::MulAdd(hn::Set(d, ap[2 * a_row]), bv, acc2);
    if constexpr (R > 3) acc3 = hn::MulAdd(hn::Set(d, ap[3 * a_row]), bv, acc3);
  }
  float* c0 = c + i * ldc + j;
  finish(d, acc0, alpha, beta, c0, count);
  if constexpr (R > 1) finish(d, acc1, alpha, beta, c0 + ldc, count);
  if constexpr (R > 2) finish(d, acc2, alpha, beta, c0 + 2 * ldc, count);
  if constexpr (R > 3) finish(d, acc3, alpha, beta, c0 + 3 * ldc, count);
}

// op(b) = b (k x n): each vector of an output row is a sum of the same
// vectors of the rows of b, scaled by the row's elements of op(a).
static void rows_of_b(bool trans_a, std::int64_t m, std::int64_t n,
                      std::int64_t k, float alpha, const float* a,
                      std::int64_t lda, const float* b, std::int64_t ldb,
                      float beta, float* c, std::int64_t ldc) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  for (std::int64_t i = 0; i < m; i += 4) {
    for (std::int64_t j = 0; j < n; j += N) {
      const auto count = static_cast<std::size_t>(j + N <= n ? 0 : n - j);
      switch (std::min<std::int64_t>(4, m - i)) {
        case 4:
          row_block<4>(i, j, count, k, alpha, a, a_row, a_col, b, ldb, beta, c,
                       ldc);
          break;
        case 3:
          row_block<3>(i, j, count, k, alpha, a, a_row, a_col, b, ldb, beta, c,
                       ldc);
          break;
        case 2:
          row_block<2>(i, j, count, k, alpha, a, a_row, a_col, b, ldb, beta, c,
                       ldc);
          break;
        default:
          row_block<1>(i, j, count, k, alpha, a, a_row, a_col, b, ldb, beta, c,
                       ldc);
      }
    }
  }
}

static void SmallGemmImpl(bool trans_a, bool trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha,
                          const float* a, std::int64_t lda, const float* b,
                          std::int64_t ldb, float beta, float* c,
                          std::int64_t ldc) {
  if (trans_b) {
    // b^T into k x n rows once, so that every output row reads whole
    // vectors of it; the copy is n * k elements against m * n * k
    // multiply-adds.
    thread_local std::vector<float> bt;
    bt.resize(static_cast<std::size_t>(n * k));
    float* out = bt.data();
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j) out[p * n + j] = b[j * ldb + p];
    }
    rows_of_b(trans_a, m, n, k, alpha, a, lda, bt.data(), n, beta, c, ldc);
  } else {
    rows_of_b(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(SmallGemmImpl);

void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                std::int64_t k, float alpha, const float* a, std::int64_t lda,
                const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(SmallGemmImpl)
  (trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

// Compiled once per Highway target. See tile_gemm_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/tile_gemm_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include "backends/cpu/simd/float_io-inl.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

#include "tessel/core/float_formats.hpp"

#include "backends/cpu/simd/tile_gemm_simd.hpp"
#include "quant/iq4_codebook.hpp"

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// b's lanes as f32: a whole vector when count is 0, else the first count
// (the rest 0). TB is float, or the 16-bit type of a KV cache kept in f16
// or bf16, widened exactly as it is loaded.
template <class TB>
HWY_INLINE V load_b(D d, const TB* p, std::size_t count) {
  if constexpr (std::is_same_v<TB, float>) {
    return load_lanes(d, p, count);
  } else {
    // (The clamp changes nothing, count < a vector: it tells GCC so.)
    return count == 0
               ? load(d, p)
               : load_partial(d, p, std::min(count, hn::MaxLanes(d)), 0.0f);
  }
}

// How the products read b, a matrix of rows: row(r) is where row r
// starts, load(d, row, col, count) its lanes from column col as f32
// (count as load_b's). Rows of f32, f16 or bf16 elements:
template <class TB>
struct ElementRows {
  const TB* b;
  std::int64_t ldb;
  const TB* row(std::int64_t r) const { return b + r * ldb; }
  V load(D d, const TB* start, std::int64_t col, std::size_t count) const {
    return load_b(d, start + col, count);
  }
};

// ---- b in 32-element blocks: a quantised KV cache ----
//
// Each lane is dequantised as it is loaded, to the value the block decoder
// makes (src/quant/legacy_blocks.cpp, ggml's dequantize_row_*): the code
// (less Q4_0's 8 or Q5_0's 16, or IQ4_NL's codebook value) times the
// block's f16 scale, an exact product, plus Q4_1's and Q5_1's f16 minimum,
// one rounding either way. So the products below see the dequantised rows,
// in the same order, bit for bit. Rows are whole blocks.

// Where a block keeps its parts (ggml's block_q8_0, block_q4_0, ...).
struct BlockLayout {
  std::size_t bytes;
  std::size_t min;   // offset of the f16 minimum; 0: none
  std::size_t high;  // offset of Q5's 32 fifth bits; 0: none
  std::size_t codes;
};

template <DType T>
constexpr BlockLayout kLayout = T == DType::Q8_0   ? BlockLayout{34, 0, 0, 2}
                                : T == DType::Q4_1 ? BlockLayout{20, 2, 0, 4}
                                : T == DType::Q5_0 ? BlockLayout{22, 0, 2, 6}
                                : T == DType::Q5_1 ? BlockLayout{24, 2, 4, 8}
                                                   : BlockLayout{18, 0, 0, 2};
static_assert(kLayout<DType::Q4_0>.bytes == 18 &&
              kLayout<DType::IQ4_NL>.bytes == 18);
// A vector's lanes lie in one block, and in one half of a 4-bit block (its
// 16 bytes hold both halves): at most 16 lanes, dividing 32.
static_assert(hn::MaxLanes(D()) <= 16 && 32 % hn::MaxLanes(D()) == 0);

// IQ4_NL's codebook (quant::kIq4Codebook), as floats.
alignas(64) constexpr auto kIq4NlValues = [] {
  std::array<float, 16> values{};
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = quant::kIq4Codebook[i];
  return values;
}();

// The f16 at p, converted by the CPU where it can (F16C on AVX2 and up):
// a load converts a scale every vector.
HWY_INLINE float f16_at(const std::uint8_t* p) {
  const hn::CappedTag<hwy::float16_t, 1> dh;
  const hn::CappedTag<float, 1> df;
  return hn::GetLane(hn::PromoteTo(
      df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p))));
}

// A block's scale and (Q4_1, Q5_1) minimum, broadcast.
struct BlockScale {
  V scale, min;
};

template <DType T>
HWY_INLINE BlockScale block_scale(D d, const std::uint8_t* block) {
  constexpr BlockLayout L = kLayout<T>;
  return {hn::Set(d, f16_at(block)),
          L.min != 0 ? hn::Set(d, f16_at(block + L.min)) : hn::Zero(d)};
}

// Lanes `within` .. `within` + N of a block (within a multiple of N).
template <DType T>
HWY_INLINE V block_lanes(D d, const std::uint8_t* block, std::size_t within,
                         const BlockScale& s) {
  constexpr BlockLayout L = kLayout<T>;
  const hn::RebindToSigned<D> di;
  if constexpr (T == DType::Q8_0) {
    const hn::Rebind<std::int8_t, D> d8;
    const auto* codes =
        reinterpret_cast<const std::int8_t*>(block + L.codes + within);
    return hn::Mul(hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, codes))),
                   s.scale);
  } else {
    // Codes 0-15 are the low nibbles of the 16 bytes, 16-31 the high ones;
    // Q5's fifth bit of code j is bit j of its 32.
    const hn::Rebind<std::uint8_t, D> d8;
    const auto bytes =
        hn::PromoteTo(di, hn::LoadU(d8, block + L.codes + within % 16));
    auto codes = hn::And(within >= 16 ? hn::ShiftRight<4>(bytes) : bytes,
                         hn::Set(di, 15));
    if constexpr (L.high != 0) {
      std::uint32_t high;
      std::memcpy(&high, block + L.high, 4);
      const hn::RebindToUnsigned<D> du;
      // (The scalar shift first keeps the lanes' shifts a constant.)
      const auto bit = hn::And(
          hn::Shr(hn::Set(du, high >> within), hn::Iota(du, std::uint32_t{0})),
          hn::Set(du, 1u));
      codes = hn::Or(codes, hn::BitCast(di, hn::ShiftLeft<4>(bit)));
    }
    if constexpr (T == DType::IQ4_NL) {
      // Sixteen lanes hold the codebook (AVX-512: a permute, where a gather
      // took half the step); fewer gather it.
      if constexpr (hn::MaxLanes(D()) == 16) {
        const V book = hn::Load(d, kIq4NlValues.data());
        return hn::Mul(hn::TableLookupLanes(book, hn::IndicesFromVec(d, codes)),
                       s.scale);
      } else {
        return hn::Mul(hn::GatherIndex(d, kIq4NlValues.data(), codes), s.scale);
      }
    } else if constexpr (L.min != 0) {
      return hn::MulAdd(hn::ConvertTo(d, codes), s.scale, s.min);
    } else {
      constexpr float kOffset = T == DType::Q5_0 ? 16.0f : 8.0f;
      return hn::Mul(hn::Sub(hn::ConvertTo(d, codes), hn::Set(d, kOffset)),
                     s.scale);
    }
  }
}

// ... and rows of T's blocks, `row_bytes` apart, whose every load is a
// whole vector (rows and their lengths are whole blocks).
template <DType T>
struct BlockRows {
  const std::uint8_t* b;
  std::size_t row_bytes;
  const std::uint8_t* row(std::int64_t r) const {
    return b + static_cast<std::size_t>(r) * row_bytes;
  }
  V load(D d, const std::uint8_t* start, std::int64_t col,
         [[maybe_unused]] std::size_t count) const {
    HWY_DASSERT(count == 0);
    const auto c = static_cast<std::size_t>(col);
    const std::uint8_t* block = start + c / 32 * kLayout<T>.bytes;
    return block_lanes<T>(d, block, c % 32, block_scale<T>(d, block));
  }
};

// ---- the products, over any of these readers ----

// c = alpha * acc + beta * c over `count` lanes (0: a whole vector).
HWY_INLINE void finish(D d, V acc, float alpha, float beta, float* c,
                       std::size_t count) {
  V out = hn::Mul(acc, hn::Set(d, alpha));
  if (beta != 0.0f)
    out = hn::MulAdd(load_lanes(d, c, count), hn::Set(d, beta), out);
  store_lanes(d, out, c, count);
}

// R consecutive output rows from i, C vectors of columns from j, the last
// of them `count` lanes (0 for all): R x C independent FMA chains. One or
// two rows (a decode step's query against its values) get their chains
// from the columns instead of the rows.
template <int R, int C, class Rows>
HWY_INLINE void row_block(std::int64_t i, std::int64_t j, std::size_t count,
                          std::int64_t k, float alpha, const float* a,
                          std::int64_t a_row, std::int64_t a_col, const Rows& b,
                          float beta, float* c, std::int64_t ldc) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  V acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < C; ++v) acc[r][v] = hn::Zero(d);
  const float* a0 = a + i * a_row;
  for (std::int64_t p = 0; p < k; ++p) {
    const auto row = b.row(p);
    V bv[C];
    for (int v = 0; v < C; ++v)
      bv[v] = b.load(d, row, j + v * N, v == C - 1 ? count : 0);
    const float* ap = a0 + p * a_col;
    for (int r = 0; r < R; ++r) {
      const V av = hn::Set(d, ap[r * a_row]);
      for (int v = 0; v < C; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < C; ++v) {
      finish(d, acc[r][v], alpha, beta, c + (i + r) * ldc + j + v * N,
             v == C - 1 ? count : 0);
    }
  }
}

// Rows i .. i + R of the output over every column, C vectors of columns at
// a time while they last.
template <int R, int C, class Rows>
HWY_INLINE void row_strip(std::int64_t i, std::int64_t n, std::int64_t k,
                          float alpha, const float* a, std::int64_t a_row,
                          std::int64_t a_col, const Rows& b, float beta,
                          float* c, std::int64_t ldc) {
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t j = 0;
  for (; j + C * N <= n; j += C * N) {
    row_block<R, C>(i, j, 0, k, alpha, a, a_row, a_col, b, beta, c, ldc);
  }
  for (; j < n; j += N) {
    const auto count = static_cast<std::size_t>(j + N <= n ? 0 : n - j);
    row_block<R, 1>(i, j, count, k, alpha, a, a_row, a_col, b, beta, c, ldc);
  }
}

// op(b) = b (k x n): each vector of an output row is a sum of the same
// vectors of the rows of b, scaled by the row's elements of op(a).
template <class Rows>
void rows_of_b(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k,
               float alpha, const float* a, std::int64_t lda, const Rows& b,
               float beta, float* c, std::int64_t ldc) {
  const std::int64_t a_row = trans_a ? 1 : lda, a_col = trans_a ? lda : 1;
  std::int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    row_strip<4, 1>(i, n, k, alpha, a, a_row, a_col, b, beta, c, ldc);
  }
  switch (m - i) {
    case 3:
      row_strip<3, 1>(i, n, k, alpha, a, a_row, a_col, b, beta, c, ldc);
      break;
    case 2:
      row_strip<2, 2>(i, n, k, alpha, a, a_row, a_col, b, beta, c, ldc);
      break;
    case 1:
      row_strip<1, 4>(i, n, k, alpha, a, a_row, a_col, b, beta, c, ldc);
      break;
    default: break;
  }
}

// c[0 .. 4) = alpha * (the sums of the lanes of s[0 .. 4)) + beta * c: the
// four horizontal sums at once. Adjacent lanes pair up within each 128-bit
// block (two interleaves and an add, twice) until a block holds the four
// partial sums in order, then the blocks are added down to one: about a
// third of the work of four separate SumOfLanes.
#if HWY_TARGET != HWY_SCALAR
// v's 128-bit blocks added together (lane l of the result: the sum of
// lane l of every block).
template <class DV>
HWY_INLINE auto fold_to_block(DV d, hn::Vec<DV> v) {
  if constexpr (hn::MaxLanes(DV()) > 4) {
    const hn::Half<DV> dh;
    return fold_to_block(dh,
                         hn::Add(hn::LowerHalf(dh, v), hn::UpperHalf(dh, v)));
  } else {
    (void)d;
    return v;
  }
}

HWY_INLINE void store_sums4(D d, const V* s, float alpha, float beta,
                            float* c) {
  const hn::Repartition<std::uint64_t, D> d64;
  const V ab = hn::Add(hn::InterleaveLower(d, s[0], s[1]),
                       hn::InterleaveUpper(d, s[0], s[1]));
  const V ce = hn::Add(hn::InterleaveLower(d, s[2], s[3]),
                       hn::InterleaveUpper(d, s[2], s[3]));
  const auto ab64 = hn::BitCast(d64, ab), ce64 = hn::BitCast(d64, ce);
  const V blocks =
      hn::Add(hn::BitCast(d, hn::InterleaveLower(d64, ab64, ce64)),
              hn::BitCast(d, hn::InterleaveUpper(d64, ab64, ce64)));
  const hn::FixedTag<float, 4> d4;
  auto sums = hn::Mul(fold_to_block(d, blocks), hn::Set(d4, alpha));
  if (beta != 0.0f)
    sums = hn::MulAdd(hn::LoadU(d4, c), hn::Set(d4, beta), sums);
  hn::StoreU(sums, d4, c);
}
#else
// One lane: the sums are the lanes.
HWY_INLINE void store_sums4(D d, const V* s, float alpha, float beta,
                            float* c) {
  for (int r = 0; r < 4; ++r) {
    const float sum = alpha * hn::GetLane(s[r]);
    c[r] = beta == 0.0f ? sum : sum + beta * c[r];
  }
  (void)d;
}
#endif

// c[i, j .. j + J] = alpha * (row i of a) . (rows j .. j + J of b) + beta *
// c for M rows of a: M x J chains of vector FMAs along k that share each
// load of b (widened or dequantised once for all M rows) and of a; each
// row's J chains end in store_sums4 (J = 4) or one horizontal sum (J = 1).
template <int M, int J, class Rows>
HWY_INLINE void dot_block(std::int64_t k, float alpha, const float* a,
                          std::int64_t lda, const Rows& b, std::int64_t j,
                          float beta, float* c, std::int64_t ldc) {
  static_assert(J == 1 || J == 4);
  const D d;
  const auto N = static_cast<std::int64_t>(hn::Lanes(d));
  decltype(b.row(0)) rows[J];
  V acc[M][J];
  for (int r = 0; r < J; ++r) rows[r] = b.row(j + r);
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < J; ++r) acc[i][r] = hn::Zero(d);
  for (std::int64_t p = 0; p < k; p += N) {
    const auto count = static_cast<std::size_t>(p + N <= k ? 0 : k - p);
    V bv[J];
    for (int r = 0; r < J; ++r) bv[r] = b.load(d, rows[r], p, count);
    for (int i = 0; i < M; ++i) {
      const V av = load_lanes(d, a + i * lda + p, count);
      for (int r = 0; r < J; ++r) acc[i][r] = hn::MulAdd(av, bv[r], acc[i][r]);
    }
  }
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc + j;
    if constexpr (J == 4) {
      store_sums4(d, acc[i], alpha, beta, ci);
    } else {
      const float sum = alpha * hn::GetLane(hn::SumOfLanes(d, acc[i][0]));
      ci[0] = beta == 0.0f ? sum : sum + beta * ci[0];
    }
  }
}

// Rows of a at once: all four where there are 32 vector registers (4 x 4
// accumulators), two elsewhere.
#if HWY_TARGET <= HWY_AVX3
constexpr int kDotRows = 4;
#else
constexpr int kDotRows = 2;
#endif

// Rows i .. i + M of a against every row of b, four at a time.
template <int M, class Rows>
HWY_INLINE void dot_rows(std::int64_t n, std::int64_t k, float alpha,
                         const float* a, std::int64_t lda, const Rows& b,
                         float beta, float* c, std::int64_t ldc) {
  std::int64_t j = 0;
  for (; j + 4 <= n; j += 4)
    dot_block<M, 4>(k, alpha, a, lda, b, j, beta, c, ldc);
  for (; j < n; ++j) dot_block<M, 1>(k, alpha, a, lda, b, j, beta, c, ldc);
}

// c = alpha * a b^T + beta * c with a and b both read along k (op(a) = a,
// op(b) = b^T), m <= kRowDotsMaxRows: each load of b serves up to
// kDotRows rows of a.
template <class Rows>
void row_dots(std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const float* a, std::int64_t lda, const Rows& b, float beta,
              float* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; i += kDotRows) {
    const float* ai = a + i * lda;
    float* ci = c + i * ldc;
    const std::int64_t rows = std::min<std::int64_t>(m - i, kDotRows);
    if constexpr (kDotRows == 4) {
      if (rows == 4) {
        dot_rows<4>(n, k, alpha, ai, lda, b, beta, ci, ldc);
        continue;
      }
      if (rows == 3) {
        dot_rows<3>(n, k, alpha, ai, lda, b, beta, ci, ldc);
        continue;
      }
    }
    if (rows == 2) {
      dot_rows<2>(n, k, alpha, ai, lda, b, beta, ci, ldc);
    } else {
      dot_rows<1>(n, k, alpha, ai, lda, b, beta, ci, ldc);
    }
  }
}

// row_dots for op(b) = b^T (m <= kRowDotsMaxRows, the caller's promise),
// rows_of_b otherwise.
template <class Rows>
void products(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const float* a, std::int64_t lda,
              const Rows& b, float beta, float* c, std::int64_t ldc) {
  if (trans_b) {
    row_dots(m, n, k, alpha, a, lda, b, beta, c, ldc);
  } else {
    rows_of_b(trans_a, m, n, k, alpha, a, lda, b, beta, c, ldc);
  }
}

static void SmallGemmImpl(bool trans_a, bool trans_b, std::int64_t m,
                          std::int64_t n, std::int64_t k, float alpha,
                          const float* a, std::int64_t lda, const float* b,
                          std::int64_t ldb, float beta, float* c,
                          std::int64_t ldc) {
  if (trans_b && (trans_a || m > kRowDotsMaxRows)) {
    // b^T into k x n rows once, so that every output row reads whole
    // vectors of it; the copy is n * k elements against m * n * k
    // multiply-adds.
    thread_local std::vector<float> bt;
    bt.resize(static_cast<std::size_t>(n * k));
    float* out = bt.data();
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < n; ++j) out[p * n + j] = b[j * ldb + p];
    }
    rows_of_b(trans_a, m, n, k, alpha, a, lda, ElementRows<float>{out, n}, beta,
              c, ldc);
  } else {
    products(trans_a, trans_b, m, n, k, alpha, a, lda,
             ElementRows<float>{b, ldb}, beta, c, ldc);
  }
}

template <DType T>
using Type = std::integral_constant<DType, T>;

static void SmallGemmNarrowBImpl(DType b_dtype, bool trans_a, bool trans_b,
                                 std::int64_t m, std::int64_t n, std::int64_t k,
                                 float alpha, const float* a, std::int64_t lda,
                                 const void* b, std::int64_t ldb, float beta,
                                 float* c, std::int64_t ldc) {
  const auto run = [&](const auto& rows) {
    products(trans_a, trans_b, m, n, k, alpha, a, lda, rows, beta, c, ldc);
  };
  const auto blocks = [&](auto type) {
    constexpr DType kType = decltype(type)::value;
    run(BlockRows<kType>{
        static_cast<const std::uint8_t*>(b),
        static_cast<std::size_t>(ldb / 32) * kLayout<kType>.bytes});
  };
  switch (b_dtype) {
    case DType::BF16:
      return run(ElementRows<hwy::bfloat16_t>{
          static_cast<const hwy::bfloat16_t*>(b), ldb});
    case DType::F16:
      return run(ElementRows<hwy::float16_t>{
          static_cast<const hwy::float16_t*>(b), ldb});
    case DType::Q8_0: return blocks(Type<DType::Q8_0>{});
    case DType::Q4_0: return blocks(Type<DType::Q4_0>{});
    case DType::Q4_1: return blocks(Type<DType::Q4_1>{});
    case DType::Q5_0: return blocks(Type<DType::Q5_0>{});
    case DType::Q5_1: return blocks(Type<DType::Q5_1>{});
    case DType::IQ4_NL: return blocks(Type<DType::IQ4_NL>{});
    default:
      HWY_ABORT("small_gemm_narrow_b: b of dtype %d",
                static_cast<int>(b_dtype));
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(SmallGemmImpl);
HWY_EXPORT(SmallGemmNarrowBImpl);

void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                std::int64_t k, float alpha, const float* a, std::int64_t lda,
                const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(SmallGemmImpl)
  (trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void small_gemm_narrow_b(DType b_dtype, bool trans_a, bool trans_b,
                         std::int64_t m, std::int64_t n, std::int64_t k,
                         float alpha, const float* a, std::int64_t lda,
                         const void* b, std::int64_t ldb, float beta, float* c,
                         std::int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(SmallGemmNarrowBImpl)
  (b_dtype, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

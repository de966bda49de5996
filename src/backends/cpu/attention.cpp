// Flash-style attention: for each (batch, head, block of query rows), the
// key/value sequence is visited in tiles; the score tile comes from one
// small GEMM, goes through an online softmax, and is multiplied into an
// f32 output accumulator by a second GEMM. Keys and values in f16 or bf16
// are read in place by a decode step's products, widened a tile at a time
// by the others; block-quantised ones likewise, dequantised (key_tile_gemm).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/attention_kernels.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/simd/attention_simd.hpp"
#include "backends/cpu/simd/tile_gemm_simd.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// tile_gemm's products up to this many multiply-adds run simd::small_gemm,
// larger ones oneDNN's sgemm.
constexpr std::int64_t kSmallTileProducts = 65536;

// Sized for the rows a query block can have: a decode step's single query
// row zero-fills 1/64th of a full block's 96 KiB, once per layer. `tile`
// holds keys or values widened from 16 bits or dequantised, sized when
// first needed (a decode step reads 16-bit and block caches in place and
// never is).
struct Scratch {
  std::vector<float> scores, acc, m, l, corr, tile;
  Scratch(std::int64_t rows, std::int64_t value_dim)
      : scores(static_cast<std::size_t>(rows * kAttentionKeyBlock)),
        acc(static_cast<std::size_t>(rows * value_dim)),
        m(static_cast<std::size_t>(rows)),
        l(static_cast<std::size_t>(rows)),
        corr(static_cast<std::size_t>(rows)) {}
};

// c = alpha * a op(b) + beta * c (tile_gemm's conventions, a not
// transposed), b rows [j0, j0 + rows) of one head of keys or values (x,
// element offset `head`), each `width` long: the scores (op(b) = b^T) or
// the weighted values. f32 rows are read in place. 16-bit and block rows
// are read in place too where tile_gemm would run small_gemm's row loops
// on their f32 values (a decode step's few rows), which then see the same
// numbers in the same order; elsewhere they are widened or dequantised
// (exactly) into the scratch tile first.
void key_tile_gemm(const HeadsView& x, std::int64_t head, std::int64_t j0,
                   std::int64_t rows, std::int64_t width, bool trans_b,
                   std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* a, std::int64_t lda, float beta, float* c,
                   std::int64_t ldc, std::vector<float>& tile) {
  const std::int64_t first = head + j0 * x.row_stride;
  if (x.dtype == DType::F32) {
    tile_gemm(false, trans_b, m, n, k, alpha, a, lda, x.f32() + first,
              x.row_stride, beta, c, ldc);
    return;
  }
  // Rows (and, for block types, heads) start on whole blocks.
  const auto at = [&](std::int64_t element) {
    return static_cast<const std::uint8_t*>(x.data) +
           storage_bytes(x.dtype, element);
  };
  if (simd::small_gemm_reads(x.dtype) && m <= simd::kRowDotsMaxRows &&
      m * n * k <= kSmallTileProducts) {
    simd::small_gemm_narrow_b(x.dtype, false, trans_b, m, n, k, alpha, a, lda,
                              at(first), x.row_stride, beta, c, ldc);
    return;
  }
  const auto size = static_cast<std::size_t>(kAttentionKeyBlock * width);
  if (tile.size() < size) tile.resize(size);
  // A cache's rows of one head are one run (B, H, S, D): one call for the
  // tile (a Q8_0 row of Qwen3's 128 values is 4 blocks, too few to pay a
  // call's dispatch each).
  const std::int64_t run = x.row_stride == width ? rows : 1;
  for (std::int64_t r = 0; r < rows; r += run) {
    widen_to_f32(x.dtype, at(first + r * x.row_stride), tile.data() + r * width,
                 run * width);
  }
  tile_gemm(false, trans_b, m, n, k, alpha, a, lda, tile.data(), width, beta, c,
            ldc);
}

void query_block(const AttentionProblem& p, Scratch& w, std::int64_t b,
                 std::int64_t h, std::int64_t i0) {
  const std::int64_t rows = std::min(kAttentionQueryBlock, p.q_len - i0);
  const std::int64_t kv = h / (p.q_heads / p.kv_heads);
  const float* q = p.q.f32() + b * p.q.batch_stride + h * p.q.head_stride +
                   i0 * p.q.row_stride;
  const std::int64_t k_head = b * p.k.batch_stride + kv * p.k.head_stride;
  const std::int64_t v_head = b * p.v.batch_stride + kv * p.v.head_stride;
  float* out = p.out + ((b * p.q_heads + h) * p.q_len + i0) * p.value_dim;
  const std::int64_t dv = p.value_dim;

  const std::int64_t end = attended_key_end(p, i0, rows);
  std::fill_n(w.m.begin(), rows, kNegInf);
  std::fill_n(w.l.begin(), rows, 0.0f);
  std::fill_n(w.acc.begin(), rows * dv, 0.0f);
  float* s = w.scores.data();
  for (std::int64_t j0 = 0; j0 < end; j0 += kAttentionKeyBlock) {
    const std::int64_t cols = std::min(kAttentionKeyBlock, end - j0);
    key_tile_gemm(p.k, k_head, j0, cols, p.head_dim, true, rows, cols,
                  p.head_dim, p.scale, q, p.q.row_stride, 0.0f, s,
                  kAttentionKeyBlock, w.tile);
    if (p.softcap > 0.0f)
      simd::softcap_tile(s, rows, cols, kAttentionKeyBlock, p.softcap);
    mask_score_tile(p, s, kAttentionKeyBlock, b, h, i0, rows, j0, cols);
    simd::online_softmax_tile(s, rows, cols, kAttentionKeyBlock, w.m.data(),
                              w.l.data(), w.corr.data());
    if (j0 > 0) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const float c = w.corr[r];
        if (c == 1.0f) continue;
        float* a = w.acc.data() + r * dv;
        for (std::int64_t e = 0; e < dv; ++e) a[e] *= c;
      }
    }
    key_tile_gemm(p.v, v_head, j0, cols, dv, false, rows, dv, cols, 1.0f, s,
                  kAttentionKeyBlock, 1.0f, w.acc.data(), dv, w.tile);
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float inv = w.l[r] > 0.0f ? 1.0f / w.l[r] : 0.0f;
    const float* a = w.acc.data() + r * dv;
    float* o = out + r * dv;
    for (std::int64_t e = 0; e < dv; ++e) o[e] = a[e] * inv;
  }
}

}  // namespace

void mask_score_tile(const AttentionProblem& p, float* s, std::int64_t ld,
                     std::int64_t b, std::int64_t h, std::int64_t i0,
                     std::int64_t rows, std::int64_t j0, std::int64_t cols) {
  const std::int64_t* ms = p.mask_strides;
  if (p.mask_add != nullptr || p.mask_keep != nullptr) {
    const std::int64_t base = b * ms[0] + h * ms[1] + j0 * ms[3];
    for (std::int64_t r = 0; r < rows; ++r) {
      float* row = s + r * ld;
      const std::int64_t at = base + (i0 + r) * ms[2];
      if (p.mask_add != nullptr) {
        const float* mrow = p.mask_add + at;
        if (ms[3] == 1) {
          for (std::int64_t c = 0; c < cols; ++c) row[c] += mrow[c];
        } else {
          for (std::int64_t c = 0; c < cols; ++c) row[c] += mrow[c * ms[3]];
        }
      } else {
        const bool* mrow = p.mask_keep + at;
        for (std::int64_t c = 0; c < cols; ++c) {
          if (!mrow[c * ms[3]]) row[c] = kNegInf;
        }
      }
    }
  }
  if (p.causal) {
    for (std::int64_t r = 0; r < rows; ++r) {
      // Keys after i + offset are hidden.
      const std::int64_t first_hidden = i0 + r + p.causal_offset + 1 - j0;
      float* row = s + r * ld;
      for (std::int64_t c = std::max<std::int64_t>(first_hidden, 0); c < cols;
           ++c) {
        row[c] = kNegInf;
      }
    }
  }
}

void tile_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
               std::int64_t k, float alpha, const float* a, std::int64_t lda,
               const float* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc) {
  if (m * n * k <= kSmallTileProducts) {
    simd::small_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                     ldc);
  } else {
    onednn::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                  ldc);
  }
}

std::int64_t attended_key_end(const AttentionProblem& p, std::int64_t i0,
                              std::int64_t rows) {
  // Keys past the last row's causal limit are never needed.
  if (!p.causal) return p.kv_len;
  return std::clamp<std::int64_t>(i0 + rows + p.causal_offset, 0, p.kv_len);
}

namespace {

// Rewrites a decode step (one query row, no mask) as the same problem with
// the query heads that share a key/value head as the rows of one block:
// the keys and values are read once per group instead of once per query
// head, and the score products have that many rows. Every row is the same
// position, so the causal limit becomes a shorter key range. The output
// order is unchanged: query head h of group g is row h % group of block g.
void group_query_heads(AttentionProblem& p) {
  const std::int64_t group = p.q_heads / p.kv_heads;
  if (p.q_len != 1 || group == 1 || group > kAttentionQueryBlock ||
      p.mask_add != nullptr || p.mask_keep != nullptr ||
      p.q.head_stride < p.head_dim) {
    return;
  }
  if (p.causal) {
    p.kv_len = std::clamp<std::int64_t>(p.causal_offset + 1, 0, p.kv_len);
    p.causal = false;
  }
  p.q.row_stride = p.q.head_stride;
  p.q.head_stride *= group;
  p.q_heads = p.kv_heads;
  p.q_len = group;
}

}  // namespace

void attention_forward(const AttentionProblem& problem) {
  AttentionProblem p = problem;
  group_query_heads(p);
  const std::int64_t blocks =
      (p.q_len + kAttentionQueryBlock - 1) / kAttentionQueryBlock;
  const std::int64_t items = p.batch * p.q_heads * blocks;
  parallel_for(0, items, 1, [&](std::int64_t lo, std::int64_t hi) {
    Scratch w(std::min(kAttentionQueryBlock, p.q_len), p.value_dim);
    for (std::int64_t it = lo; it < hi; ++it) {
      const std::int64_t blk = it % blocks;
      const std::int64_t bh = it / blocks;
      query_block(p, w, bh / p.q_heads, bh % p.q_heads,
                  blk * kAttentionQueryBlock);
    }
  });
}

}  // namespace tessel::cpu

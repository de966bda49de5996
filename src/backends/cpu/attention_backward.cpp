// The gradients of fused attention, flash-style: the weights are
// recomputed tile by tile from q and k (two passes over the keys: the row
// statistics, then the gradients), so no (Sq, Sk) matrix is ever held. One
// task owns one (batch, key/value head): dk and dv of that head sum over
// its group of query heads without any atomics or reduction afterwards.
//
// With P = softmax(S), dO the gradient of the output O = P V:
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - delta),  delta = rowsum(dO * O)
//   dQ = scale dS K,  dK = scale dS^T Q   (dS times 1 - tanh^2 under a cap).
// delta uses the forward's output: rowsum(dP * P) = dO . (P V) = dO . O.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/attention_kernels.hpp"
#include "backends/cpu/simd/attention_simd.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Scratch {
  // p: weights; ds: gradient of the weights, then of the scores; t: tanh
  // of the capped scores (only with a soft cap).
  std::vector<float> p, ds, t, m, l, corr, delta;
  explicit Scratch(bool softcap)
      : p(kAttentionQueryBlock * kAttentionKeyBlock),
        ds(kAttentionQueryBlock * kAttentionKeyBlock),
        t(softcap ? kAttentionQueryBlock * kAttentionKeyBlock : 0),
        m(kAttentionQueryBlock),
        l(kAttentionQueryBlock),
        corr(kAttentionQueryBlock),
        delta(kAttentionQueryBlock) {}
};

// The rows x cols scores of one tile into w.p: scale q k^T, capped, masked.
void score_tile(const AttentionProblem& p, Scratch& w, const float* q,
                const float* k, std::int64_t b, std::int64_t h, std::int64_t i0,
                std::int64_t rows, std::int64_t j0, std::int64_t cols) {
  float* s = w.p.data();
  tile_gemm(false, true, rows, cols, p.head_dim, p.scale, q, p.q.row_stride,
            k + j0 * p.k.row_stride, p.k.row_stride, 0.0f, s,
            kAttentionKeyBlock);
  if (p.softcap > 0.0f)
    simd::softcap_tile(s, rows, cols, kAttentionKeyBlock, p.softcap,
                       w.t.data());
  mask_score_tile(p, s, kAttentionKeyBlock, b, h, i0, rows, j0, cols);
}

// Query rows [i0, i0 + rows) of head h: their dq, and their share of the
// dk and dv of the head's key/value head (dk_head, dv_head, accumulated).
void query_block(const AttentionProblem& p, const AttentionGradientBuffers& g,
                 Scratch& w, std::int64_t b, std::int64_t h, std::int64_t i0,
                 float* dk_head, float* dv_head) {
  const std::int64_t rows = std::min(kAttentionQueryBlock, p.q_len - i0);
  const std::int64_t kv = h / (p.q_heads / p.kv_heads);
  const std::int64_t d = p.head_dim, dv = p.value_dim;
  const float* q = p.q.f32() + b * p.q.batch_stride + h * p.q.head_stride +
                   i0 * p.q.row_stride;
  const float* k = p.k.f32() + b * p.k.batch_stride + kv * p.k.head_stride;
  const float* v = p.v.f32() + b * p.v.batch_stride + kv * p.v.head_stride;
  const std::int64_t head_row = (b * p.q_heads + h) * p.q_len + i0;
  const float* out = g.out + head_row * dv;
  const float* dout = g.dout + head_row * dv;
  float* dq = g.dq + head_row * d;
  std::fill_n(dq, rows * d, 0.0f);
  const std::int64_t end = attended_key_end(p, i0, rows);

  // Pass 1: each row's running max and sum over every attended key.
  std::fill_n(w.m.begin(), rows, kNegInf);
  std::fill_n(w.l.begin(), rows, 0.0f);
  for (std::int64_t j0 = 0; j0 < end; j0 += kAttentionKeyBlock) {
    const std::int64_t cols = std::min(kAttentionKeyBlock, end - j0);
    score_tile(p, w, q, k, b, h, i0, rows, j0, cols);
    simd::online_softmax_tile(w.p.data(), rows, cols, kAttentionKeyBlock,
                              w.m.data(), w.l.data(), w.corr.data());
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* o = out + r * dv;
    const float* go = dout + r * dv;
    float acc = 0.0f;
    for (std::int64_t e = 0; e < dv; ++e) acc += o[e] * go[e];
    w.delta[r] = acc;
  }

  // Pass 2: the weights again, then every gradient the tile feeds. With a
  // single tile, pass 1 left exp(s - m) with the final m in place (and the
  // cap's tanh): only the division by l remains.
  const float* t = p.softcap > 0.0f ? w.t.data() : nullptr;
  const bool one_tile = end <= kAttentionKeyBlock;
  for (std::int64_t j0 = 0; j0 < end; j0 += kAttentionKeyBlock) {
    const std::int64_t cols = std::min(kAttentionKeyBlock, end - j0);
    if (one_tile) {
      for (std::int64_t r = 0; r < rows; ++r) {
        // l = 0: nothing attended, the row is already 0; NaN rows stay NaN.
        const float inv = w.l[r] > 0.0f ? 1.0f / w.l[r] : 0.0f;
        float* row = w.p.data() + r * kAttentionKeyBlock;
        for (std::int64_t c = 0; c < cols; ++c) row[c] *= inv;
      }
    } else {
      score_tile(p, w, q, k, b, h, i0, rows, j0, cols);
      simd::softmax_weights_tile(w.p.data(), rows, cols, kAttentionKeyBlock,
                                 w.m.data(), w.l.data());
    }
    // dV[j0:] += P^T dO and dP = dO V^T.
    tile_gemm(true, false, cols, dv, rows, 1.0f, w.p.data(), kAttentionKeyBlock,
              dout, dv, 1.0f, dv_head + j0 * dv, dv);
    tile_gemm(false, true, rows, cols, dv, 1.0f, dout, dv,
              v + j0 * p.v.row_stride, p.v.row_stride, 0.0f, w.ds.data(),
              kAttentionKeyBlock);
    simd::score_gradient_tile(w.p.data(), w.ds.data(), t, rows, cols,
                              kAttentionKeyBlock, w.delta.data());
    // dQ += scale dS K[j0:] and dK[j0:] += scale dS^T Q.
    tile_gemm(false, false, rows, d, cols, p.scale, w.ds.data(),
              kAttentionKeyBlock, k + j0 * p.k.row_stride, p.k.row_stride, 1.0f,
              dq, d);
    tile_gemm(true, false, cols, d, rows, p.scale, w.ds.data(),
              kAttentionKeyBlock, q, p.q.row_stride, 1.0f, dk_head + j0 * d, d);
  }
}

}  // namespace

void attention_backward(const AttentionProblem& p,
                        const AttentionGradientBuffers& g) {
  const std::int64_t group = p.q_heads / p.kv_heads;
  const std::int64_t blocks =
      (p.q_len + kAttentionQueryBlock - 1) / kAttentionQueryBlock;
  parallel_for(
      0, p.batch * p.kv_heads, 1, [&](std::int64_t lo, std::int64_t hi) {
        Scratch w(p.softcap > 0.0f);
        for (std::int64_t it = lo; it < hi; ++it) {
          const std::int64_t b = it / p.kv_heads, kv = it % p.kv_heads;
          float* dk_head = g.dk + it * p.kv_len * p.head_dim;
          float* dv_head = g.dv + it * p.kv_len * p.value_dim;
          std::fill_n(dk_head, p.kv_len * p.head_dim, 0.0f);
          std::fill_n(dv_head, p.kv_len * p.value_dim, 0.0f);
          for (std::int64_t h = kv * group; h < (kv + 1) * group; ++h) {
            for (std::int64_t blk = 0; blk < blocks; ++blk)
              query_block(p, g, w, b, h, blk * kAttentionQueryBlock, dk_head,
                          dv_head);
          }
        }
      });
}

}  // namespace tessel::cpu

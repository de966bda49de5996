// Attention, RoPE and embedding by hand; PyTorch checks random cases in
// tests/oracle/test_torch_ops.py.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::expect_near_all;
using testing::values;

// One head, head_dim 2: q = [1, 0], keys [1, 0] and [0, 1], values
// [1, 2] and [3, 4].
Tensor q1() { return from_vector<float>({1, 0}, {1, 1, 1, 2}); }
Tensor k2() { return from_vector<float>({1, 0, 0, 1}, {1, 1, 2, 2}); }
Tensor v2() { return from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2}); }

TEST(Attention, HandWorked) {
  AttentionOptions o;
  o.scale = 1.0;
  // Scores (1, 0): weights e / (e + 1) and 1 / (e + 1).
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 1), p1 = 1 - p0;
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), o),
                  {p0 * 1 + p1 * 3, p0 * 2 + p1 * 4}, 1e-6);
  // The default scale is 1 / sqrt(2).
  const double e = std::exp(1 / std::sqrt(2.0)), d0 = e / (e + 1), d1 = 1 - d0;
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2()),
                  {d0 * 1 + d1 * 3, d0 * 2 + d1 * 4}, 1e-6);
}

TEST(Attention, MasksAndCausality) {
  // A boolean mask hiding key 1 leaves value 0; an additive -inf the same.
  AttentionOptions o;
  o.mask = from_vector<bool>({true, false}, {1, 2});
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), o), {1, 2},
                  1e-6);
  o.mask = from_vector<float>({0, -INFINITY}, {1, 2});
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), o), {1, 2},
                  1e-6);
  // Every key hidden: zeros, not NaN.
  o.mask = from_vector<bool>({false, false}, {1, 2});
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), o), {0, 0}, 0);

  // Causal with two queries: the first sees key 0 only.
  const Tensor q = from_vector<float>({1, 0, 1, 0}, {1, 1, 2, 2});
  AttentionOptions c;
  c.causal = true;
  c.scale = 1.0;
  const double p0 = std::exp(1.0) / (std::exp(1.0) + 1), p1 = 1 - p0;
  expect_near_all(scaled_dot_product_attention(q, k2(), v2(), c),
                  {1, 2, p0 * 1 + p1 * 3, p0 * 2 + p1 * 4}, 1e-6);
  // One query against two keys (a KV cache): bottom-right alignment lets
  // it see both; offset 0 (PyTorch's top-left) only the first.
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), c),
                  {p0 * 1 + p1 * 3, p0 * 2 + p1 * 4}, 1e-6);
  c.causal_offset = 0;
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), c), {1, 2},
                  1e-6);
  // A negative offset can hide every key from a query: zeros.
  c.causal_offset = -1;
  expect_near_all(scaled_dot_product_attention(q1(), k2(), v2(), c), {0, 0}, 0);
}

TEST(Attention, GroupedQueryHeadsShareKeys) {
  Generator g(4);
  const Tensor q = randn({2, 6, 5, 8}, g);
  const Tensor k = randn({2, 2, 7, 8}, g), v = randn({2, 2, 7, 8}, g);
  // Query heads 0-2 read kv head 0, heads 3-5 kv head 1.
  const Tensor kr =
      k.unsqueeze(2).expand({2, 2, 3, 7, 8}).reshape({2, 6, 7, 8});
  const Tensor vr =
      v.unsqueeze(2).expand({2, 2, 3, 7, 8}).reshape({2, 6, 7, 8});
  EXPECT_TRUE(allclose(scaled_dot_product_attention(q, k, v),
                       scaled_dot_product_attention(q, kr, vr), 1e-6, 1e-6));
}

TEST(Attention, FusedTilesMatchTheUnfusedForm) {
  // Sequences longer than one query block (64) and one key tile (256), a
  // broadcast mask, causality and softcap: the fused f32 kernel against
  // the f64 path, which materialises the scores.
  Generator g(5);
  const Tensor q = randn({2, 4, 130, 32}, g), k = randn({2, 2, 600, 32}, g),
               v = randn({2, 2, 600, 24}, g);
  AttentionOptions o;
  o.mask = randn({2, 1, 130, 600}, g);
  o.causal = true;
  o.softcap = 5.0;
  const Tensor y = scaled_dot_product_attention(q, k, v, o);
  AttentionOptions o64 = o;
  o64.mask = o.mask.to(DType::F64);
  const Tensor ref = scaled_dot_product_attention(
      q.to(DType::F64), k.to(DType::F64), v.to(DType::F64), o64);
  EXPECT_EQ(y.shape(), (Shape{2, 4, 130, 24}));
  // f32 scores over 32 products and sums over 600 weights: ~1e-6.
  EXPECT_TRUE(allclose(y.to(DType::F64), ref, 1e-5, 1e-5));
  // bf16 operands: rounded inputs, the same kernel.
  const Tensor yb = scaled_dot_product_attention(
      q.to(DType::BF16), k.to(DType::BF16), v.to(DType::BF16), o);
  EXPECT_EQ(yb.dtype(), DType::BF16);
  EXPECT_TRUE(allclose(yb.to(DType::F64), ref, 5e-2, 5e-2));
}

TEST(Attention, DecodeStepsMatchTheUnfusedForm) {
  // One query row against a cache (a prefix of a longer buffer, read
  // through the (B, S, H, D) order the decoder stores): the fused kernel
  // takes the query heads that share a key/value head as the rows of one
  // block and the single-row score products by dot products, four keys
  // at a time with their sums reduced together. Groups of 1 to 4, head
  // dims that end in a partial vector of 4, 8 and 16 lanes, causal limits
  // that leave 0 to 3 keys past a multiple of four (or hide all), and a
  // mask (which keeps the heads apart), on every SIMD target.
  Generator g(7);
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const std::int64_t group : {1, 2, 3, 4}) {
      for (const std::int64_t head_dim : {128, 40, 42}) {
        const std::int64_t kv_heads = 3, len = 300;
        const Tensor q =
            randn({2, 1, kv_heads * group, head_dim}, g).permute({0, 2, 1, 3});
        const Tensor k = randn({2, 2 * len, kv_heads, head_dim}, g)
                             .slice(1, 0, len)
                             .permute({0, 2, 1, 3});
        const Tensor v = randn({2, 2 * len, kv_heads, 24}, g)
                             .slice(1, 0, len)
                             .permute({0, 2, 1, 3});
        const auto f64 = [](const Tensor& t) { return t.to(DType::F64); };
        for (const std::int64_t offset :
             {len - 1, std::int64_t{257}, std::int64_t{200}, std::int64_t{102},
              std::int64_t{3}, std::int64_t{-1}}) {
          AttentionOptions o;
          o.causal = true;
          o.causal_offset = offset;
          const Tensor y = scaled_dot_product_attention(q, k, v, o);
          const Tensor ref =
              scaled_dot_product_attention(f64(q), f64(k), f64(v), o);
          EXPECT_EQ(y.shape(), (Shape{2, kv_heads * group, 1, 24}));
          // f32 scores over at most 128 products, sums over 300 weights.
          EXPECT_TRUE(allclose(f64(y), ref, 1e-5, 1e-5))
              << "group " << group << " head_dim " << head_dim << " offset "
              << offset;
        }
        AttentionOptions masked;
        masked.mask = randn({2, kv_heads * group, 1, len}, g);
        EXPECT_TRUE(allclose(
            f64(scaled_dot_product_attention(q, k, v, masked)),
            scaled_dot_product_attention(f64(q), f64(k), f64(v), masked), 1e-5,
            1e-5));
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The first `len` positions of keys or values kept (2, capacity, 3, dim)
// as the decoder keeps its cache, seen (B, H, S, D).
Tensor cache_prefix(Generator& g, DType dtype, std::int64_t len,
                    std::int64_t dim) {
  return randn({2, 2 * len, 3, dim}, g)
      .to(dtype)
      .slice(1, 0, len)
      .permute({0, 2, 1, 3});
}

TEST(Attention, SixteenBitKeysAndValuesAreWidenedExactly) {
  // Keys and values of one 16-bit dtype (a KV cache in f16 or bf16) are
  // widened exactly, a key tile at a time for one block of queries (decode
  // steps, grouped or not; caches read in the decoder's (B, S, H, D) order
  // or contiguous), all at once for longer prefills (130 queries, 600
  // keys, a mask, causality, softcap): the result is that of their f32
  // values, bit for bit, in f32 for f32 queries.
  Generator g(8);
  const auto f32 = [](const Tensor& t) { return t.to(DType::F32); };
  for (const DType dtype : {DType::F16, DType::BF16}) {
    const Tensor q = randn({2, 4, 130, 32}, g);
    const Tensor k = randn({2, 2, 600, 32}, g).to(dtype),
                 v = randn({2, 2, 600, 24}, g).to(dtype);
    AttentionOptions o;
    o.mask = randn({2, 1, 130, 600}, g);
    o.causal = true;
    o.softcap = 5.0;
    const Tensor y = scaled_dot_product_attention(q, k, v, o);
    EXPECT_EQ(y.dtype(), DType::F32);
    EXPECT_TRUE(equal(y, scaled_dot_product_attention(q, f32(k), f32(v), o)))
        << dtype_name(dtype);
    // All three in 16 bits: computed the same way, rounded at the end.
    const Tensor y16 = scaled_dot_product_attention(q.to(dtype), k, v, o);
    EXPECT_EQ(y16.dtype(), dtype);
    EXPECT_TRUE(equal(
        y16, scaled_dot_product_attention(f32(q.to(dtype)), f32(k), f32(v), o)
                 .to(dtype)));
    // A cache laid out (B, capacity, H, D), its first 300 positions.
    const std::int64_t len = 300;
    const Tensor kc = cache_prefix(g, dtype, len, 40);
    const Tensor vc = cache_prefix(g, dtype, len, 24);
    // ... and one laid out (B, H, S, D), whose tiles widen in one call.
    const Tensor kd = randn({2, 3, len, 40}, g).to(dtype),
                 vd = randn({2, 3, len, 24}, g).to(dtype);
    // Up to four rows read the 16 bits in the products; five widen tiles.
    for (const std::int64_t rows : {1, 5}) {
      const Tensor qc = randn({2, rows, 6, 40}, g).permute({0, 2, 1, 3});
      AttentionOptions causal;
      causal.causal = true;
      EXPECT_TRUE(
          equal(scaled_dot_product_attention(qc, kc, vc, causal),
                scaled_dot_product_attention(qc, f32(kc), f32(vc), causal)))
          << dtype_name(dtype) << " rows " << rows;
      EXPECT_TRUE(
          equal(scaled_dot_product_attention(qc, kd, vd, causal),
                scaled_dot_product_attention(qc, f32(kd), f32(vd), causal)))
          << dtype_name(dtype) << " rows " << rows;
    }
  }
  // Four rows whose tiles are large enough for oneDNN (4 x 256 x 128
  // multiply-adds) widen them, as their f32 values take oneDNN.
  for (const DType dtype : {DType::F16, DType::BF16}) {
    const Tensor q = randn({1, 8, 1, 128}, g), k = randn({1, 2, 600, 128}, g),
                 v = randn({1, 2, 600, 128}, g);
    EXPECT_TRUE(equal(
        scaled_dot_product_attention(q, k.to(dtype), v.to(dtype)),
        scaled_dot_product_attention(q, f32(k.to(dtype)), f32(v.to(dtype)))))
        << dtype_name(dtype);
  }
  // Keys and values of different dtypes are read in f32.
  const Tensor q = randn({1, 2, 3, 8}, g), k = randn({1, 2, 5, 8}, g),
               v = randn({1, 2, 5, 8}, g);
  EXPECT_TRUE(equal(
      scaled_dot_product_attention(q, k.to(DType::F16), v.to(DType::BF16)),
      scaled_dot_product_attention(q, f32(k.to(DType::F16)),
                                   f32(v.to(DType::BF16)))));
}

TEST(Attention, BlockQuantisedKeysAndValuesAreDequantisedExactly) {
  // Keys and values of one block type (a quantised KV cache) are read in
  // place by a decode step's products, dequantised a key tile
  // at a time for other blocks of queries (five and 64 rows, over a cache
  // read in the decoder's (B, S, H, D) order), all at once for longer
  // prefills (130 queries): the result is that of their dequantised f32
  // values, bit for bit.
  Generator g(9);
  const auto f32 = [](const Tensor& t) { return t.to(DType::F32); };
  for (const DType dtype :
       {DType::Q8_0, DType::Q4_0, DType::Q5_1, DType::IQ4_NL}) {
    const Tensor q = randn({1, 4, 130, 64}, g);
    const Tensor k = randn({1, 2, 300, 64}, g).to(dtype),
                 v = randn({1, 2, 300, 32}, g).to(dtype);
    AttentionOptions o;
    o.causal = true;
    o.softcap = 5.0;
    const Tensor y = scaled_dot_product_attention(q, k, v, o);
    EXPECT_EQ(y.dtype(), DType::F32);
    EXPECT_TRUE(equal(y, scaled_dot_product_attention(q, f32(k), f32(v), o)))
        << dtype_name(dtype);
    // A cache laid out (B, capacity, H, D), its first 200 positions; one
    // and five query rows per key/value head, and one block of 64.
    const std::int64_t len = 200;
    const Tensor kc = cache_prefix(g, dtype, len, 64);
    const Tensor vc = cache_prefix(g, dtype, len, 96);
    for (const std::int64_t rows : {1, 5, 64}) {
      const Tensor qc = randn({2, rows, 6, 64}, g).permute({0, 2, 1, 3});
      AttentionOptions causal;
      causal.causal = true;
      EXPECT_TRUE(
          equal(scaled_dot_product_attention(qc, kc, vc, causal),
                scaled_dot_product_attention(qc, f32(kc), f32(vc), causal)))
          << dtype_name(dtype) << " rows " << rows;
    }
  }
  // One to four rows (the query heads of one key/value head) read every
  // cache block type in the products, on every SIMD target (lanes of 1 to
  // 16 within each 32-code block).
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (const DType dtype : {DType::Q8_0, DType::Q4_0, DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::IQ4_NL}) {
      const Tensor kc = randn({1, 1, 70, 64}, g).to(dtype),
                   vc = randn({1, 1, 70, 96}, g).to(dtype);
      for (const std::int64_t rows : {1, 2, 3, 4}) {
        const Tensor qc = randn({1, rows, 1, 64}, g);
        EXPECT_TRUE(equal(scaled_dot_product_attention(qc, kc, vc),
                          scaled_dot_product_attention(qc, f32(kc), f32(vc))))
            << dtype_name(dtype) << " rows " << rows << " on "
            << hwy::TargetName(target);
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  // Keys and values of different dtypes are read in f32.
  const Tensor q = randn({1, 2, 3, 32}, g), k = randn({1, 2, 5, 32}, g),
               v = randn({1, 2, 5, 32}, g);
  EXPECT_TRUE(equal(
      scaled_dot_product_attention(q, k.to(DType::Q8_0), v.to(DType::F16)),
      scaled_dot_product_attention(q, f32(k.to(DType::Q8_0)),
                                   f32(v.to(DType::F16)))));
}

TEST(Attention, StridedAndThreeDimensionalOperands) {
  Generator g(6);
  // (B, S, H, D) memory viewed as (B, H, S, D).
  const Tensor qs = randn({1, 9, 3, 16}, g), ks = randn({1, 9, 3, 16}, g),
               vs = randn({1, 9, 3, 16}, g);
  const Tensor q = qs.permute({0, 2, 1, 3}), k = ks.permute({0, 2, 1, 3}),
               v = vs.permute({0, 2, 1, 3});
  const Tensor y = scaled_dot_product_attention(q, k, v);
  EXPECT_TRUE(allclose(y,
                       scaled_dot_product_attention(
                           q.contiguous(), k.contiguous(), v.contiguous()),
                       1e-6, 1e-6));
  // Keys and values broadcast along the sequence (stride 0) and a single
  // query row.
  const Tensor kb =
      ks.slice(1, 0, 1).expand({1, 9, 3, 16}).permute({0, 2, 1, 3});
  EXPECT_TRUE(allclose(
      scaled_dot_product_attention(q.slice(2, 0, 1), kb, v),
      scaled_dot_product_attention(q.slice(2, 0, 1), kb.contiguous(), v), 1e-6,
      1e-6));
  // Rank 3 is a single batch.
  EXPECT_TRUE(allclose(
      scaled_dot_product_attention(q.squeeze(0), k.squeeze(0), v.squeeze(0)),
      y.squeeze(0), 1e-6, 1e-6));
}

TEST(AttentionErrors, Checked) {
  const Tensor q = zeros({1, 4, 3, 8}), k = zeros({1, 3, 5, 8}),
               v = zeros({1, 3, 5, 8});
  EXPECT_TESSEL_ERROR(scaled_dot_product_attention(q, k, v), "E2102",
                      "4 query heads", "3");
  EXPECT_TESSEL_ERROR(
      scaled_dot_product_attention(q, zeros({1, 2, 5, 6}), zeros({1, 2, 5, 6})),
      "E2103", "head dimensions");
  AttentionOptions o;
  o.mask = zeros({3, 4});
  EXPECT_TESSEL_ERROR(scaled_dot_product_attention(q, zeros({1, 2, 5, 8}),
                                                   zeros({1, 2, 5, 8}), o),
                      "E2102", "mask (3, 4)", "(1, 4, 3, 5)");
  EXPECT_TESSEL_ERROR(
      scaled_dot_product_attention(q, zeros({2, 2, 5, 8}), zeros({2, 2, 5, 8})),
      "E2102", "batch");
  EXPECT_TESSEL_ERROR(
      scaled_dot_product_attention(zeros({4, 8}), zeros({4, 8}), zeros({4, 8})),
      "E2102", "rank 4");
  EXPECT_TESSEL_ERROR(
      scaled_dot_product_attention(q, zeros({1, 2, 5, 8}), zeros({1, 2, 4, 8})),
      "E2102", "same heads and sequence length");
}

TEST(AttentionNumerics, CheckCatchesNaN) {
  CheckNumericsGuard on(true);
  const Tensor q = from_vector<float>({NAN, 0}, {1, 1, 1, 2});
  EXPECT_TESSEL_ERROR(scaled_dot_product_attention(q, k2(), v2()), "E2401",
                      "scaled_dot_product_attention");
}

TEST(Rope, HandWorkedBothStyles) {
  // theta 100, head_dim 4: frequencies 1 and 0.1; position 1.
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {1, 4});
  const Tensor pos = from_vector<std::int64_t>({1}, {1});
  RopeOptions o;
  o.theta = 100;
  const double c1 = std::cos(1.0), s1 = std::sin(1.0), c2 = std::cos(0.1),
               s2 = std::sin(0.1);
  // NeoX pairs (0, 2) and (1, 3).
  expect_near_all(
      rope(x, pos, o),
      {1 * c1 - 3 * s1, 2 * c2 - 4 * s2, 3 * c1 + 1 * s1, 4 * c2 + 2 * s2},
      1e-6);
  // GPT-J pairs (0, 1) and (2, 3).
  o.style = RopeStyle::GPTJ;
  expect_near_all(
      rope(x, pos, o),
      {1 * c1 - 2 * s1, 2 * c1 + 1 * s1, 3 * c2 - 4 * s2, 4 * c2 + 3 * s2},
      1e-6);
  // Position 0 is the identity; rotary_dim 2 rotates only the first pair.
  EXPECT_TRUE(equal(rope(x, zeros({1}, DType::I64), o), x));
  o.rotary_dim = 2;
  expect_near_all(rope(x, pos, o), {1 * c1 - 2 * s1, 2 * c1 + 1 * s1, 3, 4},
                  1e-6);
}

TEST(Rope, RotationProperties) {
  Generator g(8);
  const Tensor q = randn({1, 2, 6, 16}, g), k = randn({1, 2, 6, 16}, g);
  const Tensor pos = arange(6, DType::I64);  // broadcast over batch and heads
  const Tensor rq = rope(q, pos), rk = rope(k, pos);
  // Rotations keep norms.
  EXPECT_TRUE(allclose(norm(rq, 2.0, {-1}), norm(q, 2.0, {-1}), 1e-5, 1e-5));
  // Inverse: the same tables with -sin.
  const RopeTables t = rope_tables(pos, 16);
  EXPECT_TRUE(allclose(rope_with_tables(rq, t.cos, neg(t.sin)), q, 1e-5, 1e-5));
  // Relative positions: <rope(q, m), rope(k, n)> depends on m - n only.
  const Tensor a = rope(q, full({6}, 3, DType::I64)),
               b = rope(k, full({6}, 1, DType::I64));
  const Tensor c = rope(q, full({6}, 12, DType::I64)),
               d = rope(k, full({6}, 10, DType::I64));
  EXPECT_TRUE(allclose(sum(mul(a, b), {-1}), sum(mul(c, d), {-1}), 1e-4, 1e-4));
  // Per-batch positions for (B, S, H, D) data: (B, S, 1) broadcasts.
  const Tensor xs = q.permute({0, 2, 1, 3}).contiguous();  // (1, 6, 2, 16)
  EXPECT_TRUE(allclose(rope(xs, pos.reshape({1, 6, 1})).permute({0, 2, 1, 3}),
                       rq, 1e-6, 1e-6));
  // bf16 rotates in f32 and rounds once.
  EXPECT_TRUE(
      equal(rope(q.to(DType::BF16), pos),
            rope(q.to(DType::BF16).to(DType::F32), pos).to(DType::BF16)));
}

TEST(RopeErrors, Checked) {
  const Tensor x = zeros({2, 3, 8});
  RopeOptions o;
  o.rotary_dim = 5;
  EXPECT_TESSEL_ERROR(rope(x, arange(3, DType::I64), o), "E2102", "even");
  o.rotary_dim = 10;
  EXPECT_TESSEL_ERROR(rope(x, arange(3, DType::I64), o), "E2102", "head_dim 8");
  EXPECT_TESSEL_ERROR(rope(x, arange(4, DType::I64)), "E2102", "broadcast");
  EXPECT_TESSEL_ERROR(rope(x.to(DType::I32), arange(3, DType::I64)), "E2201");
}

TEST(Embedding, LooksUpRows) {
  const Tensor w = arange(12, DType::F32).reshape({4, 3});
  const Tensor ids = from_vector<std::int32_t>({3, 0, 0, 2}, {2, 2});
  const Tensor e = embedding(w, ids);
  EXPECT_EQ(e.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(values<float>(e),
            (std::vector<float>{9, 10, 11, 0, 1, 2, 0, 1, 2, 6, 7, 8}));
  EXPECT_TESSEL_ERROR(embedding(w, from_vector<std::int64_t>({1, 4}, {2})),
                      "E2302", "id 4", "(1,)", "4 rows");
  EXPECT_TESSEL_ERROR(embedding(w, from_vector<std::int64_t>({-1}, {1})),
                      "E2302", "id -1");
  EXPECT_TESSEL_ERROR(embedding(w, zeros({2})), "E2201", "integers");
}

TEST(Embedding, BackwardSumsTheRowsOfRepeatedIds) {
  // Gradients of 4 positions (ids 3, 0, 0, 2) into 5 rows of width 3: row
  // 0 gets positions 1 and 2, row 1 and row 4 nothing.
  const Tensor ids = from_vector<std::int32_t>({3, 0, 0, 2}, {2, 2});
  const Tensor g = arange(12, DType::F32).reshape({2, 2, 3});
  const Tensor d = embedding_backward(g, ids, 5);
  EXPECT_EQ(d.shape(), (Shape{5, 3}));
  EXPECT_EQ(values<float>(d),
            (std::vector<float>{3 + 6, 4 + 7, 5 + 8, 0, 0, 0, 9, 10, 11, 0, 1,
                                2, 0, 0, 0}));
  // 16-bit gradients accumulate in f32 and come back in their dtype.
  const Tensor h = embedding_backward(g.to(DType::BF16), ids, 5);
  EXPECT_EQ(h.dtype(), DType::BF16);
  EXPECT_TRUE(equal(h.to(DType::F32), d));
  EXPECT_TESSEL_ERROR(embedding_backward(g, ids, 3), "E2302", "id 3", "3 rows");
  EXPECT_TESSEL_ERROR(embedding_backward(g.reshape({4, 3}), ids, 5), "E2102",
                      "plus one axis");
  EXPECT_TESSEL_ERROR(embedding_backward(zeros({2, 2, 3}, DType::I32), ids, 5),
                      "E2201", "float");
}

}  // namespace
}  // namespace tessel

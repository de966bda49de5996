// Hand-worked matrix products.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

// a = [[0, 1, 2], [3, 4, 5]], b = [[0..3], [4..7], [8..11]]
// a @ b = [[20, 23, 26, 29], [56, 68, 80, 92]]
Tensor a23() { return arange(6, DType::F32).reshape({2, 3}); }
Tensor b34() { return arange(12, DType::F32).reshape({3, 4}); }
const std::vector<float> kAB = {20, 23, 26, 29, 56, 68, 80, 92};

TEST(Matmul, EveryDType) {
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16, DType::I64,
                  DType::I32}) {
    const Tensor r = matmul(a23().to(d), b34().to(d));
    EXPECT_EQ(r.dtype(), d) << dtype_name(d);
    EXPECT_EQ(values<float>(r.to(DType::F32)), kAB) << dtype_name(d);
  }
  // 8-bit integers give exact i32 products.
  EXPECT_EQ(matmul(a23().to(DType::I8), b34().to(DType::I8)).dtype(),
            DType::I32);
  EXPECT_EQ(matmul(a23().to(DType::U8), b34().to(DType::I8)).dtype(),
            DType::I32);
  EXPECT_EQ(matmul(a23().to(DType::U8), b34().to(DType::U8)).dtype(),
            DType::I32);
  const Tensor big = full({1, 4}, 127, DType::I8);
  EXPECT_EQ(matmul(big, full({4, 1}, -128, DType::I8)).item<int>(), -65024);
  EXPECT_EQ(matmul(full({1, 2}, 255, DType::U8), full({2, 1}, 127, DType::I8))
                .item<int>(),
            64770);
  // Past 2^24, where f32 stops holding every integer: exact over long K
  // whatever engine runs the product.
  EXPECT_EQ(
      matmul(full({1, 1000}, 255, DType::U8), full({1000, 1}, 255, DType::U8))
          .item<std::int64_t>(),
      65025000);
  EXPECT_EQ(
      matmul(full({2, 1000}, 255, DType::U8), full({1000, 3}, -128, DType::I8))
          .at<std::int32_t>({1, 2}),
      -32640000);
  EXPECT_EQ(
      matmul(full({1, 1001}, -128, DType::I8), full({1001, 1}, -127, DType::I8))
          .item<std::int64_t>(),
      16272256);
  // Mixed dtypes promote.
  EXPECT_EQ(matmul(a23().to(DType::BF16), b34().to(DType::F16)).dtype(),
            DType::F32);
}

TEST(Matmul, NarrowFloatsAccumulateInF32) {
  // 256 products of 1 + 2^-7 (a bf16): exactly 258 in f32 and in bf16,
  // while a bf16 running sum would stall at 256 (spacing 2 above 256).
  const Tensor x = full({1, 256}, 1.0f + 0x1p-7f, DType::BF16);
  const Tensor y = full({256, 1}, 1.0f, DType::BF16);
  EXPECT_EQ(matmul(x, y).item<float>(), 258.0f);
}

TEST(Matmul, VectorsAndBatches) {
  const Tensor v = arange(3, DType::F32);
  EXPECT_EQ(matmul(v, b34()).shape(), (Shape{4}));  // (3) @ (3, 4)
  EXPECT_EQ(values<float>(matmul(v, b34())),
            (std::vector<float>{20, 23, 26, 29}));
  EXPECT_EQ(matmul(a23(), v).shape(), (Shape{2}));
  EXPECT_EQ(matmul(v, v).rank(), 0);
  EXPECT_EQ(matmul(v, v).item<float>(), 5.0f);
  // Batch broadcasting: (5, 1, 2, 3) @ (4, 3, 4) -> (5, 4, 2, 4).
  const Tensor a = a23().reshape({1, 1, 2, 3}).expand({5, 1, 2, 3});
  const Tensor b = b34().reshape({1, 3, 4}).expand({4, 3, 4});
  const Tensor r = matmul(a, b);
  EXPECT_EQ(r.shape(), (Shape{5, 4, 2, 4}));
  EXPECT_EQ(r.at<float>({4, 3, 1, 2}), 80.0f);
  // Transposed and sliced operands need no copies from the caller.
  EXPECT_EQ(values<float>(matmul(b34().transpose(0, 1), a23().transpose(0, 1))),
            (std::vector<float>{20, 56, 23, 68, 26, 80, 29, 92}));
  EXPECT_EQ(matmul(b34().slice(1, 0, 4, 2), ones({2, 1})).at<float>({2, 0}),
            18.0f);
  EXPECT_EQ(matmul(zeros({2, 0}), zeros({0, 3})).shape(), (Shape{2, 3}));
  EXPECT_EQ(sum(matmul(zeros({2, 0}), zeros({0, 3}))).item<float>(), 0.0f);
}

TEST(Matmul, ShapeErrorsNameBothShapes) {
  EXPECT_TESSEL_ERROR(matmul(a23(), a23()), "E2103", "[matmul]", "(2, 3)",
                      "inner");
  EXPECT_TESSEL_ERROR(matmul(full({}, 1.0f), a23()), "E2102", "[matmul]", "()");
  EXPECT_TESSEL_ERROR(matmul(ones({2, 2, 3}), ones({3, 3, 4})), "E2101",
                      "[matmul]", "(2, 2, 3)");
  EXPECT_TESSEL_ERROR(matmul(ones({2}, DType::Bool), ones({2}, DType::Bool)),
                      "E2201", "bool");
}

TEST(Matmul, DotOuterLinear) {
  EXPECT_EQ(dot(arange(3, DType::F32), arange(3, DType::F32)).item<float>(),
            5.0f);
  EXPECT_TESSEL_ERROR(dot(arange(3), arange(4)), "E2103", "[dot]");
  EXPECT_TESSEL_ERROR(dot(a23(), a23()), "E2102", "[dot]", "matmul");
  EXPECT_EQ(values<float>(outer(arange(2, DType::F32), arange(3, DType::F32))),
            (std::vector<float>{0, 0, 0, 0, 1, 2}));
  // linear: x (2, 3) with W (4, 3) = b^T and bias 1.
  const Tensor w = b34().transpose(0, 1).contiguous();
  const Tensor y = linear(a23(), w, ones({4}));
  EXPECT_EQ(values<float>(y),
            (std::vector<float>{21, 24, 27, 30, 57, 69, 81, 93}));
  EXPECT_EQ(linear(a23().reshape({1, 2, 3}), w).shape(), (Shape{1, 2, 4}));
  EXPECT_EQ(
      values<float>(
          linear(a23().to(DType::BF16), w.to(DType::BF16)).to(DType::F32)),
      kAB);
  EXPECT_TESSEL_ERROR(linear(a23(), ones({4, 2})), "E2103", "[linear]",
                      "(4, 2)");
  EXPECT_TESSEL_ERROR(linear(a23(), w, ones({3})), "E2102", "[linear]", "bias");
}

TEST(Einsum, Contractions) {
  EXPECT_EQ(values<float>(einsum("ij,jk->ik", {a23(), b34()})), kAB);
  EXPECT_EQ(values<float>(einsum("ij,jk", {a23(), b34()})), kAB);  // implicit
  EXPECT_EQ(values<float>(einsum("ij,kj->ik", {a23(), b34().transpose(0, 1)})),
            kAB);
  EXPECT_EQ(values<float>(einsum("ij,jk->ki", {a23(), b34()})),
            (std::vector<float>{20, 56, 23, 68, 26, 80, 29, 92}));
  EXPECT_EQ(einsum("i,i->", {arange(3, DType::F32), arange(3, DType::F32)})
                .item<float>(),
            5.0f);
  EXPECT_EQ(
      einsum("i,j->ij", {arange(2, DType::F32), arange(3, DType::F32)}).shape(),
      (Shape{2, 3}));
  EXPECT_EQ(
      values<float>(einsum("ii->i", {arange(9, DType::F32).reshape({3, 3})})),
      (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(einsum("ii", {arange(9, DType::F32).reshape({3, 3})}).item<float>(),
            12.0f);  // trace
  EXPECT_EQ(values<float>(einsum("ij->j", {a23()})),
            (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(values<float>(einsum("ij->ji", {a23()})),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Batched with attention-like labels: bhqd,bhkd->bhqk.
  const Tensor q = randn({2, 3, 4, 5});
  const Tensor k = randn({2, 3, 6, 5});
  const Tensor s = einsum("bhqd,bhkd->bhqk", {q, k});
  const Tensor ref = matmul(q, k.transpose(-1, -2));
  EXPECT_EQ(s.shape(), (Shape{2, 3, 4, 6}));
  EXPECT_LT(max(abs(s - ref)).item<float>(), 1e-5f);
  // Ellipsis broadcast.
  EXPECT_EQ(
      einsum("...ij,...jk->...ik", {ones({7, 2, 3}), ones({3, 4})}).shape(),
      (Shape{7, 2, 4}));
  EXPECT_TESSEL_ERROR(einsum("ij,jk->ik", {a23(), a23()}), "E2103", "[einsum]");
  EXPECT_TESSEL_ERROR(einsum("ij->q", {a23()}), "E2102", "'q'");
  EXPECT_TESSEL_ERROR(einsum("ijk->i", {a23()}), "E2102", "einsum");
}

TEST(Linear, DecodeStepAndSquareShapesMatchF64) {
  // One activation row (the decode path, tessel's GEMV) and larger
  // products (oneDNN's sgemm and matmul primitive), odd sizes for the
  // vector tails, with a bias; f32 sums of 1000 products: rtol 1e-5.
  Generator g(21);
  const Tensor w = randn({77, 1000}, g, DType::F64);
  const Tensor b = randn({77}, g, DType::F64);
  for (std::int64_t m : {1, 3, 1030}) {
    const Tensor x = randn({m, 1000}, g, DType::F64);
    const Tensor ref = linear(x, w, b);
    const Tensor y =
        linear(x.to(DType::F32), w.to(DType::F32), b.to(DType::F32));
    EXPECT_TRUE(allclose(y.to(DType::F64), ref, 1e-5, 1e-4)) << m;
    // 16-bit weights: inputs rounded to 8 (bf16) or 11 (f16) bits, f32
    // accumulation, one rounding of the result.
    for (DType d : {DType::BF16, DType::F16}) {
      const Tensor xd = x.to(d), wd = w.to(d), bd = b.to(d);
      const Tensor want =
          linear(xd.to(DType::F64), wd.to(DType::F64), bd.to(DType::F64));
      const Tensor got = linear(xd, wd, bd);
      EXPECT_EQ(got.dtype(), d);
      const double tol = d == DType::BF16 ? 1.0 / 128 : 1.0 / 1024;
      EXPECT_TRUE(allclose(got.to(DType::F64), want, tol, 1e-2))
          << m << dtype_name(d);
    }
  }
  // Weights viewed with a row stride (a slice of a wider matrix).
  const Tensor wide = randn({77, 1200}, g);
  const Tensor ws = wide.slice(1, 100, 1100);
  const Tensor x = randn({1, 1000}, g);
  EXPECT_TRUE(allclose(linear(x, ws), linear(x, ws.contiguous()), 1e-5, 1e-5));
}

TEST(Linear, SixteenBitWeightsUnderF32ActivationsStayNarrow) {
  // A bf16/f16 checkpoint run in f32: the weights widen exactly, the
  // activations stay f32 (no rounding to 16 bits) and the result is f32,
  // so the reference is the f64 product of the same values (rtol 1e-5 for
  // f32 sums of 1000 products). One row (the GEMV over the stored
  // weights), a few rows and many (tiles widened for sgemm), row-strided
  // weights (a slice) and a bias.
  Generator g(22);
  const Tensor wide = randn({77, 1200}, g);
  const Tensor b = randn({77}, g);
  // An odd first column and an odd length too: the bf16 GEMV reads
  // element pairs as 32-bit lanes, with a scalar tail.
  for (const auto& [d, start] :
       {std::pair{DType::BF16, 100}, std::pair{DType::BF16, 101},
        std::pair{DType::F16, 100}}) {
    const Tensor w = wide.to(d).slice(1, start, 1100);
    for (std::int64_t m : {1, 2, 5, 300}) {
      const Tensor x = randn({m, w.size(1)}, g);
      const Tensor got = linear(x, w, b);
      EXPECT_EQ(got.dtype(), DType::F32);
      const Tensor want =
          linear(x.to(DType::F64), w.to(DType::F64), b.to(DType::F64));
      EXPECT_TRUE(allclose(got.to(DType::F64), want, 1e-5, 1e-4))
          << m << dtype_name(d) << start;
    }
  }
}

TEST(Linear, SixteenBitWeightsAcrossWidenedChunks) {
  // More than one row widens the weights in chunks of about 8 MiB of f32
  // (512 rows at K = 4096), equal and in 64-row panels: 1100 rows are
  // three chunks of 384, 384 and 332, each written densely and copied
  // into its columns. Reference: the f64 product of the same values
  // (f32 sums of 4096 products, rtol 1e-5), on every SIMD target (each
  // widens with its own conversion). Row 3 of the f16 weights is the
  // subnormal 3 x 2^-24, whose products sit far below the tolerance of
  // the others: it is held to its own magnitude, so a conversion that
  // flushed subnormals would fail. A NaN and an infinity in rows of the
  // second chunk reach their columns, and only those.
  Generator g(24);
  const Tensor x = randn({3, 4096}, g);
  for (DType d : {DType::F16, DType::BF16}) {
    Tensor w = randn({1100, 4096}, g).to(d);
    if (d == DType::F16) w.select(0, 3).fill_(3 * std::ldexp(1.0, -24));
    const Tensor want = linear(x.to(DType::F64), w.to(DType::F64));
    const double tiny_bound =
        1e-5 * sum(abs(x)).item<double>() * 3 * std::ldexp(1.0, -24);
    for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
      hwy::SetSupportedTargetsForTest(target);
      SCOPED_TRACE(::testing::Message()
                   << dtype_name(d) << " on " << hwy::TargetName(target));
      const Tensor got = linear(x, w).to(DType::F64);
      EXPECT_TRUE(allclose(got, want, 1e-5, 1e-3));
      for (std::int64_t i = 0; d == DType::F16 && i < 3; ++i) {
        EXPECT_NEAR(got.select(0, i).select(0, 3).item<double>(),
                    want.select(0, i).select(0, 3).item<double>(), tiny_bound);
      }
    }
    hwy::SetSupportedTargetsForTest(0);
    w.select(0, 400).fill_(std::nan(""));
    w.select(0, 700).select(0, 9).fill_(INFINITY);
    const Tensor odd = linear(abs(x), w).contiguous();
    for (std::int64_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(std::isnan(odd.select(0, i).select(0, 400).item<float>()));
      EXPECT_EQ(odd.select(0, i).select(0, 700).item<float>(), INFINITY);
      EXPECT_TRUE(std::isfinite(odd.select(0, i).select(0, 699).item<float>()));
      EXPECT_TRUE(std::isfinite(odd.select(0, i).select(0, 701).item<float>()));
    }
  }
  // No columns, no rows or an empty reduction.
  EXPECT_EQ(linear(randn({3, 64}), randn({0, 64}).to(DType::F16)).shape(),
            (Shape{3, 0}));
  EXPECT_EQ(linear(randn({0, 64}), randn({5, 64}).to(DType::F16)).shape(),
            (Shape{0, 5}));
  const Tensor none = linear(randn({3, 0}), randn({5, 0}).to(DType::F16));
  EXPECT_EQ(none.shape(), (Shape{3, 5}));
  EXPECT_EQ(max(abs(none)).item<float>(), 0.0f);
}

TEST(Linear, Bf16MatmulPrecisionRoundsTheActivationsOfBf16Weights) {
  // By hand: 1 + 2^-10 is not a bf16 (8 significant bits); it rounds to
  // 1. Against 64 weights of 1 the f32 product is 64.0625, the bf16 one
  // 64. One row takes the GEMV, three oneDNN's bf16 GEMM (where the CPU
  // has one; elsewhere the widened tiles), and both must round.
  const Tensor ones = full({2, 64}, 1.0).to(DType::BF16);
  for (std::int64_t m : {1, 3}) {
    const Tensor x = full({m, 64}, 1.0 + 1.0 / 1024);
    EXPECT_EQ(max(linear(x, ones)).item<double>(), 64.0625);
    {
      const MatmulPrecisionGuard guard(MatmulPrecision::BF16);
      const Tensor y = linear(x, ones);
      EXPECT_EQ(y.dtype(), DType::F32);
      EXPECT_EQ(max(y).item<double>(), 64.0) << m;
      EXPECT_EQ(min(y).item<double>(), 64.0) << m;
      // f32 and f16 weights keep the exact product.
      EXPECT_EQ(max(linear(x, ones.to(DType::F32))).item<float>(), 64.0625f);
      EXPECT_EQ(max(linear(x, ones.to(DType::F16))).item<float>(), 64.0625f);
    }
    EXPECT_EQ(matmul_precision(), MatmulPrecision::F32);
  }
  // Random values: the f64 product of the rounded activations within f32
  // accumulation's rtol, rows and bias as in the test above, every row
  // count through the same rounding (a prompt row equals its decode step).
  Generator g(23);
  const Tensor w = randn({77, 999}, g).to(DType::BF16);
  const Tensor b = randn({77}, g);
  const Tensor x = randn({300, 999}, g);
  const MatmulPrecisionGuard guard(MatmulPrecision::BF16);
  const Tensor want = linear(x.to(DType::BF16).to(DType::F64), w.to(DType::F64),
                             b.to(DType::F64));
  for (std::int64_t m : {1, 2, 5, 300}) {
    const Tensor got = linear(x.slice(0, 0, m), w, b);
    EXPECT_TRUE(allclose(got.to(DType::F64), want.slice(0, 0, m), 1e-5, 1e-4))
        << m;
  }
  EXPECT_EQ(parse_matmul_precision("bf16"), MatmulPrecision::BF16);
  EXPECT_EQ(matmul_precision_name(MatmulPrecision::F32), "f32");
  EXPECT_THROW(parse_matmul_precision("tf32"), DTypeError);
}

TEST(Linear, SharedInputEqualsOneLinearEach) {
  // linear_shared quantises x once per kind of activation blocks and runs
  // every weight's rows in one pass: the results must be those of one
  // linear per weight, bit for bit. The weights take every kind (Q4_0's
  // quads, Q8_0's blocks, Q4_K/Q5_K's groups, Q6_K's Q8_K, IQ4_XS's Q8_K
  // with lanes), two share one, some have biases; one row (every weight
  // shares), two rows (Q4_0 and Q8_0 leave the dot kernels: one linear each),
  // six and forty rows (every weight's packed GEMM tiles in one pass, the
  // two Q4_K weights on one prepared x; at forty the 256-bit kernel takes
  // two tiles at once, but for IQ4_XS), an f32 weight among them, on every
  // SIMD target.
  Generator g(31);
  std::vector<Tensor> w, b;
  const std::pair<DType, std::int64_t> weights[] = {
      {DType::Q4_0, 70}, {DType::Q8_0, 33}, {DType::Q4_K, 40},
      {DType::Q5_K, 24}, {DType::Q6_K, 72}, {DType::IQ4_XS, 19},
      {DType::Q4_K, 130}};
  for (const auto& [d, n] : weights) {
    w.push_back(randn({n, 512}, g).to(d));
    b.push_back(w.size() % 2 == 0 ? randn({n}, g) : Tensor());
  }
  const auto check = [&](const Tensor& x, const std::vector<Tensor>& ws,
                         const std::vector<Tensor>& bs) {
    const std::vector<Tensor> got = linear_shared(x, ws, bs);
    ASSERT_EQ(got.size(), ws.size());
    for (std::size_t i = 0; i < ws.size(); ++i) {
      SCOPED_TRACE(::testing::Message()
                   << "weight " << i << " " << dtype_name(ws[i].dtype()));
      const Tensor want = linear(x, ws[i], bs.empty() ? Tensor() : bs[i]);
      ASSERT_EQ(got[i].shape(), want.shape());
      EXPECT_EQ(values<float>(got[i]), values<float>(want));
    }
  };
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    for (const Shape& shape : {Shape{512}, Shape{1, 1, 512}, Shape{1, 2, 512},
                               Shape{2, 3, 512}, Shape{2, 20, 512}}) {
      SCOPED_TRACE(shape_string(shape));
      const Tensor x = randn(shape, g);
      check(x, w, b);
      check(x, {w[2], w[4]}, {});
      check(x, {w[0], randn({5, 512}, g), w[6]},
            {randn({70}, g), randn({5}, g), b[6]});
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  const Tensor x = randn({1, 512}, g);
  EXPECT_TRUE(linear_shared(x, {}).empty());
  EXPECT_TESSEL_ERROR(linear_shared(x, w, {b[0]}), "E2102", "1 biases",
                      "7 weights");
  EXPECT_TESSEL_ERROR(
      linear_shared(x, {w[0], randn({4, 256}, g).to(DType::Q8_0)}), "E2103");
}

}  // namespace
}  // namespace tessel

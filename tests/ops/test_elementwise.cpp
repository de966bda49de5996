// Hand-worked element-wise cases: values, dtypes, broadcasting, in-place
// and out= forms, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::values;

TEST(Elementwise, ArithmeticWithBroadcasting) {
  // [[1, 2, 3], [4, 5, 6]] + [10, 20, 30] = [[11, 22, 33], [14, 25, 36]]
  const Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = from_vector<float>({10, 20, 30}, {3});
  EXPECT_EQ(values<float>(a + b), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // Column broadcast: [[1], [2]] * [[1, 2, 3]] = [[1, 2, 3], [2, 4, 6]]
  const Tensor col = from_vector<float>({1, 2}, {2, 1});
  const Tensor row = from_vector<float>({1, 2, 3}, {1, 3});
  const Tensor outer = col * row;
  EXPECT_EQ(outer.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(outer), (std::vector<float>{1, 2, 3, 2, 4, 6}));
  EXPECT_EQ(values<float>(a - 1.0), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values<float>(12.0 / a),
            (std::vector<float>{12, 6, 4, 3, 2.4f, 2}));
  EXPECT_EQ(values<float>(-a), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
}

TEST(Elementwise, NonContiguousAndStrideZeroInputs) {
  const Tensor base = arange(12, DType::F32).reshape({3, 4});
  const Tensor t = base.transpose(0, 1);    // (4, 3), strides (1, 4)
  const Tensor s = base.slice(1, 0, 4, 2);  // columns 0 and 2
  // t[i, j] = 4j + i; t + t = 2t.
  const Tensor twice = t + t;
  EXPECT_EQ(twice.at<float>({3, 2}), 22.0f);
  const Tensor e = s + full({}, 1.0f).expand({3, 2});
  EXPECT_EQ(values<float>(e), (std::vector<float>{1, 3, 5, 7, 9, 11}));
}

TEST(Elementwise, PromotionOfResultDTypes) {
  const Tensor i8 = from_vector<std::int8_t>({100, -100}, {2});
  const Tensor sum = i8 + i8;  // i8 with i8 widens to i16: no wrap
  EXPECT_EQ(sum.dtype(), DType::I16);
  EXPECT_EQ(values<std::int16_t>(sum), (std::vector<std::int16_t>{200, -200}));
  EXPECT_EQ((i8 + 1).dtype(), DType::I8);  // a scalar never widens
  EXPECT_EQ((i8 + 1.5).dtype(), DType::F32);
  EXPECT_EQ((ones({2}, DType::BF16) + ones({2}, DType::F16)).dtype(),
            DType::F32);
  EXPECT_EQ((ones({2}, DType::I64) * ones({2}, DType::F16)).dtype(),
            DType::F16);
  EXPECT_EQ((ones({2}, DType::U8) + ones({2}, DType::I8)).dtype(), DType::I16);
  EXPECT_EQ(div(arange(4), 2).dtype(), DType::F32);  // true division
  EXPECT_EQ(values<float>(div(arange(4), 2)),
            (std::vector<float>{0, 0.5f, 1, 1.5f}));
  EXPECT_EQ(exp(arange(2)).dtype(), DType::F32);
  EXPECT_EQ(abs(arange(2)).dtype(), DType::I64);
  EXPECT_EQ((arange(3) > 1).dtype(), DType::Bool);
  EXPECT_EQ((full({2}, true) + 1).dtype(), DType::I64);
}

TEST(Elementwise, UnaryValues) {
  const Tensor x =
      from_vector<float>({-2.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f}, {6});
  EXPECT_EQ(values<float>(abs(x)),
            (std::vector<float>{2.5f, 0.5f, 0, 0.5f, 1.5f, 2.5f}));
  // Half to even: -2.5 -> -2, -0.5 -> -0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
  EXPECT_EQ(values<float>(round(x)),
            (std::vector<float>{-2, -0.0f, 0, 0, 2, 2}));
  EXPECT_EQ(values<float>(floor(x)), (std::vector<float>{-3, -1, 0, 0, 1, 2}));
  EXPECT_EQ(values<float>(ceil(x)),
            (std::vector<float>{-2, -0.0f, 0, 1, 2, 3}));
  EXPECT_EQ(values<float>(trunc(x)),
            (std::vector<float>{-2, -0.0f, 0, 0, 1, 2}));
  EXPECT_EQ(values<float>(sign(x)), (std::vector<float>{-1, -1, 0, 1, 1, 1}));
  EXPECT_EQ(values<float>(relu(x)),
            (std::vector<float>{0, 0, 0, 0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(values<float>(leaky_relu(x, 0.1)),
            (std::vector<float>{-0.25f, -0.05f, 0, 0.5f, 1.5f, 2.5f}));
  EXPECT_FLOAT_EQ(sigmoid(full({}, 0.0f)).item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(tanh(full({}, 0.5f)).item<float>(), 0.46211716f);
  EXPECT_FLOAT_EQ(exp(full({}, 1.0f)).item<float>(), 2.7182817f);
  EXPECT_FLOAT_EQ(log(full({}, 10.0f)).item<float>(), 2.3025851f);
  EXPECT_FLOAT_EQ(log2(full({}, 8.0f)).item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(erf(full({}, 0.5f)).item<float>(), 0.52049988f);
  // gelu(1) = Phi(1) = 0.8413447; tanh form 0.8411920.
  EXPECT_FLOAT_EQ(gelu(full({}, 1.0f)).item<float>(), 0.84134475f);
  EXPECT_FLOAT_EQ(gelu(full({}, 1.0f), GeluApproximation::Tanh).item<float>(),
                  0.84119201f);
  EXPECT_FLOAT_EQ(silu(full({}, 1.0f)).item<float>(), 0.7310586f);
  EXPECT_FLOAT_EQ(softplus(full({}, 0.0f)).item<float>(), 0.6931472f);
  EXPECT_EQ(softplus(full({}, 30.0f)).item<float>(),
            30.0f);  // beyond threshold
  EXPECT_FLOAT_EQ(elu(full({}, -1.0f)).item<float>(), -0.63212055f);
  EXPECT_FLOAT_EQ(selu(full({}, -1.0f)).item<float>(), -1.1113307f);
  EXPECT_FLOAT_EQ(selu(full({}, 2.0f)).item<float>(), 2.101402f);
  EXPECT_FLOAT_EQ(rsqrt(full({}, 4.0f)).item<float>(), 0.5f);
  EXPECT_FLOAT_EQ(expm1(full({}, 1e-10f)).item<float>(), 1e-10f);
  EXPECT_FLOAT_EQ(log1p(full({}, 1e-10f)).item<float>(), 1e-10f);
}

TEST(Elementwise, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = from_vector<float>({nan, inf, -inf, 0.0f, -1.0f}, {5});
  const auto lg = values<float>(log(x));
  EXPECT_TRUE(std::isnan(lg[0]));
  EXPECT_EQ(lg[1], inf);
  EXPECT_TRUE(std::isnan(lg[2]));
  EXPECT_EQ(lg[3], -inf);
  EXPECT_TRUE(std::isnan(lg[4]));
  const auto ex = values<float>(exp(x));
  EXPECT_TRUE(std::isnan(ex[0]));
  EXPECT_EQ(ex[1], inf);
  EXPECT_EQ(ex[2], 0.0f);
  EXPECT_TRUE(std::isnan(values<float>(relu(x))[0]));
  EXPECT_TRUE(std::isnan(values<float>(sign(x))[0]));
  EXPECT_EQ(values<bool>(isnan(x)),
            (std::vector<bool>{true, false, false, false, false}));
  EXPECT_EQ(values<bool>(isinf(x)),
            (std::vector<bool>{false, true, true, false, false}));
  EXPECT_EQ(values<bool>(isfinite(x)),
            (std::vector<bool>{false, false, false, true, true}));
  EXPECT_EQ(values<bool>(isnan(arange(2))), (std::vector<bool>{false, false}));
  // maximum and minimum propagate NaN (NumPy, not fmax).
  EXPECT_TRUE(std::isnan(maximum(x, 0.0).at<float>({0})));
  EXPECT_TRUE(std::isnan(minimum(0.0, x).at<float>({0})));
  EXPECT_EQ(maximum(x, 0.0).at<float>({2}), 0.0f);
}

TEST(Elementwise, IntegerDivisionFollowsPython) {
  const Tensor a = from_vector<std::int32_t>(
      {7, -7, 7, -7, 5, std::numeric_limits<std::int32_t>::min()}, {6});
  const Tensor b = from_vector<std::int32_t>({2, 2, -2, -2, 0, -1}, {6});
  // 7 // 2 = 3, -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3, x // 0 = 0
  // (NumPy), MIN // -1 wraps to MIN.
  EXPECT_EQ(values<std::int32_t>(floor_divide(a, b)),
            (std::vector<std::int32_t>{
                3, -4, -4, 3, 0, std::numeric_limits<std::int32_t>::min()}));
  // The remainder takes the divisor's sign: 1, 1, -1, -1, 0, 0.
  EXPECT_EQ(values<std::int32_t>(remainder(a, b)),
            (std::vector<std::int32_t>{1, 1, -1, -1, 0, 0}));
  const Tensor fa = from_vector<float>({7.5f, -7.5f}, {2});
  EXPECT_EQ(values<float>(floor_divide(fa, 2.0)), (std::vector<float>{3, -4}));
  EXPECT_EQ(values<float>(remainder(fa, 2.0)),
            (std::vector<float>{1.5f, 0.5f}));
}

TEST(Elementwise, IntegerPowerWrapsAndTruncates) {
  const Tensor base = from_vector<std::int64_t>({2, 3, -2, 2, 1, -1}, {6});
  const Tensor e = from_vector<std::int64_t>({10, 3, 3, -1, -5, -3}, {6});
  EXPECT_EQ(values<std::int64_t>(pow(base, e)),
            (std::vector<std::int64_t>{1024, 27, -8, 0, 1, -1}));
  EXPECT_EQ(pow(full({}, 2, DType::I8), full({}, 9, DType::I8)).item<int>(),
            512);  // i16
  EXPECT_FLOAT_EQ(pow(full({}, 2.0f), 0.5).item<float>(), 1.4142135f);
}

// The array API's rows, by hand: shifts at and past the width, the
// two-argument float functions at their edges.
TEST(Elementwise, ShiftsPastTheWidthFollowNumPy) {
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  const Tensor a =
      from_vector<std::int32_t>({1, kMin, -1, 1 << 30, 5, -7}, {6});
  const Tensor c = from_vector<std::int32_t>({31, 1, 3, 1, 32, 40}, {6});
  // 1 << 31 wraps to MIN; MIN << 1 to 0; -1 << 3 = -8; counts >= 32 give 0.
  EXPECT_EQ(values<std::int32_t>(bitwise_left_shift(a, c)),
            (std::vector<std::int32_t>{kMin, 0, -8, kMin, 0, 0}));
  // Arithmetic right shifts; counts >= 32 leave the sign: 0 or -1.
  EXPECT_EQ(values<std::int32_t>(bitwise_right_shift(a, c)),
            (std::vector<std::int32_t>{0, -(1 << 30), -1, 1 << 29, 0, -1}));
  // i8 with i8 computes in i16 (DESIGN §1): 1 << 7 is 128 there.
  EXPECT_EQ(bitwise_left_shift(full({}, 1, DType::I8), full({}, 7, DType::I8))
                .item<int>(),
            128);
  const Tensor u = from_vector<std::uint32_t>({0x80000000u, 3}, {2});
  const Tensor uc = from_vector<std::uint32_t>({31, 32}, {2});
  EXPECT_EQ(values<std::uint32_t>(bitwise_right_shift(u, uc)),
            (std::vector<std::uint32_t>{1, 0}));
  EXPECT_TESSEL_ERROR(
      bitwise_left_shift(ones({2}, DType::Bool), ones({2}, DType::Bool)),
      "E2201", "[bitwise_left_shift]", "integer");
  EXPECT_TESSEL_ERROR(bitwise_right_shift(ones({2}), ones({2})), "E2201",
                      "[bitwise_right_shift]");
}

TEST(Elementwise, TwoArgumentFloatFunctions) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor y = from_vector<double>({1, -1, 0, -0.0, 3}, {5});
  const Tensor x = from_vector<double>({1, -1, -1, -1, 4}, {5});
  const auto angles = values<double>(atan2(y, x));
  EXPECT_DOUBLE_EQ(angles[0], M_PI / 4);
  EXPECT_DOUBLE_EQ(angles[1], -3 * M_PI / 4);
  EXPECT_DOUBLE_EQ(angles[2], M_PI);   // +0 from the left: pi
  EXPECT_DOUBLE_EQ(angles[3], -M_PI);  // -0 from the left: -pi
  EXPECT_DOUBLE_EQ(values<double>(hypot(y, x))[4], 5.0);
  EXPECT_EQ(values<double>(
                hypot(full({}, inf, DType::F64), full({}, NAN, DType::F64)))[0],
            inf);  // C's hypot: inf beats NaN
  // copysign moves the sign bit, -0 included.
  const auto signs = values<double>(copysign(
      full({3}, 2.0, DType::F64), from_vector<double>({-0.0, 0.0, -5}, {3})));
  EXPECT_EQ(signs, (std::vector<double>{-2, 2, -2}));
  // logaddexp: log(e + e) = 1 + log 2; -inf with -inf; huge without overflow.
  const Tensor la = from_vector<double>({1, -inf, 1000, 0}, {4});
  const Tensor lb = from_vector<double>({1, -inf, 1000, -inf}, {4});
  const auto l = values<double>(logaddexp(la, lb));
  EXPECT_DOUBLE_EQ(l[0], 1 + std::log(2.0));
  EXPECT_EQ(l[1], -inf);
  EXPECT_DOUBLE_EQ(l[2], 1000 + std::log(2.0));
  EXPECT_EQ(l[3], 0.0);
  // nextafter steps one float32 ulp; narrow floats are refused.
  EXPECT_EQ(nextafter(full({}, 1.0f), full({}, 2.0f)).item<float>(),
            1.0f + std::numeric_limits<float>::epsilon());
  EXPECT_EQ(nextafter(full({}, 0.0, DType::F64), full({}, -1.0, DType::F64))
                .item<double>(),
            -std::numeric_limits<double>::denorm_min());
  EXPECT_TESSEL_ERROR(nextafter(ones({1}, DType::F16), ones({1}, DType::F16)),
                      "E2201", "[nextafter]", "f16");
}

TEST(Elementwise, SquareSignbitAndInverseFunctions) {
  EXPECT_EQ(
      values<std::int8_t>(square(from_vector<std::int8_t>({-3, 12}, {2}))),
      (std::vector<std::int8_t>{9, -112}));  // 144 wraps in i8
  EXPECT_EQ(square(full({}, 1.5f)).dtype(), DType::F32);
  EXPECT_EQ(values<bool>(
                signbit(from_vector<float>({-0.0f, 0.0f, -NAN, -1, 2}, {5}))),
            (std::vector<bool>{true, false, true, true, false}));
  EXPECT_EQ(values<bool>(signbit(from_vector<std::int32_t>({-1, 0, 5}, {3}))),
            (std::vector<bool>{true, false, false}));
  EXPECT_DOUBLE_EQ(asin(full({}, 1.0, DType::F64)).item<double>(), M_PI / 2);
  EXPECT_DOUBLE_EQ(acos(full({}, -1.0, DType::F64)).item<double>(), M_PI);
  EXPECT_DOUBLE_EQ(log10(full({}, 1000.0, DType::F64)).item<double>(), 3.0);
  EXPECT_TRUE(std::isnan(acosh(full({}, 0.5f)).item<float>()));
  EXPECT_EQ(atanh(full({}, 1.0f)).item<float>(),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(tan(full({}, 2, DType::I32)).dtype(), DType::F32);  // ints: f32
}

TEST(Elementwise, ComparisonsAndLogic) {
  const Tensor a = from_vector<float>({1, 2, 3}, {3});
  const Tensor b = from_vector<float>({3, 2, 1}, {3});
  EXPECT_EQ(values<bool>(a < b), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(a <= b), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(values<bool>(a == b), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(values<bool>(a != 2), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<bool>(a >= 2), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values<bool>(logical_and(a > 1, b > 1)),
            (std::vector<bool>{false, true, false}));
  EXPECT_EQ(values<bool>(logical_or(a > 2, b > 2)),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(values<bool>(logical_xor(a, a - 1)),
            (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(!(a > 1)), (std::vector<bool>{true, false, false}));
  const Tensor i = from_vector<std::uint8_t>({0b1100, 0b1010}, {2});
  EXPECT_EQ(values<std::uint8_t>(i & full({}, 0b0110, DType::U8)),
            (std::vector<std::uint8_t>{0b0100, 0b0010}));
  EXPECT_EQ(values<std::uint8_t>(~i), (std::vector<std::uint8_t>{0xF3, 0xF5}));
  EXPECT_EQ(values<bool>(~(a > 1)), (std::vector<bool>{true, false, false}));
}

TEST(Elementwise, WhereAndFma) {
  const Tensor c = from_vector(std::vector<bool>{true, false, true});
  const Tensor w = where(c, arange(3), full({}, -1.0f));
  EXPECT_EQ(w.dtype(), DType::F32);
  EXPECT_EQ(values<float>(w), (std::vector<float>{0, -1, 2}));
  // A non-bool condition is read as "non-zero".
  EXPECT_EQ(values<std::int64_t>(where(arange(3), 1, 0)),
            (std::vector<std::int64_t>{0, 1, 1}));
  // (2, 1) x (3,) condition broadcast.
  EXPECT_EQ(where(ones({2, 1}, DType::Bool), zeros({3}), ones({3})).shape(),
            (Shape{2, 3}));
  // fma rounds once: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly.
  const float e = 1.0f + 0x1p-12f;
  EXPECT_EQ(
      fma(full({}, e), full({}, e), full({}, -(1.0f + 0x1p-11f))).item<float>(),
      0x1p-24f);
}

TEST(Elementwise, Clip) {
  const Tensor x = from_vector<float>({-2, 0, 2, NAN}, {4});
  const auto c = values<float>(clip(x, -1.0, 1.0));
  EXPECT_EQ(c[0], -1.0f);
  EXPECT_EQ(c[2], 1.0f);
  EXPECT_TRUE(std::isnan(c[3]));
  EXPECT_EQ(values<float>(clip(x.slice(0, 0, 3), std::nullopt, 0.5)),
            (std::vector<float>{-2, 0, 0.5f}));
  EXPECT_EQ(clip(arange(5), 1, 3).dtype(), DType::I64);
}

TEST(Elementwise, InPlaceAndOutForms) {
  Tensor t = arange(4, DType::F32);
  Tensor alias = t;
  t += 1.0;
  EXPECT_EQ(values<float>(alias),
            (std::vector<float>{1, 2, 3, 4}));  // same storage
  t *= from_vector<float>({2, 2, 2, 2}, {4});
  EXPECT_EQ(values<float>(t), (std::vector<float>{2, 4, 6, 8}));
  exp_(t.slice(0, 0, 1));
  EXPECT_FLOAT_EQ(t.at<float>({0}), 7.3890561f);
  Tensor out = empty({4});
  add_out(out, t, t);
  EXPECT_EQ(out.at<float>({3}), 16.0f);
  // An integer tensor cannot hold a float result in place (PyTorch's rule).
  Tensor i = arange(3);
  EXPECT_TESSEL_ERROR(div_(i, 2), "E2201", "[div]", "f32", "i64");
  i += 2;  // an int result is fine
  EXPECT_EQ(i.at<std::int64_t>({2}), 4);
  // f64 result stored into an f32 tensor: cast on store.
  Tensor f = ones({2});
  f += ones({2}, DType::F64);
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.at<float>({1}), 2.0f);
}

TEST(Elementwise, InPlaceRefusesBroadcastOutputs) {
  Tensor small = ones({3});
  EXPECT_TESSEL_ERROR(add_(small, ones({2, 3})), "E2102", "(3,)", "(2, 3)");
  Tensor expanded = ones({1, 3}).expand({2, 3});
  EXPECT_TESSEL_ERROR(add_(expanded, ones({2, 3})), "E2102", "memory location");
  Tensor out = empty({2});
  EXPECT_TESSEL_ERROR(exp_out(out, ones({3})), "E2102", "(2,)", "(3,)");
}

TEST(Elementwise, OverlappingOutputIsReadFirst) {
  Tensor t = arange(5, DType::F32);
  Tensor dst = t.slice(0, 1, 5);
  add_out(dst, t.slice(0, 0, 4), t.slice(0, 0, 4));  // shifted, overlapping
  EXPECT_EQ(values<float>(t), (std::vector<float>{0, 0, 2, 4, 6}));
}

TEST(Elementwise, ZeroSizeAndScalars) {
  EXPECT_EQ((zeros({0, 3}) + ones({3})).shape(), (Shape{0, 3}));
  EXPECT_EQ(exp(zeros({0})).numel(), 0);
  EXPECT_EQ((full({}, 2.0f) * full({}, 3.0f)).item<float>(), 6.0f);
  EXPECT_EQ((full({}, 2.0f) * full({}, 3.0f)).rank(), 0);
}

TEST(Elementwise, NarrowFloatsComputeInF32) {
  // bf16 1 + bf16 2^-8 = 1 + 2^-8 exactly in f32, a tie that rounds to even 1.
  const Tensor one = full({}, 1.0f, DType::BF16);
  const Tensor tiny = full({}, 0x1p-8f, DType::BF16);
  EXPECT_EQ((one + tiny).at<BFloat16>({}).bits, 0x3F80);
  EXPECT_EQ((one + tiny + tiny).dtype(), DType::BF16);
  const Tensor e4 = full({3}, 2.0f, DType::F8E4M3FN);
  EXPECT_EQ((e4 * e4).at<Float8E4M3FN>({0}).bits, Float8E4M3FN(4.0f).bits);
  EXPECT_EQ(exp(full({}, 0.0f, DType::F16)).item<float>(), 1.0f);
}

TEST(Elementwise, PackedOperandsComputeInF32) {
  const Tensor q = arange(4, DType::I4);
  EXPECT_EQ((q + q).dtype(), DType::F32);
  EXPECT_EQ(values<float>(q * 2), (std::vector<float>{0, 2, 4, 6}));
  EXPECT_EQ(neg(q).dtype(), DType::F32);
}

TEST(Elementwise, BadInputIsRefused) {
  EXPECT_TESSEL_ERROR(ones({2, 3}) + ones({4}), "E2101", "[add]", "(2, 3)",
                      "(4,)");
  EXPECT_TESSEL_ERROR(-ones({2}, DType::Bool), "E2201", "[neg]", "bool",
                      "logical_not");
  EXPECT_TESSEL_ERROR(ones({2}, DType::Bool) - ones({2}, DType::Bool), "E2201",
                      "[sub]", "logical_xor");
  EXPECT_TESSEL_ERROR(bitwise_and(ones({2}), ones({2})), "E2201",
                      "[bitwise_and]", "f32");
  EXPECT_TESSEL_ERROR(bitwise_not(ones({2})), "E2201", "[bitwise_not]");
  EXPECT_TESSEL_ERROR(ones({2}, DType::U64) + ones({2}, DType::I32), "E2201",
                      "[add]", "u64", "i32");
  EXPECT_TESSEL_ERROR(where(ones({2}, DType::Bool), ones({3}), ones({4})),
                      "E2101", "[where]", "(3,)", "(4,)");
  EXPECT_TESSEL_ERROR(Tensor() + ones({1}), "E2102", "undefined");
  EXPECT_TESSEL_ERROR(softplus(ones({1}), 0.0), "E2102", "beta");
}

// DESIGN §1 rule 4: a block-quantised operand computes as f32.
TEST(Elementwise, BlockQuantisedOperandsComputeInF32) {
  const Tensor y = exp(zeros({32}, DType::Q4_0));
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_TRUE(equal(y, ones({32})));
  EXPECT_TRUE(
      equal(add(zeros({2, 32}, DType::Q8_0), ones({32})), ones({2, 32})));
}

}  // namespace
}  // namespace tessel

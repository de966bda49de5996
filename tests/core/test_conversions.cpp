// Hand-worked conversion cases. The exhaustive comparison with NumPy and
// ml_dtypes is tests/oracle/test_casts.py.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "tessel/core/convert.hpp"
#include "tessel/tessel.hpp"

namespace tessel {
namespace {

std::uint16_t f16(float x, bool sat = false) {
  return fp::f16_from_f32(x, sat);
}
std::uint16_t bf16(float x, bool sat = false) {
  return fp::bf16_from_f32(x, sat);
}
std::uint8_t e4m3(double x, bool sat = false) {
  return fp::f8_from_f64<fp::kF8E4M3FN>(x, sat);
}
std::uint8_t e5m2(double x, bool sat = false) {
  return fp::f8_from_f64<fp::kF8E5M2>(x, sat);
}
float bits_f32(std::uint32_t b) { return std::bit_cast<float>(b); }

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(f16(1.0f), 0x3C00);
  // 1 + 2^-11 lies halfway between 1 (even) and 1 + 2^-10: stays at 1.
  EXPECT_EQ(f16(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3*2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even).
  EXPECT_EQ(f16(1.0f + 0x3p-11f), 0x3C02);
  // Just above a tie rounds up.
  EXPECT_EQ(f16(std::nextafter(1.0f + 0x1p-11f, 2.0f)), 0x3C01);
}

TEST(Float16, SubnormalsAndUnderflow) {
  EXPECT_EQ(f16(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(f16(0x1p-25f), 0x0000);  // halfway to 0: ties to even 0
  EXPECT_EQ(f16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(f16(0x3p-25f), 0x0002);  // 1.5 units: ties to even 2
  EXPECT_EQ(f16(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(f16(-0.0f), 0x8000);
  EXPECT_EQ(f16(0x1p-30f), 0x0000);
}

TEST(Float16, OverflowInfNaN) {
  EXPECT_EQ(f16(65504.0f), 0x7BFF);  // max finite
  EXPECT_EQ(f16(65519.0f), 0x7BFF);  // below the halfway point
  EXPECT_EQ(f16(65520.0f), 0x7C00);  // halfway: rounds to even = Inf
  EXPECT_EQ(f16(1e6f), 0x7C00);
  EXPECT_EQ(f16(-1e6f), 0xFC00);
  EXPECT_EQ(f16(1e6f, true), 0x7BFF);  // saturating
  EXPECT_EQ(f16(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(f16(std::numeric_limits<float>::quiet_NaN()), 0x7E00);
  // NumPy keeps the top payload bits and never turns a NaN into Inf.
  EXPECT_EQ(f16(bits_f32(0x7F800001u)), 0x7C01);
  EXPECT_EQ(f16(bits_f32(0xFFA00000u)), 0xFD00);
}

TEST(Float16, DecodesExactly) {
  EXPECT_EQ(fp::f16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp::f16_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(fp::f16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(fp::f16_to_f32(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::bit_cast<std::uint32_t>(fp::f16_to_f32(0x7C01)), 0x7F802000u);
  EXPECT_EQ(fp::f16_to_f64(0x7BFF), 65504.0);
}

TEST(Float16, FromF64RoundsOnce) {
  // 1 + 2^-11 + 2^-40 is above the tie; going through f32 would lose the
  // 2^-40 and round down. Correct single rounding goes up.
  EXPECT_EQ(fp::f16_from_f64(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
  EXPECT_EQ(fp::f16_from_f64(1.0 + 0x1p-11), 0x3C00);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16(1.0f + 0x1p-8f), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16(1.0f + 0x3p-8f), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(bf16(-3.0f), 0xC040);
  EXPECT_EQ(bf16(0x1p-133f), 0x0001);  // smallest bf16 subnormal
}

TEST(BFloat16, OverflowAndNaN) {
  const float max = std::numeric_limits<float>::max();
  EXPECT_EQ(bf16(max), 0x7F80);  // rounds past the largest bf16 to Inf
  EXPECT_EQ(bf16(max, true), 0x7F7F);
  EXPECT_EQ(bf16(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(bf16(bits_f32(0xFF800001u)), 0xFFC0);  // canonical, sign kept
  EXPECT_EQ(fp::bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(fp::bf16_to_f32(0xC2F7), -123.5f);
}

TEST(BFloat16, FromF64RoundsOnce) {
  // Halfway (1 + 2^-8) plus 2^-30: above the tie, so up to 1 + 2^-7.
  // (ml_dtypes rounds through f32 and returns 0x3F80; see docs/dtypes.md.)
  EXPECT_EQ(fp::bf16_from_f64(1.0 + 0x1p-8 + 0x1p-30), 0x3F81);
}

TEST(Float8E4M3FN, Encoding) {
  EXPECT_EQ(e4m3(1.0), 0x38);    // exponent 7 (bias 7), mantissa 0
  EXPECT_EQ(e4m3(448.0), 0x7E);  // largest finite: 1.75 * 2^8
  EXPECT_EQ(e4m3(464.0), 0x7E);  // halfway to 480: ties to even mantissa 110
  EXPECT_EQ(e4m3(465.0), 0x7F);  // beyond: NaN (no Inf in this format)
  EXPECT_EQ(e4m3(-1e6), 0xFF);
  EXPECT_EQ(e4m3(1e6, true), 0x7E);  // saturating
  EXPECT_EQ(e4m3(-INFINITY), 0xFF);
  EXPECT_EQ(e4m3(-INFINITY, true), 0xFE);
  EXPECT_EQ(e4m3(NAN), 0x7F);
  EXPECT_EQ(e4m3(0x1p-9), 0x01);   // smallest subnormal
  EXPECT_EQ(e4m3(0x1p-10), 0x00);  // halfway: ties to even 0
  EXPECT_EQ(e4m3(0x3p-10), 0x02);  // 1.5 units: ties to even 2
  EXPECT_EQ(e4m3(0x1p-6), 0x08);   // smallest normal
  // 1 + 2^-4 + 2^-40 from f64 rounds once, up (ml_dtypes: 0x38).
  EXPECT_EQ(e4m3(1.0 + 0x1p-4 + 0x1p-40), 0x39);
}

TEST(Float8E4M3FN, Decoding) {
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E4M3FN>(0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(fp::decode_to_f32<fp::kF8E4M3FN>(0x7F)));
  EXPECT_TRUE(std::isnan(fp::decode_to_f32<fp::kF8E4M3FN>(0xFF)));
  // Exponent all ones with mantissa < 111 is an ordinary number here.
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E4M3FN>(0x78), 256.0f);
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E4M3FN>(0x01), 0x1p-9f);
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E4M3FN>(0xB8), -1.0f);
}

TEST(Float8E5M2, EncodingAndDecoding) {
  EXPECT_EQ(e5m2(1.0), 0x3C);
  EXPECT_EQ(e5m2(57344.0), 0x7B);  // largest finite: 1.75 * 2^15
  EXPECT_EQ(e5m2(61439.0), 0x7B);
  EXPECT_EQ(e5m2(61440.0), 0x7C);  // halfway to 2^16: even = Inf
  EXPECT_EQ(e5m2(61440.0, true), 0x7B);
  EXPECT_EQ(e5m2(NAN), 0x7E);
  EXPECT_EQ(e5m2(0x1p-16), 0x01);
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E5M2>(0x7C), INFINITY);
  EXPECT_TRUE(std::isnan(fp::decode_to_f32<fp::kF8E5M2>(0x7D)));
  EXPECT_EQ(fp::decode_to_f32<fp::kF8E5M2>(0x01), 0x1p-16f);
}

TEST(Convert, IntegersToNarrowFloatsRoundOnce) {
  // 2^62 + 2^54 + 1 is just above the bf16 tie 2^62 * (1 + 2^-8): up.
  const std::int64_t v = (std::int64_t{1} << 62) + (std::int64_t{1} << 54) + 1;
  EXPECT_EQ(convert<BFloat16>(v).bits, 0x5E81);
  EXPECT_EQ(convert<BFloat16>(v - 1).bits, 0x5E80);  // exactly the tie
  EXPECT_EQ(convert<Half>(65519).bits, 0x7BFF);
  EXPECT_EQ(convert<Half>(65520).bits, 0x7C00);
  EXPECT_EQ(convert<Half>(std::uint64_t{1} << 63).bits, 0x7C00);
  EXPECT_EQ(convert<Float8E4M3FN>(std::int8_t{-3}).bits, 0xC4);
}

TEST(Convert, FloatToIntegerFollowsNumpyOnX86) {
  EXPECT_EQ(convert<std::int8_t>(300.0f), 44);    // 300 mod 256
  EXPECT_EQ(convert<std::int8_t>(-300.5f), -44);  // truncate, then wrap
  EXPECT_EQ(convert<std::int8_t>(3e9f), 0);       // out of int32: indefinite
  EXPECT_EQ(convert<std::int8_t>(NAN), 0);
  EXPECT_EQ(convert<std::int32_t>(3e9),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(convert<std::int32_t>(-2.9), -2);
  EXPECT_EQ(convert<std::int64_t>(NAN),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(convert<std::int64_t>(0x1p63),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(convert<std::uint8_t>(-1.5), 255);
  // u32: values >= 2^31 convert as (x - 2^31) with the top bit flipped back.
  EXPECT_EQ(convert<std::uint32_t>(3e9), 3000000000u);
  EXPECT_EQ(convert<std::uint32_t>(5e9), 0u);  // x - 2^31 overflows int32
  EXPECT_EQ(convert<std::uint32_t>(-3e9), 0x80000000u);
  EXPECT_EQ(convert<std::uint32_t>(-1.5), 0xFFFFFFFFu);
  EXPECT_EQ(convert<std::uint64_t>(-1.5),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(convert<std::uint64_t>(1e19), 10000000000000000000ull);
  EXPECT_EQ(convert<std::uint64_t>(3e19), 0u);
  EXPECT_EQ(convert<std::uint64_t>(NAN), std::uint64_t{1} << 63);
  EXPECT_EQ(convert<std::int16_t>(Half(-7.75f)), -7);
}

TEST(Convert, IntegersWrapAndBoolsAreZeroOne) {
  EXPECT_EQ(convert<std::uint8_t>(std::int32_t{300}), 44);
  EXPECT_EQ(convert<std::uint16_t>(std::int8_t{-1}), 65535);
  EXPECT_EQ(convert<std::int8_t>(std::uint64_t{255}), -1);
  EXPECT_TRUE(convert<bool>(0.5f));
  EXPECT_TRUE(convert<bool>(NAN));
  EXPECT_FALSE(convert<bool>(-0.0));
  EXPECT_TRUE(convert<bool>(Half(0.001f)));
  EXPECT_FALSE(convert<bool>(BFloat16(0.0f)));
  EXPECT_EQ(convert<float>(true), 1.0f);
  EXPECT_EQ(convert<BFloat16>(true).bits, 0x3F80);
  EXPECT_EQ(convert<std::int64_t>(false), 0);
}

TEST(Convert, IntToFloatRoundsToNearestEven) {
  // 2^24 + 1 is halfway between two floats; even is 2^24.
  EXPECT_EQ(convert<float>(std::int32_t{16777217}), 16777216.0f);
  EXPECT_EQ(convert<float>(std::int32_t{16777219}), 16777220.0f);
  EXPECT_EQ(convert<double>(std::int64_t{9007199254740993}),
            9007199254740992.0);
}

TEST(Convert, NarrowToNarrowIsExactThroughF32) {
  // bf16 1 + 2^-7 is exact in f16; f16 1 + 2^-10 is under half a bf16 step.
  EXPECT_EQ(convert<Half>(BFloat16::from_bits(0x3F81)).bits, 0x3C08);
  EXPECT_EQ(convert<BFloat16>(Half::from_bits(0x3C01)).bits, 0x3F80);
  EXPECT_EQ(convert<Float8E5M2>(Float8E4M3FN::from_bits(0x7E)).bits, 0x5F);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// The Highway f32 -> bf16 / f16 kernels (contiguous casts) against the
// scalar conversion (the same cast through a strided view): bit-identical
// on every 251st f32 bit pattern (both signs, every exponent, NaN payloads,
// subnormals, ties) and on lengths that leave vector tails.
std::int64_t mismatches(const Tensor& vector_result,
                        const Tensor& scalar_result, const std::uint32_t* f32) {
  const auto* a = static_cast<const std::uint16_t*>(vector_result.raw_data());
  const auto* b = static_cast<const std::uint16_t*>(scalar_result.raw_data());
  std::int64_t count = 0;
  for (std::int64_t k = 0; k < vector_result.numel(); ++k) {
    if (a[k] != b[k] && count++ < 5) {
      ADD_FAILURE() << "f32 bits 0x" << std::hex << f32[2 * k] << ": vector 0x"
                    << a[k] << ", scalar 0x" << b[k];
    }
  }
  return count;
}

TEST(Conversions, VectorNarrowingCastsMatchTheScalarOnes) {
  constexpr std::uint64_t kStep = 251;
  const auto count =
      static_cast<std::int64_t>((std::uint64_t{1} << 32) / kStep);
  Tensor patterns = empty({count, 2}, DType::U32);
  auto* p = patterns.data<std::uint32_t>();
  for (std::int64_t k = 0; k < count; ++k) {
    p[2 * k] =
        static_cast<std::uint32_t>(static_cast<std::uint64_t>(k) * kStep);
    p[2 * k + 1] = 0;
  }
  // Column 0 viewed as f32: strided (the scalar loop); its copy is
  // contiguous (the vector kernel).
  const Tensor strided = from_blob(p, {count}, DType::F32, {2});
  const Tensor contiguous = strided.contiguous();
  ASSERT_FALSE(strided.is_contiguous());
  for (DType to : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(std::string(dtype_name(to)));
    EXPECT_EQ(mismatches(contiguous.to(to), strided.to(to), p), 0);
    for (std::int64_t n : {1, 7, 15, 17, 33}) {
      EXPECT_EQ(mismatches(contiguous.slice(0, 0, n).to(to),
                           strided.slice(0, 0, n).to(to), p),
                0);
    }
  }
}

// f16 -> f32 through the vector kernel (contiguous) and the scalar code
// (strided): all 65,536 patterns, bit for bit (NaN payloads included).
TEST(Conversions, VectorWideningF16CastMatchesTheScalarOne) {
  Tensor patterns = empty({65536, 2}, DType::U16);
  auto* p = patterns.data<std::uint16_t>();
  for (std::int64_t k = 0; k < 65536; ++k) {
    p[2 * k] = static_cast<std::uint16_t>(k);
    p[2 * k + 1] = 0;
  }
  const Tensor strided = from_blob(p, {65536}, DType::F16, {2});
  const Tensor contiguous = strided.contiguous();
  ASSERT_FALSE(strided.is_contiguous());
  for (std::int64_t n : {65536, 1, 7, 15, 17, 33}) {
    const Tensor a = contiguous.slice(0, 0, n).to(DType::F32);
    const Tensor b = strided.slice(0, 0, n).to(DType::F32);
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(),
                          static_cast<std::size_t>(n) * 4),
              0)
        << n;
  }
  // Spot values: the smallest subnormal, a NaN payload, -Inf.
  const Tensor v = contiguous.to(DType::F32);
  EXPECT_EQ(v.at<float>({1}), 0x1p-24f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(v.at<float>({0x7c01})), 0x7f802000u);
  EXPECT_EQ(v.at<float>({0xfc00}), -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace tessel

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "tessel/core/dtype.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(DType, NamesFollowDesign) {
  const std::pair<DType, const char*> expected[] = {
      {DType::Bool, "bool"},       {DType::U8, "u8"},
      {DType::I8, "i8"},           {DType::I16, "i16"},
      {DType::I32, "i32"},         {DType::I64, "i64"},
      {DType::U16, "u16"},         {DType::U32, "u32"},
      {DType::U64, "u64"},         {DType::F16, "f16"},
      {DType::BF16, "bf16"},       {DType::F32, "f32"},
      {DType::F64, "f64"},         {DType::F8E4M3FN, "f8_e4m3fn"},
      {DType::F8E5M2, "f8_e5m2"},  {DType::I4, "i4"},
      {DType::U4, "u4"},           {DType::Q4_0, "q4_0"},
      {DType::Q4_1, "q4_1"},       {DType::Q5_0, "q5_0"},
      {DType::Q5_1, "q5_1"},       {DType::Q8_0, "q8_0"},
      {DType::Q2_K, "q2_k"},       {DType::Q3_K, "q3_k"},
      {DType::Q4_K, "q4_k"},       {DType::Q5_K, "q5_k"},
      {DType::Q6_K, "q6_k"},       {DType::Q8_K, "q8_k"},
      {DType::Q8_1, "q8_1"},       {DType::IQ2_XXS, "iq2_xxs"},
      {DType::IQ2_XS, "iq2_xs"},   {DType::IQ2_S, "iq2_s"},
      {DType::IQ3_XXS, "iq3_xxs"}, {DType::IQ3_S, "iq3_s"},
      {DType::IQ1_S, "iq1_s"},     {DType::IQ1_M, "iq1_m"},
      {DType::IQ4_NL, "iq4_nl"},   {DType::IQ4_XS, "iq4_xs"},
      {DType::TQ1_0, "tq1_0"},     {DType::TQ2_0, "tq2_0"},
      {DType::MXFP4, "mxfp4"},     {DType::C64, "c64"},
      {DType::C128, "c128"},
  };
  ASSERT_EQ(std::size(expected), static_cast<std::size_t>(kNumDTypes));
  for (const auto& [dtype, name] : expected) {
    EXPECT_EQ(dtype_name(dtype), name);
    EXPECT_EQ(parse_dtype(name), dtype) << name;
    std::ostringstream os;
    os << dtype;
    EXPECT_EQ(os.str(), name);
  }
}

TEST(DType, ElementSizes) {
  EXPECT_EQ(element_size(DType::Bool), 1);
  EXPECT_EQ(element_size(DType::U8), 1);
  EXPECT_EQ(element_size(DType::I16), 2);
  EXPECT_EQ(element_size(DType::U32), 4);
  EXPECT_EQ(element_size(DType::I64), 8);
  EXPECT_EQ(element_size(DType::F16), 2);
  EXPECT_EQ(element_size(DType::BF16), 2);
  EXPECT_EQ(element_size(DType::F32), 4);
  EXPECT_EQ(element_size(DType::F64), 8);
  EXPECT_EQ(element_size(DType::F8E4M3FN), 1);
  EXPECT_EQ(element_size(DType::F8E5M2), 1);
  EXPECT_EQ(dtype_traits(DType::I4).bits, 4);
  EXPECT_EQ(dtype_traits(DType::U4).bits, 4);
}

// Block sizes and bytes per block are those of GGUF (ggml-common.h):
// e.g. Q4_0 = f16 scale + 16 bytes of nibbles = 18 bytes per 32 values.
TEST(DType, BlockQuantisedLayoutsMatchGguf) {
  struct Row {
    DType dtype;
    int block;
    int bytes;
  };
  const Row rows[] = {
      {DType::Q4_0, 32, 2 + 16},
      {DType::Q4_1, 32, 2 + 2 + 16},
      {DType::Q5_0, 32, 2 + 4 + 16},
      {DType::Q5_1, 32, 2 + 2 + 4 + 16},
      {DType::Q8_0, 32, 2 + 32},
      {DType::Q2_K, 256, 16 + 64 + 2 + 2},
      {DType::Q3_K, 256, 32 + 64 + 12 + 2},
      {DType::Q4_K, 256, 2 + 2 + 12 + 128},
      {DType::Q5_K, 256, 2 + 2 + 12 + 32 + 128},
      {DType::Q6_K, 256, 128 + 64 + 16 + 2},
      {DType::Q8_K, 256, 4 + 256 + 2 * 16},
      {DType::Q8_1, 32, 2 + 2 + 32},
      {DType::IQ2_XXS, 256, 2 + 2 * 32},
      {DType::IQ2_XS, 256, 2 + 2 * 32 + 8},
      {DType::IQ2_S, 256, 2 + 64 + 8 + 8},
      {DType::IQ3_XXS, 256, 2 + 96},
      {DType::IQ3_S, 256, 2 + 64 + 8 + 32 + 4},
      {DType::IQ1_S, 256, 2 + 32 + 2 * 8},
      {DType::IQ1_M, 256, 32 + 16 + 8},
      {DType::IQ4_NL, 32, 2 + 16},
      {DType::IQ4_XS, 256, 2 + 2 + 4 + 128},
      {DType::TQ1_0, 256, 48 + 4 + 2},
      {DType::TQ2_0, 256, 64 + 2},
      {DType::MXFP4, 32, 1 + 16},
  };
  for (const auto& r : rows) {
    const auto& t = dtype_traits(r.dtype);
    EXPECT_EQ(t.block_size, r.block) << t.name;
    EXPECT_EQ(t.block_bytes, r.bytes) << t.name;
    EXPECT_TRUE(is_block_quantized(r.dtype));
    EXPECT_FALSE(is_byte_addressable(r.dtype));
    EXPECT_FALSE(is_floating_point(r.dtype));
  }
  EXPECT_EQ(dtype_traits(DType::Q4_0).block_bytes, 18);
  EXPECT_EQ(dtype_traits(DType::Q8_0).block_bytes, 34);
  EXPECT_EQ(dtype_traits(DType::Q4_K).block_bytes, 144);
  EXPECT_EQ(dtype_traits(DType::Q8_K).block_bytes, 292);
}

TEST(DType, KindQueries) {
  EXPECT_TRUE(is_floating_point(DType::BF16));
  EXPECT_TRUE(is_floating_point(DType::F8E5M2));
  EXPECT_FALSE(is_floating_point(DType::I32));
  EXPECT_TRUE(is_integral(DType::U4));
  EXPECT_TRUE(is_integral(DType::I64));
  EXPECT_FALSE(is_integral(DType::Bool));
  EXPECT_TRUE(is_signed(DType::I4));
  EXPECT_FALSE(is_signed(DType::U16));
  EXPECT_TRUE(is_packed(DType::I4));
  EXPECT_FALSE(is_packed(DType::I8));
  EXPECT_TRUE(is_byte_addressable(DType::Bool));
  EXPECT_FALSE(is_byte_addressable(DType::U4));
}

TEST(DType, ParsesNumpyAndTorchSpellings) {
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_EQ(parse_dtype("half"), DType::F16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("double"), DType::F64);
  EXPECT_EQ(parse_dtype("int8"), DType::I8);
  EXPECT_EQ(parse_dtype("uint64"), DType::U64);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::F8E4M3FN);
  EXPECT_EQ(parse_dtype("float8_e5m2"), DType::F8E5M2);
  EXPECT_EQ(parse_dtype("int4"), DType::I4);
}

TEST(DType, UnknownNameIsE2201ListingKnownNames) {
  EXPECT_TESSEL_ERROR(parse_dtype("float128"), "E2201", "[parse_dtype]",
                      "'float128'", "bf16", "q6_k");
}

TEST(DType, StorageBytes) {
  EXPECT_EQ(storage_bytes(DType::F32, 6), 24);
  EXPECT_EQ(storage_bytes(DType::Bool, 3), 3);
  EXPECT_EQ(storage_bytes(DType::I4, 0), 0);
  EXPECT_EQ(storage_bytes(DType::I4, 5), 3);  // two per byte, rounded up
  EXPECT_EQ(storage_bytes(DType::U4, 6), 3);
  EXPECT_EQ(storage_bytes(DType::Q4_0, 64), 36);
  EXPECT_EQ(storage_bytes(DType::Q6_K, 512), 420);
}

TEST(DType, StorageBytesRejectsPartialBlocks) {
  EXPECT_TESSEL_ERROR(storage_bytes(DType::Q8_0, 33), "E2102", "33", "q8_0",
                      "32");
}

TEST(DType, StorageBytesOverflowIsE2303) {
  EXPECT_TESSEL_ERROR(
      storage_bytes(DType::F64, std::numeric_limits<std::int64_t>::max() / 4),
      "E2303", "overflows");
}

TEST(DType, BytesThroughElement) {
  EXPECT_EQ(bytes_through_element(DType::F32, 0), 4);
  EXPECT_EQ(bytes_through_element(DType::I4, 0), 1);
  EXPECT_EQ(bytes_through_element(DType::I4, 3), 2);
  EXPECT_EQ(bytes_through_element(DType::Q4_0, 31), 18);
  EXPECT_EQ(bytes_through_element(DType::Q4_0, 32), 36);
}

TEST(DType, DTypeOfCppTypes) {
  EXPECT_EQ(dtype_of_v<float>, DType::F32);
  EXPECT_EQ(dtype_of_v<std::uint16_t>, DType::U16);
  EXPECT_EQ(dtype_of_v<Half>, DType::F16);
  EXPECT_EQ(dtype_of_v<BFloat16>, DType::BF16);
  EXPECT_EQ(dtype_of_v<Float8E4M3FN>, DType::F8E4M3FN);
  EXPECT_EQ(dtype_of_v<bool>, DType::Bool);
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// DESIGN §1's promotion rules, one row per rule.
TEST(Promotion, FollowsDesignRules) {
  // 1. f64 with anything, then f32 with anything else.
  EXPECT_EQ(promote_types(DType::F64, DType::BF16), DType::F64);
  EXPECT_EQ(promote_types(DType::I64, DType::F64), DType::F64);
  EXPECT_EQ(promote_types(DType::F32, DType::F16), DType::F32);
  EXPECT_EQ(promote_types(DType::U8, DType::F32), DType::F32);
  // 2. Two different narrow floats give f32; a float with itself stays.
  EXPECT_EQ(promote_types(DType::BF16, DType::F16), DType::F32);
  EXPECT_EQ(promote_types(DType::F8E4M3FN, DType::F8E5M2), DType::F32);
  EXPECT_EQ(promote_types(DType::F8E4M3FN, DType::BF16), DType::F32);
  EXPECT_EQ(promote_types(DType::BF16, DType::BF16), DType::BF16);
  EXPECT_EQ(promote_types(DType::F8E5M2, DType::F8E5M2), DType::F8E5M2);
  // 3. i8 with i8 widens; other integers follow the array-API lattice.
  EXPECT_EQ(promote_types(DType::I8, DType::I8), DType::I16);
  EXPECT_EQ(promote_types(DType::U8, DType::U8), DType::U8);
  EXPECT_EQ(promote_types(DType::I8, DType::I32), DType::I32);
  EXPECT_EQ(promote_types(DType::U8, DType::I8), DType::I16);
  EXPECT_EQ(promote_types(DType::U16, DType::I8), DType::I32);
  EXPECT_EQ(promote_types(DType::U32, DType::I16), DType::I64);
  EXPECT_EQ(promote_types(DType::U32, DType::U64), DType::U64);
  EXPECT_EQ(promote_types(DType::U8, DType::I64), DType::I64);
  EXPECT_EQ(promote_types(DType::Bool, DType::U16), DType::U16);
  EXPECT_EQ(promote_types(DType::Bool, DType::Bool), DType::Bool);
  // 4. Packed and block types count as f32.
  EXPECT_EQ(promote_types(DType::I4, DType::I4), DType::F32);
  EXPECT_EQ(promote_types(DType::U4, DType::I32), DType::F32);
  EXPECT_EQ(promote_types(DType::Q4_0, DType::F64), DType::F64);
  // 5. Integers and bool with a float give that float (PyTorch).
  EXPECT_EQ(promote_types(DType::I64, DType::F16), DType::F16);
  EXPECT_EQ(promote_types(DType::Bool, DType::BF16), DType::BF16);
  // Symmetric.
  for (DType a : testing::kElementDTypes) {
    for (DType b : testing::kElementDTypes) {
      if ((a == DType::U64 && is_integral(b) && is_signed(b) &&
           !is_packed(b)) ||
          (b == DType::U64 && is_integral(a) && is_signed(a) &&
           !is_packed(a))) {
        continue;
      }
      EXPECT_EQ(promote_types(a, b), promote_types(b, a))
          << dtype_name(a) << " " << dtype_name(b);
    }
  }
}

TEST(Promotion, U64WithSignedIsE2201) {
  EXPECT_TESSEL_ERROR(promote_types(DType::U64, DType::I8, "add"), "E2201",
                      "[add]", "u64", "i8");
}

TEST(Promotion, FloatResultType) {
  EXPECT_EQ(float_result_type(DType::I32), DType::F32);
  EXPECT_EQ(float_result_type(DType::Bool), DType::F32);
  EXPECT_EQ(float_result_type(DType::BF16), DType::BF16);
  EXPECT_EQ(float_result_type(DType::F64), DType::F64);
}

}  // namespace
}  // namespace tessel

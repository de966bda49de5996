#include <gtest/gtest.h>

#include <stdexcept>
#include <typeinfo>

#include "tessel/core/error.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

TEST(Error, CodesAreTheStableStringsOfDesign) {
  EXPECT_STREQ(error_code_string(ErrorCode::BroadcastMismatch), "E2101");
  EXPECT_STREQ(error_code_string(ErrorCode::BadShape), "E2102");
  EXPECT_STREQ(error_code_string(ErrorCode::InnerDimMismatch), "E2103");
  EXPECT_STREQ(error_code_string(ErrorCode::BadDType), "E2201");
  EXPECT_STREQ(error_code_string(ErrorCode::NotContiguous), "E2301");
  EXPECT_STREQ(error_code_string(ErrorCode::OutOfRange), "E2302");
  EXPECT_STREQ(error_code_string(ErrorCode::SizeOverflow), "E2303");
  EXPECT_STREQ(error_code_string(ErrorCode::NonFinite), "E2401");
  EXPECT_STREQ(error_code_string(ErrorCode::DeviceMismatch), "E2501");
  EXPECT_STREQ(error_code_string(ErrorCode::MalformedFile), "E3001");
  EXPECT_STREQ(error_code_string(ErrorCode::IoFailure), "E3002");
  EXPECT_STREQ(error_code_string(ErrorCode::BadConfig), "E4001");
}

template <class Expected>
void expect_thrown_as(ErrorCode code) {
  try {
    throw_error(code, "[op] message");
  } catch (const Expected& e) {
    EXPECT_EQ(e.error_code(), code);
    EXPECT_EQ(e.message(), "[op] message");
    EXPECT_EQ(std::string(e.what()),
              std::string("[op] message [") + error_code_string(code) + "]");
    return;
  } catch (...) {
    ADD_FAILURE() << "wrong exception type for " << error_code_string(code);
    return;
  }
}

TEST(Error, EachCodeThrowsItsFamily) {
  expect_thrown_as<ShapeError>(ErrorCode::BroadcastMismatch);
  expect_thrown_as<ShapeError>(ErrorCode::BadShape);
  expect_thrown_as<ShapeError>(ErrorCode::InnerDimMismatch);
  expect_thrown_as<DTypeError>(ErrorCode::BadDType);
  expect_thrown_as<LayoutError>(ErrorCode::NotContiguous);
  expect_thrown_as<IndexError>(ErrorCode::OutOfRange);
  expect_thrown_as<OverflowError>(ErrorCode::SizeOverflow);
  expect_thrown_as<NumericsError>(ErrorCode::NonFinite);
  expect_thrown_as<DeviceError>(ErrorCode::DeviceMismatch);
  expect_thrown_as<FormatError>(ErrorCode::MalformedFile);
  expect_thrown_as<IoError>(ErrorCode::IoFailure);
  expect_thrown_as<ConfigError>(ErrorCode::BadConfig);
}

TEST(Error, DerivesFromStdException) {
  try {
    throw_error(ErrorCode::BadDType, "[x] y");
  } catch (const std::exception& e) {
    EXPECT_NE(dynamic_cast<const Error*>(&e), nullptr);
    return;
  }
  ADD_FAILURE() << "not caught as std::exception";
}

TEST(Error, FormatErrorCarriesByteOffset) {
  const FormatError e(ErrorCode::MalformedFile, "[gguf] bad magic", 0);
  EXPECT_EQ(e.byte_offset(), 0);
  EXPECT_STREQ(e.code(), "E3001");
  EXPECT_EQ(FormatError(ErrorCode::MalformedFile, "x").byte_offset(), -1);
}

// DESIGN §2: an op's message names its operands' shapes, dtypes and
// devices, whichever check fails.
TEST(Error, MessagesNameTheOperandsDTypesAndDevices) {
  EXPECT_TESSEL_ERROR(matmul(zeros({2, 3}), zeros({4, 5}, DType::F64)), "E2103",
                      "[matmul]",
                      "; operands: f32 (2, 3) on cpu, f64 (4, 5) on cpu");
  EXPECT_TESSEL_ERROR(add(zeros({2, 3}, DType::I32), zeros({4})), "E2101",
                      "operands: i32 (2, 3) on cpu, f32 (4,) on cpu");
  EXPECT_TESSEL_ERROR(bitwise_and(zeros({2}), zeros({2})), "E2201",
                      "operands: f32 (2,) on cpu, f32 (2,) on cpu");
  // Views name the tensor they view.
  EXPECT_TESSEL_ERROR(zeros({2, 3}, DType::BF16).reshape({7}), "E2102",
                      "operands: bf16 (2, 3) on cpu");
  EXPECT_TESSEL_ERROR(zeros({2, 3}).select(0, 5), "E2302",
                      "operands: f32 (2, 3) on cpu");
  // Mixed devices, with the meta device as the second one.
  EXPECT_TESSEL_ERROR(mul(zeros({2}), zeros({2}, DType::F32, Device::meta())),
                      "E2501", "operands: f32 (2,) on cpu, f32 (2,) on meta");
  // While an op runs another, the inner op's operands are the ones named:
  // linear's weight is transposed before its matmul.
  EXPECT_TESSEL_ERROR(linear(zeros({2, 3}), zeros({5, 4})), "E2103", "(2, 3)",
                      "(5, 4)");
  // Only after the op returns does its scope close: a later error of an
  // op without operands names none.
  try {
    Storage::allocate(-1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("operands"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel

// Every exception that reaches the top of a command carries a DESIGN §2
// code: what the JSON and filesystem libraries throw is mapped, not printed
// bare (issue 19: an invalid UTF-8 name once escaped as
// "[json.exception.type_error.316]").
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cli/foreign_errors.hpp"

namespace {

using tessel::ErrorCode;
using tessel::cli::as_tessel_error;

template <class F>
tessel::Error mapped(F&& thrower) {
  try {
    thrower();
  } catch (const std::exception& e) {
    return as_tessel_error(e);
  }
  ADD_FAILURE() << "nothing was thrown";
  return tessel::Error(ErrorCode::IoFailure, "");
}

TEST(ForeignErrors, JsonDumpOfInvalidUtf8IsAMalformedFile) {
  const tessel::Error e = mapped([] {
    nlohmann::json j = std::string("\xff name");
    (void)j.dump();  // type_error 316
  });
  EXPECT_EQ(e.error_code(), ErrorCode::MalformedFile);
  EXPECT_STREQ(e.code(), "E3001");
  EXPECT_NE(e.message().find("316"), std::string::npos) << e.message();
}

TEST(ForeignErrors, JsonParseErrorIsAMalformedFile) {
  const tessel::Error e = mapped([] {
    const auto j = nlohmann::json::parse("{");
    ADD_FAILURE() << j.dump();
  });
  EXPECT_EQ(e.error_code(), ErrorCode::MalformedFile);
}

TEST(ForeignErrors, FilesystemErrorIsAnIoFailure) {
  const tessel::Error e = mapped(
      [] { (void)std::filesystem::file_size("/nonexistent/tessel/file"); });
  EXPECT_EQ(e.error_code(), ErrorCode::IoFailure);
  EXPECT_STREQ(e.code(), "E3002");
  EXPECT_NE(e.message().find("/nonexistent/tessel/file"), std::string::npos);
}

TEST(ForeignErrors, BadAllocIsAnIoFailure) {
  const tessel::Error e = mapped([] { throw std::bad_alloc(); });
  EXPECT_EQ(e.error_code(), ErrorCode::IoFailure);
  EXPECT_NE(e.message().find("out of memory"), std::string::npos);
}

TEST(ForeignErrors, TesselErrorsKeepTheirCode) {
  const tessel::Error e = mapped(
      [] { throw tessel::Error(ErrorCode::BadConfig, "[x] keeps its code"); });
  EXPECT_EQ(e.error_code(), ErrorCode::BadConfig);
  EXPECT_EQ(e.message(), "[x] keeps its code");
}

TEST(ForeignErrors, AnythingElseIsReportedAsABugWithACode) {
  const tessel::Error e = mapped([] { throw std::logic_error("oops"); });
  EXPECT_EQ(e.error_code(), ErrorCode::IoFailure);
  EXPECT_NE(e.message().find("tessel bug"), std::string::npos);
}

}  // namespace

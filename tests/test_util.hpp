// Assertions shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "tessel/core/error.hpp"

namespace tessel::testing {

inline void check_error(const Error& e, const char* code,
                        std::initializer_list<std::string_view> parts) {
  EXPECT_STREQ(e.code(), code) << e.what();
  const std::string what = e.what();
  for (auto part : parts) {
    EXPECT_NE(what.find(part), std::string::npos)
        << "message \"" << what << "\" lacks \"" << part << "\"";
  }
}

}  // namespace tessel::testing

// Runs `statement` and expects a tessel::Error with `code` whose message
// contains every further argument.
#define EXPECT_TESSEL_ERROR(statement, code, ...)                 \
  do {                                                            \
    bool thrown_ = false;                                         \
    try {                                                         \
      statement;                                                  \
    } catch (const ::tessel::Error& e_) {                         \
      thrown_ = true;                                             \
      ::tessel::testing::check_error(e_, code, {__VA_ARGS__});    \
    }                                                             \
    EXPECT_TRUE(thrown_) << #statement " did not throw " << code; \
  } while (0)

// Private helpers for raising DESIGN §2 errors with "[op] ..." messages.
// The message is formatted only when the check fails.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "tessel/core/error.hpp"

namespace tessel::detail {

// Throws the error of `code` with `message`; contract errors (E21xx-E25xx)
// end with the running op's operands while its OperandScope is open
// (core/operand_scope.hpp).
[[noreturn]] void throw_op_error(ErrorCode code, std::string message);

template <class... Args>
[[noreturn]] void fail(ErrorCode code, std::string_view op,
                       fmt::format_string<Args...> format, Args&&... args) {
  throw_op_error(code, fmt::format("[{}] ", op) +
                           fmt::format(format, std::forward<Args>(args)...));
}

// A malformed file (E3001) at byte `offset`: "[op] what at byte N", the
// offset also carried by the FormatError for programs.
template <class... Args>
[[noreturn]] void fail_at(std::string_view op, std::int64_t offset,
                          fmt::format_string<Args...> format, Args&&... args) {
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[{}] ", op) +
                        fmt::format(format, std::forward<Args>(args)...) +
                        fmt::format(" at byte {}", offset),
                    offset);
}

[[noreturn]] inline void internal_failure(const char* what, const char* file,
                                          int line) {
  throw std::logic_error(
      fmt::format("tessel internal error: {} ({}:{}); please report this bug",
                  what, file, line));
}

}  // namespace tessel::detail

// User-facing precondition: throws the DESIGN §2 error `code`.
#define TESSEL_CHECK(cond, code, op, ...)                                 \
  do {                                                                    \
    if (!(cond)) [[unlikely]]                                             \
      ::tessel::detail::fail(::tessel::ErrorCode::code, op, __VA_ARGS__); \
  } while (0)

// A file's field checked where it was read: E3001 naming the byte offset.
#define TESSEL_CHECK_AT(cond, op, offset, ...)            \
  do {                                                    \
    if (!(cond)) [[unlikely]]                             \
      ::tessel::detail::fail_at(op, offset, __VA_ARGS__); \
  } while (0)

// Internal invariant: a failure is a tessel bug, never the user's input.
#define TESSEL_ASSERT(cond)                                          \
  do {                                                               \
    if (!(cond)) [[unlikely]]                                        \
      ::tessel::detail::internal_failure(#cond, __FILE__, __LINE__); \
  } while (0)

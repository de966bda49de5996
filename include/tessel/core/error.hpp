// The exception hierarchy of DESIGN §2: every contract violation is a
// tessel::Error with a stable code; subclasses group codes by what went wrong.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel {

enum class ErrorCode : std::uint16_t {
  BroadcastMismatch = 2101,  // shapes not broadcast-compatible
  BadShape = 2102,           // rank/shape not what the op expects, bad axis
  InnerDimMismatch = 2103,   // matmul/dot inner dimensions differ
  BadDType = 2201,           // dtype not accepted, or not promotable
  NotContiguous = 2301,      // op needs contiguity (or whole quant blocks)
  OutOfRange = 2302,         // index or slice out of range
  SizeOverflow = 2303,       // size arithmetic overflow
  NonFinite = 2401,          // NaN/Inf where stability is expected
  DeviceMismatch = 2501,     // mixed devices, or device unavailable
  MalformedFile = 3001,      // malformed/unsupported file or descriptor
  IoFailure = 3002,          // open/read/write/map failed
  BadConfig = 4001,          // invalid model or merge configuration
};

// "E2101" for ErrorCode::BroadcastMismatch.
const char* error_code_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  // The stable string code of DESIGN §2, e.g. "E2101".
  const char* code() const noexcept { return error_code_string(code_); }
  ErrorCode error_code() const noexcept { return code_; }
  // The message without the trailing code, e.g. "[add] shapes (2, 3) ...".
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

// E2101, E2102, E2103.
class ShapeError : public Error {
  using Error::Error;
};
// E2201.
class DTypeError : public Error {
  using Error::Error;
};
// E2301.
class LayoutError : public Error {
  using Error::Error;
};
// E2302.
class IndexError : public Error {
  using Error::Error;
};
// E2303.
class OverflowError : public Error {
  using Error::Error;
};
// E2401.
class NumericsError : public Error {
  using Error::Error;
};
// E2501.
class DeviceError : public Error {
  using Error::Error;
};
// E3001. Carries the byte offset of the offending field when one is known.
class FormatError : public Error {
 public:
  FormatError(ErrorCode code, const std::string& message,
              std::int64_t byte_offset = -1)
      : Error(code, message), byte_offset_(byte_offset) {}
  std::int64_t byte_offset() const noexcept { return byte_offset_; }

 private:
  std::int64_t byte_offset_;
};
// E3002.
class IoError : public Error {
  using Error::Error;
};
// E4001.
class ConfigError : public Error {
  using Error::Error;
};

// Throws the subclass that belongs to `code`. `message` should start with
// "[op] " and name the operands' shapes, dtypes and devices.
[[noreturn]] void throw_error(ErrorCode code, const std::string& message);

}  // namespace tessel

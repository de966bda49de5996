// The exception hierarchy of DESIGN §2: every contract violation is a
// tessel::Error with a stable code; subclasses group codes by what went wrong.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel {

// The codes of DESIGN §2, listed once: X(enum, number, exception class).
// The enum, the code strings and the class each code throws come from here.
#define TESSEL_FOR_EACH_ERROR_CODE(X)                                        \
  X(BroadcastMismatch, 2101, ShapeError) /* shapes not broadcastable */      \
  X(BadShape, 2102, ShapeError)          /* rank/shape/axis unexpected */    \
  X(InnerDimMismatch, 2103, ShapeError)  /* matmul/dot inner dims */         \
  X(BadDType, 2201, DTypeError)          /* dtype refused/not promotable */  \
  X(NotContiguous, 2301, LayoutError)    /* needs contiguity/whole blocks */ \
  X(OutOfRange, 2302, IndexError)        /* index or slice out of range */   \
  X(SizeOverflow, 2303, OverflowError)   /* size arithmetic overflow */      \
  X(NonFinite, 2401, NumericsError)      /* NaN/Inf where stable */          \
  X(DeviceMismatch, 2501, DeviceError)   /* mixed/unavailable devices */     \
  X(MalformedFile, 3001, FormatError)    /* malformed file/descriptor */     \
  X(IoFailure, 3002, IoError)            /* open/read/write/map failed */    \
  X(BadConfig, 4001, ConfigError)        /* invalid model/merge config */

enum class ErrorCode : std::uint16_t {
#define TESSEL_ERROR_ENUM(e, number, cls) e = number,
  TESSEL_FOR_EACH_ERROR_CODE(TESSEL_ERROR_ENUM)
#undef TESSEL_ERROR_ENUM
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

#include "tessel/core/error.hpp"

namespace tessel {

const char* error_code_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::BroadcastMismatch: return "E2101";
    case ErrorCode::BadShape: return "E2102";
    case ErrorCode::InnerDimMismatch: return "E2103";
    case ErrorCode::BadDType: return "E2201";
    case ErrorCode::NotContiguous: return "E2301";
    case ErrorCode::OutOfRange: return "E2302";
    case ErrorCode::SizeOverflow: return "E2303";
    case ErrorCode::NonFinite: return "E2401";
    case ErrorCode::DeviceMismatch: return "E2501";
    case ErrorCode::MalformedFile: return "E3001";
    case ErrorCode::IoFailure: return "E3002";
    case ErrorCode::BadConfig: return "E4001";
  }
  return "E0000";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message + " [" + error_code_string(code) + "]"),
      code_(code),
      message_(message) {}

void throw_error(ErrorCode code, const std::string& message) {
  switch (code) {
    case ErrorCode::BroadcastMismatch:
    case ErrorCode::BadShape:
    case ErrorCode::InnerDimMismatch: throw ShapeError(code, message);
    case ErrorCode::BadDType: throw DTypeError(code, message);
    case ErrorCode::NotContiguous: throw LayoutError(code, message);
    case ErrorCode::OutOfRange: throw IndexError(code, message);
    case ErrorCode::SizeOverflow: throw OverflowError(code, message);
    case ErrorCode::NonFinite: throw NumericsError(code, message);
    case ErrorCode::DeviceMismatch: throw DeviceError(code, message);
    case ErrorCode::MalformedFile: throw FormatError(code, message);
    case ErrorCode::IoFailure: throw IoError(code, message);
    case ErrorCode::BadConfig: throw ConfigError(code, message);
  }
  throw Error(code, message);
}

}  // namespace tessel

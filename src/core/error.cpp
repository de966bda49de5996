#include "tessel/core/error.hpp"

namespace tessel {

const char* error_code_string(ErrorCode code) noexcept {
  switch (code) {
#define TESSEL_ERROR_STRING(e, number, cls) \
  case ErrorCode::e: return "E" #number;
    TESSEL_FOR_EACH_ERROR_CODE(TESSEL_ERROR_STRING)
#undef TESSEL_ERROR_STRING
  }
  return "E0000";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(message + " [" + error_code_string(code) + "]"),
      code_(code),
      message_(message) {}

void throw_error(ErrorCode code, const std::string& message) {
  switch (code) {
#define TESSEL_ERROR_THROW(e, number, cls) \
  case ErrorCode::e: throw cls(code, message);
    TESSEL_FOR_EACH_ERROR_CODE(TESSEL_ERROR_THROW)
#undef TESSEL_ERROR_THROW
  }
  throw Error(code, message);
}

}  // namespace tessel

#include "cli/foreign_errors.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ios>
#include <new>
#include <nlohmann/json.hpp>
#include <system_error>

namespace tessel::cli {

tessel::Error as_tessel_error(const std::exception& e) {
  using tessel::ErrorCode;
  if (const auto* own = dynamic_cast<const tessel::Error*>(&e)) return *own;
  if (dynamic_cast<const nlohmann::json::exception*>(&e) != nullptr) {
    return tessel::Error(ErrorCode::MalformedFile,
                         fmt::format("[json] {}", e.what()));
  }
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return tessel::Error(ErrorCode::IoFailure, "[memory] out of memory");
  }
  if (dynamic_cast<const std::system_error*>(&e) != nullptr ||
      dynamic_cast<const std::filesystem::filesystem_error*>(&e) != nullptr ||
      dynamic_cast<const std::ios_base::failure*>(&e) != nullptr) {
    return tessel::Error(ErrorCode::IoFailure,
                         fmt::format("[system] {}", e.what()));
  }
  return tessel::Error(
      ErrorCode::IoFailure,
      fmt::format("[internal] {} (a tessel bug: please report it)", e.what()));
}

}  // namespace tessel::cli

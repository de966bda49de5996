// Reading tokenizer.json fields: every refusal is E3001 naming the field's
// path ("model.merges[3]") and, for an unsupported value, what is
// supported.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/check.hpp"

namespace tessel::tok {

inline constexpr const char* kHfOp = "load_hf_tokenizer";

[[noreturn]] inline void malformed(const std::string& field,
                                   std::string_view what) {
  detail::fail(ErrorCode::MalformedFile, kHfOp, "{}: {}", field, what);
}

[[noreturn]] inline void unsupported(const std::string& field,
                                     std::string_view value,
                                     std::string_view supported) {
  detail::fail(ErrorCode::MalformedFile, kHfOp,
               "{}: {:?} is not supported (supported: {})", field, value,
               supported);
}

inline void unsupported_unless(bool ok, const std::string& field,
                               std::string_view value,
                               std::string_view supported) {
  if (!ok) unsupported(field, value, supported);
}

inline const nlohmann::json& json_member(const nlohmann::json& obj,
                                         const char* key,
                                         const std::string& field) {
  if (!obj.is_object()) malformed(field, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) malformed(field + "." + key, "missing");
  return *it;
}

inline std::string json_string(const nlohmann::json& obj, const char* key,
                               const std::string& field) {
  const auto& v = json_member(obj, key, field);
  if (!v.is_string()) malformed(field + "." + key, "expected a string");
  return v.get<std::string>();
}

inline const nlohmann::json& json_array(const nlohmann::json& obj,
                                        const char* key,
                                        const std::string& field) {
  const auto& v = json_member(obj, key, field);
  if (!v.is_array()) malformed(field + "." + key, "expected an array");
  return v;
}

inline const nlohmann::json& json_object(const nlohmann::json& obj,
                                         const char* key,
                                         const std::string& field) {
  const auto& v = json_member(obj, key, field);
  if (!v.is_object()) malformed(field + "." + key, "expected an object");
  return v;
}

// An optional boolean: `fallback` when absent or null.
inline bool json_bool(const nlohmann::json& obj, const char* key,
                      const std::string& field, bool fallback) {
  if (!obj.is_object()) malformed(field, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) malformed(field + "." + key, "expected a boolean");
  return it->get<bool>();
}

// A token id: an integer in [0, 2^31).
inline std::int32_t json_id(const nlohmann::json& v, const std::string& field) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
      v.get<std::int64_t>() > 0x7FFFFFFF) {
    malformed(field, "expected a token id (an integer in [0, 2^31))");
  }
  return static_cast<std::int32_t>(v.get<std::int64_t>());
}

}  // namespace tessel::tok

// Reading a tokenizer.json and its companions the way gguf-py reads them
// (a missing key is null, Python's truth values), and the GGUF keys the
// converter writes, for gguf_tokenizer_metadata.cpp and
// gguf_special_vocab.cpp.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "io/json_strict.hpp"
#include "io/read_file.hpp"
#include "tessel/io/gguf.hpp"

namespace tessel::gguf_tokenizer {

using nlohmann::json;
namespace fs = std::filesystem;

inline constexpr const char* kOp = "GGUF tokenizer";

[[noreturn]] inline void refuse(const std::string& what) {
  detail::fail(ErrorCode::BadConfig, kOp, "{}", what);
}

// The file's JSON object (E3001 for anything else: every reader below
// indexes it by key).
inline json read_json(const fs::path& path) {
  json j;
  if (const auto defect = io::parse_json_strict(io::read_text_file(path), j)) {
    detail::fail(ErrorCode::MalformedFile, kOp, "{} is not valid JSON: {}",
                 path.string(), defect->message);
  }
  if (!j.is_object()) {
    detail::fail(ErrorCode::MalformedFile, kOp, "{} is not a JSON object",
                 path.string());
  }
  return j;
}

inline const json& null_json() {
  static const json null;
  return null;
}

// obj.get(key) in Python: null when obj is no object or lacks the key.
inline const json& get(const json& obj, const char* key) {
  if (!obj.is_object()) return null_json();
  const auto it = obj.find(key);
  return it == obj.end() ? null_json() : *it;
}

// Python's truth value of a JSON value.
inline bool truthy(const json& j) {
  if (j.is_null()) return false;
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number()) return j.get<double>() != 0;
  return !j.empty();  // strings, arrays, objects
}

inline GgufValue text(std::string s) {
  return {GgufValue::Type::String, GgufValue::Type::U8, std::move(s)};
}
inline GgufValue boolean(bool v) {
  return {GgufValue::Type::Bool, GgufValue::Type::U8, v};
}
inline GgufValue array(GgufValue::Type element, std::vector<GgufValue> items) {
  return {GgufValue::Type::Array, element, std::move(items)};
}

// gguf-py's writer: a key set twice keeps its place and takes the new
// value; empty strings and arrays are not written.
class Keys {
 public:
  void set(const std::string& key, GgufValue value) {
    if (const auto* s = std::get_if<std::string>(&value.value);
        s != nullptr && s->empty()) {
      return;
    }
    if (const auto* a = std::get_if<std::vector<GgufValue>>(&value.value);
        a != nullptr && a->empty()) {
      return;
    }
    for (auto& [k, v] : items_) {
      if (k == key) {
        v = std::move(value);
        return;
      }
    }
    items_.emplace_back(key, std::move(value));
  }
  std::vector<std::pair<std::string, GgufValue>> take() {
    return std::move(items_);
  }

 private:
  std::vector<std::pair<std::string, GgufValue>> items_;
};

inline bool is_type(const json& step, std::string_view type) {
  return get(step, "type").is_string() &&
         get(step, "type").get<std::string>() == type;
}

// The keys and flags gguf-py's SpecialVocab adds for the tokenizer in
// `dir` (`tok` its tokenizer.json, `n_vocab` tokens in the token list):
// special token ids, add_*_token, chat templates, normalizer flags.
void write_special_vocab(const fs::path& dir, const json& tok,
                         std::int64_t n_vocab, Keys& keys);

}  // namespace tessel::gguf_tokenizer

#include "io/json_strict.hpp"

#include <fmt/format.h>

#include <vector>

#include "io/read_file.hpp"
#include "tessel/core/error.hpp"

namespace tessel::io {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxDepth = 512;

// Builds the DOM from nlohmann's SAX events. Not nlohmann's callback
// parser: that one scans the whole parent object at the end of every child
// object, which is quadratic in a safetensors header's tensor count (80k
// tensors: 50 s). A key is inserted into its object as it is read, so a
// second one is found by the same lookup, with no set of keys beside it.
class StrictBuilder {
 public:
  explicit StrictBuilder(json& root) : root_(root) {}

  bool null() { return place(json(nullptr)) != nullptr; }
  bool boolean(bool v) { return place(json(v)) != nullptr; }
  bool number_integer(json::number_integer_t v) {
    return place(json(v)) != nullptr;
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return place(json(v)) != nullptr;
  }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return place(json(v)) != nullptr;
  }
  bool string(json::string_t& v) {
    return place(json(std::move(v))) != nullptr;
  }
  bool binary(json::binary_t& v) {
    return place(json::binary(std::move(v))) != nullptr;
  }

  bool start_object(std::size_t) { return enter(json::object()); }
  bool start_array(std::size_t) { return enter(json::array()); }
  bool end_object() { return leave(); }
  bool end_array() { return leave(); }

  bool key(json::string_t& k) {
    auto& object = stack_.back()->get_ref<json::object_t&>();
    const auto [it, inserted] = object.emplace(std::move(k), nullptr);
    if (!inserted) {
      defect_ =
          JsonDefect{"key '" + it->first + "' appears twice in one object", -1};
      return false;
    }
    slot_ = &it->second;
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    defect_ = JsonDefect{e.what(), static_cast<std::int64_t>(position)};
    return false;
  }

  const std::optional<JsonDefect>& defect() const { return defect_; }

 private:
  // Puts `v` where the parser is: the root, the next element of the open
  // array, or the value of the key just read.
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      auto& array = top.get_ref<json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool enter(json&& container) {
    if (stack_.size() >= kMaxDepth) {
      defect_ = JsonDefect{"nesting deeper than 512 levels", -1};
      return false;
    }
    stack_.push_back(place(std::move(container)));
    return true;
  }
  bool leave() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  // The open containers. A pointer into an array stays valid: nothing is
  // added to that array while one of its elements is open.
  std::vector<json*> stack_;
  json* slot_ = nullptr;
  std::optional<JsonDefect> defect_;
};

}  // namespace

std::optional<JsonDefect> parse_json_strict(std::string_view text, json& out) {
  out = json();
  StrictBuilder builder(out);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const json::exception& e) {
    // e.g. out_of_range 406, a number too large for a double.
    out = json();
    return JsonDefect{e.what(), -1};
  }
  if (!ok || builder.defect()) {
    out = json();
    if (builder.defect()) return builder.defect();
    return JsonDefect{"not valid JSON", -1};
  }
  return std::nullopt;
}

json read_optional_json(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return json();
  json j;
  if (const auto defect = parse_json_strict(read_text_file(path), j)) {
    throw FormatError(ErrorCode::MalformedFile,
                      fmt::format("[read] '{}' is not valid JSON: {}",
                                  path.string(), defect->message),
                      defect->byte);
  }
  return j;
}

}  // namespace tessel::io

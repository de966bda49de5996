#include "io/json_strict.hpp"

#include <fmt/format.h>

#include <unordered_set>
#include <vector>

#include "io/read_file.hpp"
#include "tessel/core/error.hpp"

namespace tessel::io {

namespace {

using json = nlohmann::json;

constexpr std::size_t kMaxDepth = 512;

// nlohmann's DOM builder with the keys of each open object remembered. Not
// its callback parser: that one scans the whole parent object at the end
// of every child object, which is quadratic in a safetensors header's
// tensor count (80k tensors: 50 s).
class StrictBuilder {
 public:
  explicit StrictBuilder(json& out) : dom_(out, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) {
    return dom_.number_integer(v);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return dom_.number_unsigned(v);
  }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return dom_.string(v); }
  bool binary(json::binary_t& v) { return dom_.binary(v); }

  bool start_object(std::size_t n) {
    if (!enter()) return false;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      defect_ = JsonDefect{"key '" + k + "' appears twice in one object", -1};
      return false;
    }
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!enter()) return false;
    return dom_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }

  bool parse_error(std::size_t position, const std::string& /*token*/,
                   const nlohmann::detail::exception& e) {
    defect_ = JsonDefect{e.what(), static_cast<std::int64_t>(position)};
    return false;
  }

  const std::optional<JsonDefect>& defect() const { return defect_; }

 private:
  bool enter() {
    if (++depth_ <= kMaxDepth) return true;
    defect_ = JsonDefect{"nesting deeper than 512 levels", -1};
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<std::unordered_set<std::string>> keys_;
  std::size_t depth_ = 0;
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

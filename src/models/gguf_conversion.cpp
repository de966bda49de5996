// The converter's naming and dtype rules (conversion/base.py's
// prepare_tensors and prepare_metadata, gguf-py's metadata.py and
// utility.py).
#include "tessel/models/gguf_conversion.hpp"

#include <cmath>
#include <regex>

#include "core/check.hpp"

namespace tessel {

namespace {

void check_outtype(DType outtype, const char* op) {
  TESSEL_CHECK(
      outtype == DType::F32 || outtype == DType::F16 || outtype == DType::BF16,
      BadDType, op,
      "a GGUF model is written as f32, f16 or bf16, not {} (tessel "
      "quantize makes the block-quantised mixes)",
      dtype_name(outtype));
}

bool is_ascii_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_ascii_upper(char c) { return c >= 'A' && c <= 'Z'; }

// Python's str.islower() for ASCII: a cased character and no upper case.
bool is_lower_word(const std::string& w) {
  bool cased = false;
  for (char c : w) {
    if (is_ascii_upper(c)) return false;
    cased = cased || is_ascii_lower(c);
  }
  return cased;
}

// Python's str.title() for ASCII: a letter after a non-letter is upper
// case, after a letter lower case.
std::string title_case(const std::string& w) {
  std::string out = w;
  bool previous_cased = false;
  for (char& c : out) {
    const bool cased = is_ascii_lower(c) || is_ascii_upper(c);
    if (cased) {
      c = previous_cased ? static_cast<char>(std::tolower(c))
                         : static_cast<char>(std::toupper(c));
    }
    previous_cased = cased;
  }
  return out;
}

}  // namespace

double f32_shortest_decimal(double value) {
  return std::stod(fmt::format("{}", static_cast<float>(value)));
}

DType gguf_converted_dtype(std::string_view gguf_name, std::int64_t rank,
                           DType outtype) {
  check_outtype(outtype, "gguf_converted_dtype");
  // "Most of the codebase that takes in 1D tensors or norms only handles
  // F32 tensors", and non-".weight" tensors (biases) are kept f32 too.
  if (rank <= 1 || gguf_name.ends_with("_norm.weight") ||
      !gguf_name.ends_with(".weight")) {
    return DType::F32;
  }
  return outtype;
}

std::uint32_t gguf_file_type(DType outtype) {
  check_outtype(outtype, "gguf_file_type");
  return outtype == DType::F32 ? 0 : outtype == DType::F16 ? 1 : 32;
}

std::string gguf_size_label(std::int64_t parameters) {
  const auto n = static_cast<double>(parameters);
  double scaled = n * 1e-3;
  const char* suffix = "K";
  if (n > 1e12) {
    scaled = n * 1e-12;
    suffix = "T";
  } else if (n > 1e9) {
    scaled = n * 1e-9;
    suffix = "B";
  } else if (n > 1e6) {
    scaled = n * 1e-6;
    suffix = "M";
  }
  // Two significant digits at least: Python's round() (ties to even, as
  // nearbyint in the default rounding mode) gives the integer digits.
  std::string digits =
      std::to_string(static_cast<std::int64_t>(std::nearbyint(scaled)));
  digits.erase(0, digits.find_first_not_of('0'));
  const int fix = std::max(2 - static_cast<int>(digits.size()), 0);
  return fmt::format("{:.{}f}{}", scaled, fix, suffix);
}

std::string gguf_model_name(std::string_view model_id) {
  std::string id(model_id);
  if (id.find(' ') == std::string::npos) {
    if (const std::size_t slash = id.find('/'); slash != std::string::npos) {
      id = id.substr(slash + 1);
    }
  }
  for (char& c : id) {
    if (c == '-') c = ' ';
  }
  static const std::regex version_or_number(R"(^(v\d+(?:\.\d+)*|\d.*)$)");
  std::string out;
  std::size_t i = 0;
  while (i < id.size()) {
    const std::size_t start = id.find_first_not_of(" \t\n\r\f\v", i);
    if (start == std::string::npos) break;
    std::size_t end = id.find_first_of(" \t\n\r\f\v", start);
    if (end == std::string::npos) end = id.size();
    std::string word = id.substr(start, end - start);
    if (is_lower_word(word) && !std::regex_match(word, version_or_number)) {
      word = title_case(word);
    }
    if (!out.empty()) out += ' ';
    out += word;
    i = end;
  }
  return out;
}

}  // namespace tessel

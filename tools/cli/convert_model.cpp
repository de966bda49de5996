// What both directions of a model conversion share.
#include "cli/convert_model.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

namespace tessel::cli {

namespace fs = std::filesystem;

bool is_hf_model_directory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) &&
         fs::is_regular_file(path / "config.json", ec);
}

std::int64_t parse_byte_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  std::string unit = text.substr(digits);
  for (char& c : unit) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  const std::pair<const char*, std::int64_t> units[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1000},
      {"MB", 1000'000},
      {"GB", 1000'000'000},
      {"KIB", std::int64_t{1} << 10},
      {"MIB", std::int64_t{1} << 20},
      {"GIB", std::int64_t{1} << 30}};
  if (digits > 0 && digits <= 12) {
    const std::int64_t n = std::stoll(text.substr(0, digits));
    for (const auto& [name, scale] : units) {
      if (unit == name && n > 0 && n <= INT64_MAX / scale) return n * scale;
    }
  }
  throw_error(ErrorCode::BadConfig,
              fmt::format("[convert] --shard-size '{}' is not a size such as "
                          "5GB, 500MB, 2GiB or a byte count",
                          text));
}

void check_decoder_tensors(
    const DecoderConfig& config, const std::vector<Tensor>& tensors,
    const std::string& origin,
    std::function<std::optional<std::string>(std::string_view)> name_in_file) {
  // Building the model checks every parameter's presence and shape (the
  // tensors are views of the mapped file: nothing is read or copied).
  const std::unique_ptr<WeightSource> source =
      tensor_weights(tensors, origin, name_in_file);
  const CausalLM model(config, *source);
  check_no_unexpected_tensors(*source, config, origin, name_in_file);
}

}  // namespace tessel::cli

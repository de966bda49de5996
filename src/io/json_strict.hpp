// JSON from untrusted files, parsed in one linear pass and stricter than
// the JSON grammar: a key that appears twice in one object is refused.
// RFC 8259 leaves duplicates to the reader and nlohmann keeps the last one
// silently, so a safetensors header, a config.json or a tokenizer.json
// could otherwise say two things and be read as either.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tessel::io {

struct JsonDefect {
  std::string message;  // "invalid literal ...", "key 'x' appears twice ..."
  std::int64_t byte;    // where in the text, -1 when the parser cannot say
};

// Parses `text` into `out`; returns what is wrong instead of throwing, so
// each caller raises its own code (E3001 for a file header, E4001 for a
// model config). Nesting deeper than 512 levels is refused too.
std::optional<JsonDefect> parse_json_strict(std::string_view text,
                                            nlohmann::json& out);

// An optional side file of a checkpoint (config.json beside a GGUF,
// generation_config.json): null when `path` does not exist, its JSON when
// it does, E3001 when it is there but not valid JSON or not a regular file.
nlohmann::json read_optional_json(const std::filesystem::path& path);

}  // namespace tessel::io

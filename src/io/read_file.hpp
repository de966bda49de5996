// Small input files (configs, indexes, tokenizers) read whole.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tessel::io {

// The whole regular file at `path`. E3001 for a FIFO, socket, device or
// directory (which would block or mean nothing), E3002 when it cannot be
// opened or read.
std::vector<std::uint8_t> read_file(const std::filesystem::path& path);
std::string read_text_file(const std::filesystem::path& path);

}  // namespace tessel::io

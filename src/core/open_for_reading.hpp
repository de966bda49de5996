// Opening an input file without ever blocking on it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace tessel::detail {

struct OpenedFile {
  int fd;              // the caller closes it
  std::uint64_t size;  // bytes, when it was opened
};

// A read-only descriptor of the regular file at
// `path`. A FIFO, socket or device would block in open() or read() until
// some other process acted, so anything but a regular file is refused at
// once with E3001 naming what it is; a missing or unreadable path is E3002.
OpenedFile open_for_reading(const std::filesystem::path& path,
                            std::string_view op);

}  // namespace tessel::detail

#include "io/read_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"
#include "core/open_for_reading.hpp"

namespace tessel::io {

namespace {

template <class Bytes>
Bytes read_whole(const std::filesystem::path& path) {
  const auto [fd, size] = detail::open_for_reading(path, "read");
  Bytes data;
  // The size is a hint only (the file may change under us); reading until
  // end of file decides.
  data.reserve(
      static_cast<std::size_t>(std::min<std::uint64_t>(size, 1 << 30)));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      detail::fail(ErrorCode::IoFailure, "read", "reading '{}' failed: {}",
                   path.string(), std::strerror(err));
    }
    if (n == 0) break;
    data.insert(data.end(), buffer, buffer + n);
  }
  ::close(fd);
  return data;
}

}  // namespace

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  return read_whole<std::vector<std::uint8_t>>(path);
}

std::string read_text_file(const std::filesystem::path& path) {
  return read_whole<std::string>(path);
}

}  // namespace tessel::io

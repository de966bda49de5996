#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/check.hpp"

namespace tessel::io {

namespace {

void write_all(int fd, std::span<const std::uint8_t> data,
               const std::string& name) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    TESSEL_CHECK(n > 0, IoFailure, "write", "writing '{}' failed: {}", name,
                 std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::uint8_t> header,
                           std::span<const std::uint8_t> body) {
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmpl =
      (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  TESSEL_CHECK(fd >= 0, IoFailure, "write",
               "cannot create a temporary file in '{}': {}", dir.string(),
               std::strerror(errno));
  try {
    write_all(fd, header, path.string());
    write_all(fd, body, path.string());
    TESSEL_CHECK(::fsync(fd) == 0, IoFailure, "write",
                 "flushing '{}' failed: {}", path.string(),
                 std::strerror(errno));
    ::fchmod(fd, 0644);
    ::close(fd);
    TESSEL_CHECK(std::rename(tmpl.c_str(), path.c_str()) == 0, IoFailure,
                 "write", "renaming onto '{}' failed: {}", path.string(),
                 std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw;
  }
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  TESSEL_CHECK(fd >= 0, IoFailure, "read", "cannot open '{}': {}",
               path.string(), std::strerror(errno));
  std::vector<std::uint8_t> data;
  std::uint8_t buffer[1 << 16];
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

}  // namespace tessel::io

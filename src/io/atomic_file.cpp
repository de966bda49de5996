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

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  const std::filesystem::path dir = path_.has_parent_path()
                                        ? path_.parent_path()
                                        : std::filesystem::path(".");
  temp_ = (dir / ("." + path_.filename().string() + ".XXXXXX")).string();
  fd_ = ::mkstemp(temp_.data());
  TESSEL_CHECK(fd_ >= 0, IoFailure, "write",
               "cannot create a temporary file in '{}': {}", dir.string(),
               std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::write(std::span<const std::uint8_t> data) {
  TESSEL_CHECK(fd_ >= 0, IoFailure, "write", "'{}' is already committed",
               path_.string());
  write_all(fd_, data, path_.string());
  written_ += static_cast<std::int64_t>(data.size());
#ifdef __linux__
  // Start the disk writes of each finished 64 MiB now, without waiting for
  // them, so that they overlap the work that produces the rest and
  // commit's fsync waits only for the tail (a 1.2 GB model otherwise
  // spends a second in it). Only a hint: its failure changes nothing.
  constexpr std::int64_t kWriteBehind = std::int64_t{64} << 20;
  if (written_ - started_ >= kWriteBehind) {
    ::sync_file_range(fd_, started_, written_ - started_,
                      SYNC_FILE_RANGE_WRITE);
    started_ = written_;
  }
#endif
}

void AtomicFile::commit() {
  TESSEL_CHECK(fd_ >= 0, IoFailure, "write", "'{}' is already committed",
               path_.string());
  TESSEL_CHECK(::fsync(fd_) == 0, IoFailure, "write",
               "flushing '{}' failed: {}", path_.string(),
               std::strerror(errno));
  ::fchmod(fd_, 0644);
  const int fd = fd_;
  fd_ = -1;
  const bool closed = ::close(fd) == 0;
  if (!closed || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    detail::fail(ErrorCode::IoFailure, "write", "finishing '{}' failed: {}",
                 path_.string(), std::strerror(err));
  }
}

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::uint8_t> header,
                           std::span<const std::uint8_t> body) {
  AtomicFile file(path);
  file.write(header);
  file.write(body);
  file.commit();
}

}  // namespace tessel::io

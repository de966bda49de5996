#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/check.hpp"
#include "core/mapped_file_guard.hpp"
#include "io/owned_temporaries.hpp"

namespace tessel::io {

namespace {

void write_all(int fd, std::span<const std::uint8_t> data,
               const std::string& name) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // EFAULT: the data are pages of a mapped input that another process
    // cut short; the kernel reports that instead of a SIGBUS. (Bytes that
    // AtomicFile gathers into a piece first are copied, and a cut page
    // there reads as zeros and is reported by check_mapped_files, which
    // the writers call before they commit.)
    if (n < 0 && errno == EFAULT)
      detail::check_mapped_address(data.data() + done);
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
  remove_stale_temporaries(dir);
  // An anonymous file needs /proc/self/fd to be given a name at commit
  // (linkat with AT_EMPTY_PATH needs a capability).
  static const bool can_link = ::access("/proc/self/fd", X_OK) == 0;
  if (can_link) {
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      // Nobody can reach it before it is linked, so the lock is never
      // contested; it covers the moment it has a name at commit.
      lock_anonymous_temporary(fd_);
      return;
    }
  }
  // Filesystems without O_TMPFILE (EOPNOTSUPP, EISDIR on old kernels).
  for (;;) {
    temp_ = temporary_template(path_, kTemporaryFileMarker);
    fd_ = ::mkstemp(temp_.data());
    TESSEL_CHECK(fd_ >= 0, IoFailure, "write",
                 "cannot create a temporary file in '{}': {}", dir.string(),
                 std::strerror(errno));
    if (own_temporary(fd_)) return;
    ::close(fd_);  // removed by a cleaner before we locked it: again
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    ::close(fd_);
  }
}

// Gives the anonymous file a name: the target itself when it does not
// exist (linkat cannot replace), else a marked temporary renamed over it.
void AtomicFile::link_anonymous() {
  const std::string self = fmt::format("/proc/self/fd/{}", fd_);
  if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(),
               AT_SYMLINK_FOLLOW) == 0) {
    return;
  }
  if (errno != EEXIST) {
    detail::fail(ErrorCode::IoFailure, "write", "finishing '{}' failed: {}",
                 path_.string(), std::strerror(errno));
  }
  std::random_device entropy;
  for (int attempt = 0;; ++attempt) {
    std::string name = temporary_template(path_, kTemporaryFileMarker);
    name.resize(name.size() - 6);
    name += fmt::format("{:06x}", entropy() & 0xffffff);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(),
                 AT_SYMLINK_FOLLOW) == 0) {
      temp_ = std::move(name);
      return;
    }
    TESSEL_CHECK(errno == EEXIST && attempt < 100, IoFailure, "write",
                 "finishing '{}' failed: {}", path_.string(),
                 std::strerror(errno));
  }
}

void AtomicFile::check_writable() const {
  TESSEL_CHECK(fd_ >= 0, IoFailure, "write", "'{}' is already committed",
               path_.string());
  TESSEL_CHECK(!failed_, IoFailure, "write",
               "an earlier write of '{}' failed; it cannot be finished",
               path_.string());
}

void AtomicFile::write(std::span<const std::uint8_t> data) {
  check_writable();
  if (!pending_.empty()) {
    const std::size_t take =
        std::min(data.size(), kPieceBytes - pending_.size());
    pending_.insert(pending_.end(), data.begin(), data.begin() + take);
    data = data.subspan(take);
    if (pending_.size() < kPieceBytes) return;
    hand_to_kernel(pending_);
    pending_.clear();
  }
  // Whole pieces go straight from the caller's buffer; only the rest is
  // copied.
  const std::size_t whole = data.size() / kPieceBytes * kPieceBytes;
  if (whole > 0) hand_to_kernel(data.first(whole));
  pending_.assign(data.begin() + whole, data.end());
}

void AtomicFile::hand_to_kernel(std::span<const std::uint8_t> data) {
  // Part of the bytes may be in the file when write_all throws: the file
  // is then past repair (writing them again would duplicate them).
  failed_ = true;
  write_all(fd_, data, path_.string());
  failed_ = false;
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

void AtomicFile::commit(bool sync) {
  check_writable();
  if (!pending_.empty()) {
    hand_to_kernel(pending_);
    pending_ = {};
  }
  TESSEL_CHECK(!sync || ::fsync(fd_) == 0, IoFailure, "write",
               "flushing '{}' failed: {}", path_.string(),
               std::strerror(errno));
  ::fchmod(fd_, 0644);
  if (temp_.empty()) link_anonymous();
  // The descriptor (and with it the lock) stays open until the name is
  // final, so no cleaner can take the temporary for abandoned.
  if (!temp_.empty() && std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    detail::fail(ErrorCode::IoFailure, "write", "finishing '{}' failed: {}",
                 path_.string(), std::strerror(err));
  }
  temp_.clear();
  const int fd = fd_;
  fd_ = -1;
  TESSEL_CHECK(::close(fd) == 0, IoFailure, "write",
               "finishing '{}' failed: {}", path_.string(),
               std::strerror(errno));
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

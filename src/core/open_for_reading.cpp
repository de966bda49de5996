#include "core/open_for_reading.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/check.hpp"

namespace tessel::detail {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

[[noreturn]] void not_a_file(std::string_view op, const std::string& name,
                             mode_t mode) {
  throw FormatError(ErrorCode::MalformedFile,
                    fmt::format("[{}] '{}' is {}; tessel reads model and "
                                "tensor files only from regular files",
                                op, name, kind_of(mode)));
}

}  // namespace

OpenedFile open_for_reading(const std::filesystem::path& path,
                            std::string_view op) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer.
  // It changes nothing for regular files, which never block, and mmap and
  // read ignore it there.
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd < 0) {
    // A socket cannot be opened at all (ENXIO): say what it is.
    const int err = errno;
    if (::stat(name.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      not_a_file(op, name, st.st_mode);
    }
    fail(ErrorCode::IoFailure, op, "cannot open '{}': {}", name,
         std::strerror(err));
  }
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    fail(ErrorCode::IoFailure, op, "cannot stat '{}': {}", name,
         std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    not_a_file(op, name, st.st_mode);
  }
  return {fd, static_cast<std::uint64_t>(st.st_size)};
}

}  // namespace tessel::detail

#include "io/owned_temporaries.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <system_error>

namespace tessel::io {

namespace fs = std::filesystem;

std::string temporary_template(const fs::path& target, const char* marker) {
  const fs::path dir =
      target.has_parent_path() ? target.parent_path() : fs::path(".");
  return (dir / ("." + target.filename().string() + marker + "XXXXXX"))
      .string();
}

void lock_anonymous_temporary(int fd) {
  // Without locks (rare filesystems) the temporary is simply not cleaned
  // up by others; the write goes on.
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
}

bool own_temporary(int fd) {
  lock_anonymous_temporary(fd);
  // A cleaner may have taken the lock in the moment between the entry's
  // creation and ours, judged it stale and removed it.
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_nlink > 0;
}

namespace {

bool is_marked(const std::string& name) {
  return name.size() > 1 && name[0] == '.' &&
         (name.find(kTemporaryFileMarker) != std::string::npos ||
          name.find(kStagedDirectoryMarker) != std::string::npos);
}

// Removes `entry` if no process holds its lock. The lock is held while
// removing, so its owner-to-be (own_temporary) sees the entry gone.
void remove_if_abandoned(const fs::path& entry) {
  const int fd =
      ::open(entry.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  const bool ours_to_judge = ::fstat(fd, &st) == 0 &&
                             (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
                             st.st_uid == ::geteuid();
  if (ours_to_judge && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    std::error_code ec;
    fs::remove_all(entry, ec);
  }
  ::close(fd);  // drops the lock
}

}  // namespace

void remove_stale_temporaries(const fs::path& dir) {
  static std::mutex mutex;
  static std::set<fs::path> scanned;
  {
    // By spelling, without a system call: a directory written into
    // thousands of times is scanned once (or, spelled two ways, twice).
    std::error_code ec;
    const fs::path absolute = fs::absolute(dir, ec).lexically_normal();
    const std::lock_guard<std::mutex> lock(mutex);
    if (!scanned.insert(ec ? dir : absolute).second) return;
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (is_marked(it->path().filename().string())) {
      remove_if_abandoned(it->path());
    }
  }
}

}  // namespace tessel::io

#include "io/staged_directory.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "io/owned_temporaries.hpp"

#include "tessel/core/error.hpp"

namespace tessel::io {

namespace fs = std::filesystem;

StagedDirectory::StagedDirectory(const fs::path& target)
    : target_(fs::absolute(target).lexically_normal()) {
  if (!target_.has_filename()) target_ = target_.parent_path();  // "out/"
  const fs::path parent = target_.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  io::remove_stale_temporaries(parent);
  for (;;) {
    std::string tmpl =
        io::temporary_template(target_, io::kStagedDirectoryMarker);
    if (ec || ::mkdtemp(tmpl.data()) == nullptr) {
      throw_error(ErrorCode::IoFailure,
                  fmt::format("[write] cannot create a directory in '{}'",
                              parent.string()));
    }
    staged_ = tmpl;
    lock_fd_ = ::open(staged_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lock_fd_ < 0) {
      fs::remove(staged_, ec);
      throw_error(ErrorCode::IoFailure,
                  fmt::format("[write] cannot open '{}'", staged_.string()));
    }
    if (io::own_temporary(lock_fd_)) return;
    ::close(lock_fd_);  // a cleaner took it for abandoned: make another
    lock_fd_ = -1;
  }
}

StagedDirectory::~StagedDirectory() {
  if (!committed_) {
    std::error_code ec;
    fs::remove_all(staged_, ec);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void StagedDirectory::sync_contents() const {
  if (::syncfs(lock_fd_) != 0) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("[write] flushing '{}' failed", staged_.string()));
  }
}

void StagedDirectory::commit() {
  std::error_code ec;
  fs::permissions(staged_,
                  fs::perms::owner_all | fs::perms::group_read |
                      fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  if (fs::exists(target_, ec) && !fs::is_directory(target_, ec)) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("[write] '{}' exists and is not a directory",
                            target_.string()));
  }
  // std::filesystem has no atomic exchange; rename(2) and renameat2 do.
  if (!fs::exists(target_, ec)) {
    if (::rename(staged_.c_str(), target_.c_str()) != 0) {
      throw_error(ErrorCode::IoFailure,
                  fmt::format("[write] moving the new directory to '{}' failed",
                              target_.string()));
    }
    committed_ = true;
    return;
  }
  if (::renameat2(AT_FDCWD, staged_.c_str(), AT_FDCWD, target_.c_str(),
                  RENAME_EXCHANGE) != 0) {
    throw_error(ErrorCode::IoFailure,
                fmt::format("[write] swapping the new directory into '{}' "
                            "failed",
                            target_.string()));
  }
  // staged_ now holds the previous contents.
  fs::remove_all(staged_, ec);
  committed_ = true;
}

}  // namespace tessel::io

// Output directories that appear whole or not at all: everything is
// written into a hidden sibling directory, which then replaces the target
// in one step (readers see the old contents or the new, never a mixture).
// The staging directory is locked by its writer while it lives, so one left
// by a killed run is removed by the next (io/owned_temporaries.hpp).
#pragma once

#include <filesystem>

namespace tessel::io {

class StagedDirectory {
 public:
  // Creates the hidden staging directory next to `target` (E3002).
  explicit StagedDirectory(const std::filesystem::path& target);
  // Removes the staging directory unless committed.
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  const std::filesystem::path& path() const { return staged_; }
  // Makes everything written into the staging directory durable at once
  // (syncfs), for files written without their own fsync. E3002 on failure.
  void sync_contents() const;
  // Swaps the staged directory in for the target (renameat2 exchange when
  // the target exists) and removes the previous contents. E3002 when the
  // target exists and is not a directory, or the swap fails.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path staged_;
  int lock_fd_ = -1;  // holds the staging directory's ownership lock
  bool committed_ = false;
};

}  // namespace tessel::io

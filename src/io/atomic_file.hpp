// Atomic output files: everything is written to a temporary file in the
// target's directory, flushed, then renamed over the target, so a failure
// never leaves a half-written file behind. The temporary is anonymous
// (O_TMPFILE) where the filesystem allows, so even a killed process leaves
// nothing; elsewhere it is a marked name the next writer removes
// (owned_temporaries.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/huge_page.hpp"

namespace tessel::io {

// A file written in pieces that appears at `path` only on commit(); a
// destroyed, uncommitted AtomicFile removes its temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Takes the bytes (the caller's buffer is free again on return). A
  // write that fails leaves the file unusable: write and commit then
  // refuse (E3002), and the destructor removes the temporary.
  void write(std::span<const std::uint8_t> data);
  // Flushes to disk (unless the caller syncs many files at once later) and
  // renames onto the target (E3002 on failure).
  void commit(bool sync = true);

  // Bytes the kernel holds: whole 2 MiB pieces until commit (the rest of
  // what write took waits in memory).
  std::int64_t bytes_in_file() const { return written_; }

 private:
  void link_anonymous();
  void check_writable() const;  // neither committed nor failed, or E3002
  void hand_to_kernel(std::span<const std::uint8_t> data);

  // The file reaches the kernel in whole 2 MiB pieces at 2 MiB offsets:
  // its page cache then holds 2 MiB folios, which a later mapping of the
  // file (a model being run) reads through 2 MiB pages. Writes that
  // straddle the boundaries leave small folios, and models written so
  // decoded 1-10 % slower until their pages left the cache
  // (BENCHMARKS.md, twenty-fifth pass).
  static constexpr std::size_t kPieceBytes = detail::kHugePageBytes;
  std::vector<std::uint8_t> pending_;  // bytes past the last whole piece

  std::filesystem::path path_;
  std::string temp_;  // the temporary's name; empty while it has none
  int fd_ = -1;
  std::int64_t written_ = 0;  // bytes handed to the kernel
  bool failed_ = false;       // a write failed part-way
  std::int64_t started_ = 0;  // bytes whose writeback has been started
};

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::uint8_t> header,
                           std::span<const std::uint8_t> body);

}  // namespace tessel::io

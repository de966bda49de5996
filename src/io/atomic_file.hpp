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

namespace tessel::io {

// A file written in pieces that appears at `path` only on commit(); a
// destroyed, uncommitted AtomicFile removes its temporary file.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const std::uint8_t> data);
  // Flushes to disk (unless the caller syncs many files at once later) and
  // renames onto the target (E3002 on failure).
  void commit(bool sync = true);

 private:
  void link_anonymous();
  void write_through(std::span<const std::uint8_t> data);

  // The file reaches the kernel in whole 2 MiB pieces at 2 MiB offsets:
  // its page cache then holds 2 MiB folios, which a later mapping of the
  // file (a model being run) reads through 2 MiB pages. Writes that
  // straddle the boundaries leave small folios, and a model written so
  // decodes 8-12 % slower until its pages leave the cache.
  static constexpr std::size_t kPieceBytes = std::size_t{2} << 20;
  std::vector<std::uint8_t> pending_;  // bytes past the last whole piece

  std::filesystem::path path_;
  std::string temp_;  // the temporary's name; empty while it has none
  int fd_ = -1;
  std::int64_t written_ = 0;  // bytes handed to the kernel
  std::int64_t started_ = 0;  // bytes whose writeback has been started
};

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::uint8_t> header,
                           std::span<const std::uint8_t> body);

}  // namespace tessel::io

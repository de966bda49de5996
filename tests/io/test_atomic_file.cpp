// AtomicFile hands the kernel whole 2 MiB pieces at 2 MiB offsets and keeps
// the rest until the next write or commit: whatever sizes the writes come
// in, the file holds exactly their bytes, in order, and only once
// committed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/atomic_file.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

std::vector<std::uint8_t> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A directory of its own, removed however the test ends.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() /
             (name + "_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  bool empty() const { return fs::is_empty(path); }
};

TEST(AtomicFile, WritesOfAnySizeReachTheFileInWholePiecesAndInOrder) {
  const ScratchDir dir("tessel_atomic");
  const fs::path path = dir.path / "out.bin";
  // Under a piece; to a boundary exactly; nothing; more than a piece from
  // a boundary (one whole piece goes straight through, the rest waits); a
  // write that fills the waiting piece and waits again; a piece's length
  // from mid-piece; a write that fills the waiting piece and then carries
  // two whole ones; a tail that only commit writes.
  const std::int64_t sizes[] = {
      1,        2 * kMiB - 1, 0, 3 * kMiB + 5, 2 * kMiB - 5,
      2 * kMiB, 5 * kMiB + 3, 7};
  std::vector<std::uint8_t> expected;
  {
    io::AtomicFile file(path);
    for (const std::int64_t size : sizes) {
      std::vector<std::uint8_t> piece(static_cast<std::size_t>(size));
      for (std::size_t i = 0; i < piece.size(); ++i) {
        piece[i] = static_cast<std::uint8_t>((expected.size() + i) * 131 % 251);
      }
      file.write(piece);
      expected.insert(expected.end(), piece.begin(), piece.end());
      const auto taken = static_cast<std::int64_t>(expected.size());
      EXPECT_EQ(file.bytes_in_file(), taken / (2 * kMiB) * (2 * kMiB))
          << "after " << taken << " bytes";
    }
    EXPECT_FALSE(fs::exists(path)) << "visible before commit";
    file.commit(false);
  }
  const std::vector<std::uint8_t> got = read_all(path);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

TEST(AtomicFile, AnUncommittedFileLeavesNothingInItsDirectory) {
  const ScratchDir dir("tessel_atomic_abandoned");
  {
    io::AtomicFile file(dir.path / "out.bin");
    const std::vector<std::uint8_t> bytes(3 * kMiB, 1);
    file.write(bytes);
    EXPECT_EQ(file.bytes_in_file(), 2 * kMiB);
  }
  EXPECT_TRUE(dir.empty());
}

}  // namespace
}  // namespace tessel

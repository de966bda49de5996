// AtomicFile hands the kernel whole 2 MiB pieces and keeps the rest until
// the next write or commit: whatever sizes the writes come in, the file
// holds exactly their bytes, in order, and only once committed.
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

std::vector<std::uint8_t> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(AtomicFile, WritesOfAnySizeAcrossThePieceBoundariesKeepTheirBytes) {
  const fs::path path = fs::temp_directory_path() /
                        ("tessel_atomic_" + std::to_string(::getpid()));
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // Under a piece, one byte short of the boundary, none, more than a
  // piece from an unaligned offset, exactly a piece from an aligned one,
  // and a tail that only commit writes.
  const std::size_t sizes[] = {
      1, 2 * kMiB - 1, 0, 3 * kMiB + 5, 2 * kMiB - 5, 2 * kMiB, 7};
  std::vector<std::uint8_t> expected;
  {
    io::AtomicFile file(path);
    for (const std::size_t size : sizes) {
      std::vector<std::uint8_t> piece(size);
      for (std::size_t i = 0; i < size; ++i) {
        piece[i] = static_cast<std::uint8_t>((expected.size() + i) * 131 % 251);
      }
      file.write(piece);
      expected.insert(expected.end(), piece.begin(), piece.end());
    }
    EXPECT_FALSE(fs::exists(path)) << "visible before commit";
    file.commit(false);
  }
  const std::vector<std::uint8_t> got = read_all(path);
  fs::remove(path);
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

TEST(AtomicFile, AnUncommittedFileLeavesNothing) {
  const fs::path path =
      fs::temp_directory_path() /
      ("tessel_atomic_abandoned_" + std::to_string(::getpid()));
  {
    io::AtomicFile file(path);
    const std::vector<std::uint8_t> bytes(3 << 20, 1);
    file.write(bytes);
  }
  EXPECT_FALSE(fs::exists(path));
}

}  // namespace
}  // namespace tessel

// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011). Element
// i of a draw depends only on (seed, the generator's offset, i), so the same
// seed gives the same tensor on every machine and every thread count.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace tessel {

// One Philox4x32 block: 10 rounds over a 128-bit counter with a 64-bit key.
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key);

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) : seed_(seed) {}
  Generator(const Generator& other)
      : seed_(other.seed_), offset_(other.offset_.load()) {}
  Generator& operator=(const Generator& other) {
    seed_ = other.seed_;
    offset_ = other.offset_.load();
    return *this;
  }

  std::uint64_t seed() const { return seed_; }
  // Philox blocks consumed so far; a draw starts at this counter.
  std::uint64_t offset() const { return offset_.load(); }
  void set_offset(std::uint64_t offset) { offset_ = offset; }
  // Reseeds and rewinds to offset 0.
  void manual_seed(std::uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  // Claims `blocks` consecutive counters and returns the first (thread-safe).
  std::uint64_t reserve(std::uint64_t blocks) {
    return offset_.fetch_add(blocks);
  }
  // The four 32-bit words of block `counter`.
  std::array<std::uint32_t, 4> block(std::uint64_t counter) const;

 private:
  std::uint64_t seed_;
  std::atomic<std::uint64_t> offset_{0};
};

// The generator factories use when none is passed (seed 0 until reseeded).
Generator& default_generator();
void manual_seed(std::uint64_t seed);

}  // namespace tessel

// The codebooks of GGUF's codebook ("IQ") block types: the 16 values of the
// 4-bit non-linear types (IQ4_NL, IQ4_XS), the sign-parity table the IQ2 and
// IQ3 types share, and the lattice grids of IQ1/IQ2/IQ3 (iq_grids.cpp). All
// define the formats; none may change.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace tessel::quant {

// IQ2/IQ3 signs: a group of 8 values stores 7 sign bits (bit j set: value j
// negative); the 8th is implied, making the count of negatives even. Entry
// s is the full 8-bit mask: s with its parity as bit 7 (ggml's
// ksigns_iq2xs, computed instead of listed).
constexpr std::uint8_t iq_signs_from7(unsigned s) {
  return static_cast<std::uint8_t>(s | ((std::popcount(s) & 1u) << 7));
}
inline constexpr std::array<std::uint8_t, 128> kIqSigns = [] {
  std::array<std::uint8_t, 128> t{};
  for (unsigned s = 0; s < 128; ++s) t[s] = iq_signs_from7(s);
  return t;
}();

// The lattice grids (iq_grids.cpp): entry i packs its 8 (uint64) or 4
// (uint32) values as bytes, least significant first. IQ2 and IQ3 grids hold
// unsigned magnitudes; the IQ1 grid holds int8 values in {-1, 0, 1}.
extern const std::uint64_t kIq2XxsGrid[256];
extern const std::uint64_t kIq2XsGrid[512];
extern const std::uint64_t kIq2SGrid[1024];
extern const std::uint32_t kIq3XxsGrid[256];
extern const std::uint32_t kIq3SGrid[512];
extern const std::uint64_t kIq1SGrid[2048];

// Byte j (0 = least significant) of a grid entry.
constexpr std::uint8_t grid_byte(std::uint64_t entry, int j) {
  return static_cast<std::uint8_t>(entry >> (8 * j));
}

}  // namespace tessel::quant

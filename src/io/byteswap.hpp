// Reverses the bytes of each of `count` elements of `size` bytes in place
// (big-endian data on a little-endian host).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessel::io {

inline void byteswap(void* data, std::int64_t count, int size) {
  auto* p = static_cast<std::uint8_t*>(data);
  for (std::int64_t i = 0; i < count; ++i, p += size) std::reverse(p, p + size);
}

}  // namespace tessel::io

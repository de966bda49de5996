// Byte-order helpers for data stored in the other byte order (big-endian
// data on a little-endian host).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessel/core/device.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel::io {

// Reverses the bytes of each of `count` elements of `size` bytes in place.
inline void byteswap(void* data, std::int64_t count, int size) {
  auto* p = static_cast<std::uint8_t*>(data);
  for (std::int64_t i = 0; i < count; ++i, p += size) std::reverse(p, p + size);
}

// The scalar whose bytes start at `p`, stored in the other byte order
// (integers and floating point alike; `p` need not be aligned).
template <class T>
T load_swapped(const void* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::uint8_t b[sizeof(T)];
  std::memcpy(b, p, sizeof(T));
  std::reverse(b, b + sizeof(T));
  T v;
  std::memcpy(&v, b, sizeof(T));
  return v;
}

// A new row-major CPU tensor with `src`'s elements, whose bytes are in the
// other byte order, swapped to this host's (one copy, then the swap). A
// complex element is two numbers, each swapped on its own.
inline Tensor swapped_copy(const Tensor& src) {
  const DeviceGuard on_cpu(Device::cpu());  // file data is host memory
  Tensor out = empty(src.shape(), src.dtype());
  out.copy_(src);
  const int parts = is_complex(src.dtype()) ? 2 : 1;
  byteswap(out.mutable_raw_data(), out.numel() * parts,
           element_size(src.dtype()) / parts);
  return out;
}

}  // namespace tessel::io

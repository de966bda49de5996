// Helpers shared by the fuzz targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessel/tessel.hpp"

namespace tessel::fuzz {

// The input copied into a buffer of exactly its size, so that ASan sees
// any read past the end (libFuzzer's own buffer may be larger).
inline Storage exact_storage(const std::uint8_t* data, std::size_t size) {
  auto* copy = new std::uint8_t[size == 0 ? 1 : size];
  if (size > 0) std::memcpy(copy, data, size);
  return Storage::borrow(
      copy, static_cast<std::int64_t>(size), Device::cpu(),
      [](void* p) { delete[] static_cast<std::uint8_t*>(p); },
      /*writable=*/false);
}

// Reads every byte of a tensor's data (what a parser claims is there).
inline void touch(const Tensor& t) {
  volatile std::uint8_t sink = 0;
  const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
  const std::int64_t n = storage_bytes(t.dtype(), t.numel());
  for (std::int64_t i = 0; i < n; ++i) sink = sink ^ bytes[i];
}

}  // namespace tessel::fuzz

// NumPy .npy files (format versions 1, 2 and 3). Reading validates the whole
// header before allocating; big-endian data is byte-swapped and Fortran
// order is transposed on load. Writing is atomic (temp file, then rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "tessel/core/tensor.hpp"
#include "tessel/io/tensor_source.hpp"

namespace tessel {

// The file is mapped copy-on-write: little-endian data is a zero-copy,
// writable view of it (writes stay private) and Fortran order a
// transposed view; big-endian data is swapped into a copy. E3002 when the file
// cannot be read; E3001 (with the byte offset) when it is not a valid .npy or
// holds a dtype tessel does not have.
Tensor load_npy(const std::filesystem::path& path);
// The same from bytes in memory (what load_npy reads).
Tensor parse_npy(std::span<const std::uint8_t> bytes);

// Writes row-major little-endian data, format 1.0 (2.0 for huge headers).
// Packed and block-quantised dtypes have no NumPy equivalent: E2201.
void save_npy(const std::filesystem::path& path, const Tensor& t);
// Whether a written file is on disk when the call returns (fsync), or left
// to the caller, who makes many files durable at once (one syncfs for a
// directory of 80k .npy files instead of 80k fsyncs: 25 s against 1).
enum class Durability { Synced, CallerSyncs };

// Tensor `index` of `source`, its bytes streamed when they are written.
void save_npy(const std::filesystem::path& path, TensorSource& source,
              std::size_t index, Durability durability = Durability::Synced);

}  // namespace tessel

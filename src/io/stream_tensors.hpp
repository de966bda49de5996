// The data half of every writer: a tensor's bytes from a TensorSource into
// an atomic output file, chunk by chunk.
#pragma once

#include <cstdint>
#include <vector>

#include "io/atomic_file.hpp"
#include "tessel/io/tensor_source.hpp"

namespace tessel::io {

// Writes all of tensor i's bytes: straight from memory when the source
// has them, otherwise through `buffer` (a few MiB, reused between calls).
void write_tensor_data(AtomicFile& file, TensorSource& source, std::size_t i,
                       std::vector<std::uint8_t>& buffer);

}  // namespace tessel::io

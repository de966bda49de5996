#include "io/stream_tensors.hpp"

#include <algorithm>

#include "tessel/core/storage.hpp"

namespace tessel::io {

namespace {

// Large enough that a write() per chunk costs nothing, small enough to
// stay in the L2/L3 caches between the cast that fills it and the write
// that empties it.
constexpr std::int64_t kChunkBytes = 2 << 20;

}  // namespace

void write_tensor_data(AtomicFile& file, TensorSource& source, std::size_t i,
                       std::vector<std::uint8_t>& buffer) {
  const TensorSpec& spec = source.spec(i);
  const std::int64_t total = spec.nbytes();
  if (total == 0) return;
  if (const std::uint8_t* bytes = source.bytes(i)) {
    // In pieces only so that progress moves during a huge tensor.
    constexpr std::int64_t kPiece = std::int64_t{64} << 20;
    for (std::int64_t offset = 0; offset < total; offset += kPiece) {
      const std::int64_t end = std::min(total, offset + kPiece);
      file.write({bytes + offset, static_cast<std::size_t>(end - offset)});
      check_mapped_files();  // the input may have shrunk under us
      source.written(i, end);
    }
    return;
  }
  const std::int64_t unit = storage_unit_bytes(spec.dtype);
  const std::int64_t chunk = std::max(unit, kChunkBytes / unit * unit);
  buffer.resize(static_cast<std::size_t>(std::min(chunk, total)));
  for (std::int64_t offset = 0; offset < total; offset += chunk) {
    const auto n = static_cast<std::size_t>(std::min(chunk, total - offset));
    source.read(i, offset, {buffer.data(), n});
    check_mapped_files();  // a cut input reads as zeros: never write them
    file.write({buffer.data(), n});
    source.written(i, offset + static_cast<std::int64_t>(n));
  }
}

}  // namespace tessel::io

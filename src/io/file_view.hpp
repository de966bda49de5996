// Zero-copy tensors over the data of a mapped (or borrowed) model file.
#pragma once

#include <cstdint>

#include "tessel/core/storage.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::io {

// The row-major tensor stored in `nbytes` at byte `offset` of `file`: a
// view of the file's storage when the offset is a whole number of
// elements; otherwise (odd offsets in safetensors, block data in GGUF) a
// storage that borrows that exact address and keeps the file alive. Never
// a copy. The caller has checked that the range lies inside the file.
inline Tensor file_view(const Storage& file, std::uint64_t offset,
                        std::int64_t nbytes, const Shape& shape, DType dtype) {
  const Strides strides = contiguous_strides(shape);
  if (is_byte_addressable(dtype) &&
      offset % static_cast<std::uint64_t>(element_size(dtype)) == 0) {
    return Tensor(file, shape, strides,
                  static_cast<std::int64_t>(offset) / element_size(dtype),
                  dtype);
  }
  auto* base = static_cast<std::uint8_t*>(file.data());
  Storage view = Storage::borrow(
      base + offset, nbytes, file.device(), [keep = file](void*) {},
      file.writable());
  return Tensor(view, shape, strides, 0, dtype);
}

}  // namespace tessel::io

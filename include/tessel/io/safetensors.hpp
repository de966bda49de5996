// safetensors files (DESIGN §5): an 8-byte little-endian header length, a
// JSON header naming each tensor's dtype, shape and byte range, then the
// data. Reading maps the file and validates the whole header before any
// tensor exists: the loaded tensors' storage is the mapping (zero copy).
// Writing is atomic (temp file, then rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/storage.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel {

struct SafetensorsFile {
  // In the order of their data in the file; each tensor carries its name.
  std::vector<Tensor> tensors;
  // The optional "__metadata__" string map.
  std::map<std::string, std::string> metadata;

  bool contains(const std::string& name) const;
  // E3001 naming the missing tensor.
  const Tensor& at(const std::string& name) const;
};

// E3002 when the file cannot be opened or mapped; E3001 (with the byte
// offset) for a malformed header, a dtype tessel does not have, byte
// ranges that do not tile the data exactly, or a size that overflows.
// A tensor whose offset is not a multiple of its element size still maps
// without a copy (its storage then borrows the mapping).
SafetensorsFile load_safetensors(const std::filesystem::path& path,
                                 MapMode mode = MapMode::ReadOnly);
// The same over bytes already in memory (the fuzzer's entry point); the
// tensors borrow `file`.
SafetensorsFile parse_safetensors(const Storage& file);

// Writes `tensors` under their names (each must be named, names unique,
// E2102 otherwise) in row-major little-endian order, sorted like the
// reference writer (by decreasing element size, then name) with the header
// padded to a multiple of 8. Packed and block-quantised dtypes have no
// safetensors dtype: E2201.
void save_safetensors(const std::filesystem::path& path,
                      const std::vector<Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace tessel

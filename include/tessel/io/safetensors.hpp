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
#include "tessel/io/tensor_source.hpp"

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
// The same, streaming each tensor's bytes from `source` when it is
// written (everything is validated before the file is created).
void save_safetensors(const std::filesystem::path& path, TensorSource& source,
                      const std::map<std::string, std::string>& metadata = {});

// A HuggingFace checkpoint: `dir/model.safetensors.index.json` (or that
// index file itself), {"metadata": {...}, "weight_map": {tensor: shard}},
// naming shard files in the same directory; or, without an index,
// `dir/model.safetensors`. Every shard is mapped (zero copy). E3001 when a
// tensor the index names is not in its shard, a shard holds a tensor the
// index does not give it, a name appears twice, or a shard name leaves the
// directory; E3002 when a file is missing.
SafetensorsFile load_safetensors_checkpoint(const std::filesystem::path& path,
                                            MapMode mode = MapMode::ReadOnly);

// Writes `tensors` into `dir` as shards of at most max_shard_bytes of data
// each (a larger tensor gets a shard of its own), in the given order,
// named model-00001-of-0000N.safetensors, then the index (written last,
// so an index never names a shard that is not complete). A single shard
// is written as model.safetensors without an index, like HF's
// save_pretrained. Returns the files written.
std::vector<std::filesystem::path> save_safetensors_sharded(
    const std::filesystem::path& dir, const std::vector<Tensor>& tensors,
    std::int64_t max_shard_bytes,
    const std::map<std::string, std::string>& metadata = {});

}  // namespace tessel

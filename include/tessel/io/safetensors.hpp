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
#include "tessel/ops/quantize.hpp"

namespace tessel {

// Affine-quantised tensors (ops/quantize.hpp) are stored as compressed-
// tensors stores them: the integer codes under the tensor's own name, the
// scale as "<name>_scale" and the zero point, when there is one, as
// "<name>_zero_point" (a weight "x.weight" gives "x.weight_scale" and
// "x.weight_zero_point"). safetensors has no 4-bit dtype: i4/u4 tensors
// are written as U8 bytes, two codes per byte, low nibble first (tessel's
// own layout, so loading them is zero copy). What restores them, the
// dtype, the logical shape of packed codes, the scheme, axis and group
// size, is one JSON entry of the metadata, "tessel.quantization".
// docs/quantisation.md describes the layout.
inline constexpr const char* kSafetensorsQuantizationKey =
    "tessel.quantization";
std::string safetensors_scale_name(const std::string& name);
std::string safetensors_zero_point_name(const std::string& name);

struct SafetensorsFile {
  // In the order of their data in the file; each tensor carries its name.
  // i4/u4 tensors have their dtype and shape back; the scales and zero
  // points of quantised tensors are here too, under their own names.
  std::vector<Tensor> tensors;
  // The optional "__metadata__" string map (without tessel.quantization,
  // which `quantization` and the i4/u4 dtypes stand for).
  std::map<std::string, std::string> metadata;
  // The affine quantisation of each quantised tensor, by its name; scale
  // and zero_point are the sibling tensors of `tensors`.
  std::map<std::string, AffineQuantization> quantization;

  bool contains(const std::string& name) const;
  // E3001 naming the missing tensor.
  const Tensor& at(const std::string& name) const;
  // The real values of tensor `name` in `dtype` (a float type): its codes
  // dequantised when it is quantised, else the tensor converted (itself
  // when it already has that dtype).
  Tensor dequantized(const std::string& name, DType dtype = DType::F32) const;
};

// E3002 when the file cannot be opened or mapped; E3001 (with the byte
// offset) for a malformed header, a dtype tessel does not have, byte
// ranges that do not tile the data exactly, or a size that overflows; and
// for a tessel.quantization entry that does not fit the file: a tensor or
// a scale or zero point it names that is missing, packed bytes that do not
// hold the shape, a scale that is not a float tensor or a zero point that
// is not an integer one, parameter shapes that do not fit the scheme.
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
// padded to a multiple of 8. i4/u4 are written packed in U8 (above);
// block-quantised dtypes have no safetensors dtype: E2201.
// `quantization` maps names of tensors in the list (i8 u8 i16 u16 i4 u4
// codes, E2201 otherwise) to their parameters, checked as
// dequantize_affine checks them (E2102, E2201); their scales and zero
// points are written as the siblings named above, unless the list already
// holds them (then they must be equal, E2102 otherwise). The metadata key
// tessel.quantization is the writer's own (E2102 when given).
void save_safetensors(
    const std::filesystem::path& path, const std::vector<Tensor>& tensors,
    const std::map<std::string, std::string>& metadata = {},
    const std::map<std::string, AffineQuantization>& quantization = {});
// The same, streaming each tensor's bytes from `source` when it is
// written (everything is validated before the file is created). Here the
// source must hold the siblings of each quantised tensor, with the dtype
// and shape of its parameters (E2102 otherwise); only the metadata that
// ties them together comes from `quantization`.
void save_safetensors(
    const std::filesystem::path& path, TensorSource& source,
    const std::map<std::string, std::string>& metadata = {},
    const std::map<std::string, AffineQuantization>& quantization = {});

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
// save_pretrained. Returns the files written. A quantised tensor's scale
// and zero point go into its shard.
std::vector<std::filesystem::path> save_safetensors_sharded(
    const std::filesystem::path& dir, const std::vector<Tensor>& tensors,
    std::int64_t max_shard_bytes,
    const std::map<std::string, std::string>& metadata = {},
    const std::map<std::string, AffineQuantization>& quantization = {});

}  // namespace tessel

// GGUF v3 files (llama.cpp's model format; facts in FORMATS.md §1–2):
// reading maps the file and validates the header, every metadata value and
// every tensor's type, dimensions and byte range before any tensor exists;
// tensors are zero-copy views of the mapping (big-endian files excepted:
// see load_gguf). GGUF lists dimensions
// innermost first; tessel's shapes are row-major, so ne = [K, N] becomes
// shape (N, K) over the same bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tessel/core/storage.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/io/tensor_source.hpp"

namespace tessel {

// A metadata value. Integers keep their GGUF type (`type`); arrays hold
// their elements (all of `element_type`), possibly arrays themselves.
struct GgufValue {
  enum class Type : std::uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
  };
  Type type = Type::U8;
  Type element_type = Type::U8;  // for arrays
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string,
               std::vector<GgufValue>>
      value;
};

struct GgufFile {
  std::uint32_t version = 3;
  std::uint32_t alignment = 32;  // general.alignment, 32 when absent
  // The file was big-endian (its header was read byte-swapped and its
  // tensors are swapped copies, not views of the file).
  bool big_endian = false;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // file order
  std::vector<Tensor> tensors;  // named, in the file's order

  const GgufValue* find(const std::string& key) const;
  // E3001 naming the missing tensor.
  const Tensor& at(const std::string& name) const;
};

// Big-endian files (GGUF marks them nowhere: the version field then reads
// as a byte-swapped 2 or 3) are read too: every header integer and
// metadata number in that order, and each tensor's data copied into
// memory of its own and swapped element by element (f32, f16, bf16, f64,
// i8–i64), so those tensors are not views of the file.
//
// E3002 when the file cannot be opened; E3001 with the byte offset for
// anything malformed or unsupported: bad magic, versions other than 2 and
// 3, a block-quantised tensor in a big-endian file (named with its type:
// writers disagree on the byte order of the scales inside the blocks, so
// it is refused rather than possibly misread), counts or lengths past the
// end of the file, arrays nested deeper than 8, an unknown value or tensor
// type (ids GGUF has retired or tessel does not know), more than 4 dimensions,
// a row length that is not a whole number of blocks, sizes that overflow,
// an alignment that is not a positive multiple of 8, and tensor data that
// is misaligned, overlapping or outside the file. `mode` as for
// Storage::map_file.
GgufFile load_gguf(const std::filesystem::path& path,
                   MapMode mode = MapMode::ReadOnly);
// The same over bytes in memory (the fuzzer's entry point).
GgufFile parse_gguf(const Storage& file);

// Writes a GGUF v3 file (atomically): the metadata in order, then the
// tensors, each at an offset that is a multiple of `alignment` (recorded
// as general.alignment when it is not the default 32; a general.alignment
// already in the metadata decides, and contradicting it is E4001), dimensions
// innermost first, zero padding between. general.architecture must be in
// the metadata (E4001); general.quantization_version is added when a
// tensor is block-quantised and it is missing. Tensors need unique names
// of at most 64 bytes and at most 4 dimensions (E2102; a rank-0 tensor is
// written with ne = [1]) and a dtype GGUF has (E2201: no bool, unsigned,
// f8 or i4/u4 types).
void save_gguf(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, GgufValue>>& metadata,
               const std::vector<Tensor>& tensors,
               std::uint32_t alignment = 32);
// The same, streaming each tensor's bytes from `source` when it is
// written (everything is validated before the file is created).
void save_gguf(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, GgufValue>>& metadata,
               TensorSource& source, std::uint32_t alignment = 32);

// The GGUF type id of a dtype and back (E2201 / nullopt when none).
std::uint32_t gguf_type_id(DType dtype);
std::optional<DType> dtype_from_gguf_type(std::uint32_t id);

}  // namespace tessel

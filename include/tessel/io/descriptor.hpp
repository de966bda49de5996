// The JSON tensor descriptor (DESIGN §5), with the key names of the
// WIA-AI-011 descriptor so that descriptors written by other
// implementations load:
//   {"version": "WIA-AI-011-v1.0", "name": "x",
//    "shape": {"dimensions": [2, "seq", 768], "layout": "row-major",
//              "symbolic": true,
//              "constraints": {"seq": {"min": 1, "max": 2048,
//                                      "multiple_of": 8}}},
//    "dtype": {"base_type": "FLOAT32", "byte_order": "little_endian",
//              "quantization": {"scheme": "affine", "scale": 0.1,
//                               "zero_point": 3}},
//    "memory": {"strides": [...], "offset_bytes": 0, "total_bytes": N,
//               "alignment": 64, "device": {"type": "CPU", "id": 0}},
//    "physical_shape": [...], "padding": {"values": [...], "mode": ...},
//    "properties": {...}, "metadata": {...}}
// Strides count elements (as everywhere in tessel). Readers ignore unknown
// fields and refuse (E3001, naming the field) what they cannot honour.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessel/core/symbolic_shape.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel {

struct Quantization {
  std::string scheme;  // e.g. "affine", "symmetric"
  double scale = 1.0;
  std::int64_t zero_point = 0;
};

struct TensorDescriptor {
  int version_major = 1;
  int version_minor = 0;
  std::string name;
  // A concrete extent or the name of a symbolic one.
  std::vector<std::variant<std::int64_t, std::string>> dimensions;
  std::string layout = "row-major";  // or NCHW, NHWC, blocked, ...
  std::map<std::string, DimConstraint> constraints;
  DType dtype = DType::F32;
  bool big_endian = false;
  std::optional<Quantization> quantization;
  std::vector<std::int64_t> strides;  // elements; empty for symbolic shapes
  std::int64_t offset_bytes = 0;
  std::int64_t total_bytes = 0;
  std::int64_t alignment = 64;
  Device device = Device::cpu();
  // The allocated (padded) shape when larger than the logical one.
  std::vector<std::int64_t> physical_shape;
  std::string padding_mode;
  std::map<std::string, bool> properties;
  std::map<std::string, std::string> metadata;

  bool symbolic() const;
  // The dimensions as a shape for the symbolic checker (ops/symbolic.hpp).
  SymbolicShape symbolic_dims() const;
  // The concrete shape (E2102 while a dimension is symbolic).
  Shape shape() const;
  // Binds symbolic dimensions to extents, checking every constraint
  // (E2102 naming the dimension); returns a concrete descriptor.
  TensorDescriptor bind(
      const std::map<std::string, std::int64_t>& values) const;
};

// A tensor's descriptor: row-major layout unless `layout` says otherwise;
// alignment is the storage's (at least 64 for memory tessel allocates).
TensorDescriptor describe(const Tensor& t,
                          const std::string& layout = "row-major");

std::string to_json(const TensorDescriptor& d, int indent = 2);
// E3001 naming the field for malformed JSON, a newer major version, an
// unknown dtype or byte order, an alignment that is not a power of two,
// or strides that reach outside total_bytes.
TensorDescriptor descriptor_from_json(const std::string& text);

// A tensor over `storage` as the descriptor lays it out (zero copy; a
// big-endian descriptor gives a byte-swapped copy). E3001 when the
// storage is smaller than total_bytes; E2102 for a symbolic shape.
Tensor tensor_from_descriptor(const TensorDescriptor& d,
                              const Storage& storage);

}  // namespace tessel

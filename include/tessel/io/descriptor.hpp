// The JSON tensor descriptor (DESIGN §5), with the key names of the
// WIA-AI-011 descriptor so that descriptors written by other
// implementations load:
//   {"version": "WIA-AI-011-v1.0", "name": "x",
//    "shape": {"dimensions": [2, "seq", 768], "layout": "row-major",
//              "symbolic": true,
//              "constraints": {"seq": {"min": 1, "max": 2048,
//                                      "multiple_of": 8}}},
//    "dtype": {"base_type": "INT8", "byte_order": "little_endian",
//              "quantization": {"scheme": "per_tensor_affine",
//                               "scale": 0.1, "zero_point": 3,
//                               "range": [-128, 127]}},
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
#include "tessel/ops/quantize.hpp"

namespace tessel {

// The affine quantisation of an integer tensor, real = (q - zero_point) *
// scale (the format standard's INT8/INT4 schemes; ops/quantize.hpp):
//   "quantization": {"scheme": "per_channel_affine", "axis": 0,
//                    "scale": [0.5, 0.25], "zero_point": [3, -1],
//                    "range": [-128, 127]}
// Per tensor, "scale" and "zero_point" are numbers; per channel and per
// group ("group_size": g, groups along "axis", the last by default) they
// are lists in row-major order of the parameter shape. The tensor a
// descriptor lays out is the integer codes; dequantising is an explicit
// step: dequantize_affine(t, d.quantization->params), or
// dequantize_from_descriptor. docs/interchange.md has the details.
struct Quantization {
  // scale (a float tensor) and zero_point (an integer tensor, undefined
  // when symmetric) on the CPU; axis normalised; group_size > 0 per group.
  AffineQuantization params;
  // The codes' range [qmin, qmax]: the base type's unless narrowed.
  std::int64_t qmin = 0;
  std::int64_t qmax = 0;

  // PyTorch's qscheme names, plus per_group_* for groups:
  // per_tensor_affine, per_tensor_symmetric (no zero point),
  // per_channel_affine, ..., per_group_symmetric.
  std::string scheme() const;
};

// The format standard's zero-copy sharing record (§2.6.1): the OS handle
// of the buffer and how it is mapped, kept as the document gives it and
// written back. share_memfd() writes them for its memfd (type "memfd");
// receive_shared() checks them against the fd it got and rewrites `fd` to
// its own number.
struct BufferHandle {
  std::string type;             // "memfd", "dma_buf_fd", "win32_handle", ...
  std::int64_t fd = -1;         // the number in the process that wrote it
  std::int64_t size_bytes = 0;  // at least memory.total_bytes
  std::string permissions;      // "read_only", "read_write" or "write_only"
};
struct BufferMapping {
  // Hex addresses ("0x7f4a2000") in the writer's address space, or none.
  std::optional<std::string> device_address;
  std::optional<std::string> cpu_address;
  // "host", "shared", "device_only", ...: a device-only mapping cannot be
  // read by the CPU, so laying a tensor over it is refused (E2501).
  std::string access_mode;
};

struct TensorDescriptor {
  int version_major = 1;
  int version_minor = 0;
  std::string name;
  // The format standard's identity of the tensor (a UUID string there),
  // kept as given; empty when the document has none, and then not written.
  std::string tensor_id;
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
  // The device as the document names it. The format standard allows any
  // type (CPU, GPU, NPU, TPU, ...): `device_type`, `device_id` and
  // `memory_space` keep what was written. `device` is tessel's device for
  // it, empty for a type tessel has no backend for: such a descriptor
  // loads, converts and writes back unchanged, and laying a tensor over
  // its memory is refused (E2501 naming the device).
  std::optional<Device> device = Device::cpu();
  std::string device_type = "CPU";
  std::int64_t device_id = 0;
  std::string memory_space = "host";
  // The allocated (padded) shape when larger than the logical one, and the
  // standard's per-axis padding record (`padding.dims`: which axes are
  // padded, `padding.values`: by how many elements), checked against it.
  std::vector<std::int64_t> physical_shape;
  std::string padding_mode;
  std::vector<bool> padding_dims;
  std::vector<std::int64_t> padding_values;
  // "overallocate" with `max_physical_shape`: a symbolic tensor whose
  // buffer holds the largest shape its constraints allow, so it grows
  // (a KV cache's sequence axis) without reallocating. bind() then keeps
  // the strides of max_physical_shape: every binding views the same
  // buffer, and elements keep their places as an axis grows.
  std::string allocation_strategy;
  std::vector<std::int64_t> max_physical_shape;
  // Bit order inside a byte for sub-byte types: "lsb_first" (tessel's and
  // GGUF's packing: element 2i in the low nibble) or "msb_first"; empty
  // when the document does not say.
  std::string bit_order;
  std::optional<BufferHandle> buffer_handle;
  std::optional<BufferMapping> mapping;
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

// A tensor's descriptor; alignment is the storage's (at least 64 for
// memory tessel allocates). The layout tag is "row-major" or "strided" as
// the strides are, unless `layout` names one (NCHW, NHWC, nChw16c, ...),
// which must match the strides (E2102; docs/interchange.md lists the tags).
TensorDescriptor describe(const Tensor& t, const std::string& layout = "");
// The descriptor of quantised codes `q` with their parameters (written
// into dtype.quantization; the range is q's dtype's). E2201 unless q is
// i8 u8 i16 u16 i4 or u4; the parameters are checked as dequantize_affine
// checks them (E2102 naming the expected shape, E2201); they are copied to
// the CPU.
TensorDescriptor describe(const Tensor& q, const AffineQuantization& params,
                          const std::string& layout = "row-major");

std::string to_json(const TensorDescriptor& d, int indent = 2);
// E3001 naming the field for malformed JSON, a newer major version, an
// unknown dtype or byte order, an alignment that is not a power of two,
// strides that reach outside total_bytes, or a quantization that cannot be
// honoured (a base type that is not i8 u8 i16 u16 i4 u4, an unknown
// scheme, a scale or zero point count that does not fit the scheme and
// shape, a scale that is not positive and finite, a range outside the
// base type's, per-channel or per-group parameters over symbolic extents).
// "quantization" is read inside "dtype" or, as in the format standard's
// INT8 example, beside it.
TensorDescriptor descriptor_from_json(const std::string& text);

// A tensor over `storage` as the descriptor lays it out (zero copy; a
// big-endian descriptor gives a byte-swapped copy). E3001 when the
// storage is smaller than total_bytes; E2102 for a symbolic shape.
Tensor tensor_from_descriptor(const TensorDescriptor& d,
                              const Storage& storage);

// The real values of the descriptor's tensor in `dtype` (a float type), a
// new tensor: (q - zero_point) * scale when it is quantised, else the
// tensor converted to `dtype` (as PyTorch's dequantize() passes a float
// tensor through).
Tensor dequantize_from_descriptor(const TensorDescriptor& d,
                                  const Storage& storage,
                                  DType dtype = DType::F32);

}  // namespace tessel

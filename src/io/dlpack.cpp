// DLPack export/import (docs/interchange.md "DLPack"). Everything a
// producer hands us is validated before a tensor is formed over it: the
// struct comes from another library and may be wrong.
#include "tessel/io/dlpack.hpp"

#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "core/check.hpp"

namespace tessel {
namespace {

constexpr const char* kExport = "to_dlpack";
constexpr const char* kImport = "from_dlpack";

// ---- dtypes ---------------------------------------------------------------

DLDataType dl_dtype_of(DType dtype) {
  auto make = [](std::uint8_t code, int bits) {
    return DLDataType{code, static_cast<std::uint8_t>(bits), 1};
  };
  switch (dtype) {
    case DType::Bool: return make(dlpack::kDLBool, 8);
    case DType::U8:
    case DType::U16:
    case DType::U32:
    case DType::U64: return make(kDLUInt, dtype_traits(dtype).bits);
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64: return make(kDLInt, dtype_traits(dtype).bits);
    case DType::F16:
    case DType::F32:
    case DType::F64: return make(kDLFloat, dtype_traits(dtype).bits);
    case DType::BF16: return make(kDLBfloat, 16);
    case DType::F8E4M3FN: return make(dlpack::kDLFloat8_e4m3fn, 8);
    case DType::F8E5M2: return make(dlpack::kDLFloat8_e5m2, 8);
    case DType::C64:
    case DType::C128: return make(kDLComplex, dtype_traits(dtype).bits);
    default: break;
  }
  detail::fail(ErrorCode::BadDType, kExport,
               "DLPack has no type code for {} (packed and block-quantised "
               "dtypes cannot be exported; convert them first)",
               dtype_name(dtype));
}

[[noreturn]] void bad_dtype(const DLDataType& t, const char* why) {
  detail::fail(ErrorCode::MalformedFile, kImport,
               "unsupported DLDataType {{code {}, bits {}, lanes {}}}: {}",
               t.code, t.bits, t.lanes, why);
}

DType dtype_of_dl(const DLDataType& t) {
  if (t.lanes != 1) bad_dtype(t, "vector types (lanes != 1) are not supported");
  auto by_bits = [&](DType d8, DType d16, DType d32, DType d64) {
    switch (t.bits) {
      case 8: return d8;
      case 16: return d16;
      case 32: return d32;
      case 64: return d64;
      default: bad_dtype(t, "no tessel dtype has this width");
    }
  };
  switch (t.code) {
    case kDLInt: return by_bits(DType::I8, DType::I16, DType::I32, DType::I64);
    case kDLUInt: return by_bits(DType::U8, DType::U16, DType::U32, DType::U64);
    case kDLFloat:
      if (t.bits == 16) return DType::F16;
      if (t.bits == 32) return DType::F32;
      if (t.bits == 64) return DType::F64;
      bad_dtype(t, "no tessel float has this width");
    case kDLBfloat:
      if (t.bits == 16) return DType::BF16;
      bad_dtype(t, "bfloat must be 16 bits");
    case kDLComplex:
      if (t.bits == 64) return DType::C64;
      if (t.bits == 128) return DType::C128;
      bad_dtype(t, "tessel's complex types are 64 and 128 bits");
    case dlpack::kDLBool:
      if (t.bits == 8) return DType::Bool;
      bad_dtype(t, "only byte-sized bool is supported");
    case dlpack::kDLFloat8_e4m3fn:
    case dlpack::kDLFloat8_e5m2:
      if (t.bits != 8) bad_dtype(t, "fp8 must be 8 bits");
      return t.code == dlpack::kDLFloat8_e4m3fn ? DType::F8E4M3FN
                                                : DType::F8E5M2;
    default: bad_dtype(t, "unknown or unsupported type code");
  }
}

// ---- devices --------------------------------------------------------------

DLDevice dl_device_of(Device device) {
  if (device.is_cuda()) return DLDevice{kDLCUDA, device.index};
  return DLDevice{kDLCPU, 0};
}

Device device_of_dl(const DLDevice& d) {
  switch (static_cast<int>(d.device_type)) {
    case kDLCPU:
    case kDLCUDAHost:  // pinned host memory is ordinary CPU memory to us
      return Device::cpu();
    case kDLCUDA: {
      const Device device = Device::cuda(d.device_id);
      require_device(device, kImport);
      return device;
    }
    default: break;
  }
  detail::fail(ErrorCode::DeviceMismatch, kImport,
               "DLPack device type {} (id {}) is not available to tessel; "
               "only CPU, CUDAHost and CUDA memory can be imported",
               static_cast<int>(d.device_type), d.device_id);
}

// ---- export ---------------------------------------------------------------

// Owned by the manager: the tensor keeps the storage alive, the vectors
// back the shape and strides pointers.
struct ExportContext {
  Tensor tensor;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

DLTensor describe_for_export(const Tensor& t, ExportContext& ctx) {
  TESSEL_CHECK(t.defined(), BadShape, kExport, "the tensor is undefined");
  // DLPack has no device without memory; a consumer would read null.
  TESSEL_CHECK(!t.device().is_meta(), DeviceMismatch, kExport,
               "a tensor on meta has no data to export");
  DLTensor dl{};
  dl.dtype = dl_dtype_of(t.dtype());
  dl.device = dl_device_of(t.device());
  ctx.tensor = t;
  // Non-null even for rank 0: some consumers read shape[0] defensively.
  ctx.shape.reserve(static_cast<std::size_t>(t.rank()) + 1);
  ctx.strides.reserve(static_cast<std::size_t>(t.rank()) + 1);
  ctx.shape.assign(t.shape().begin(), t.shape().end());
  ctx.strides.assign(t.strides().begin(), t.strides().end());
  dl.ndim = static_cast<int>(t.rank());
  dl.shape = ctx.shape.data();
  dl.strides = ctx.strides.data();
  // The first element itself, not base + byte_offset: PyTorch 1.x ignores
  // byte_offset on import and would read from the wrong place.
  dl.data = const_cast<void*>(t.raw_data());
  dl.byte_offset = 0;
  return dl;
}

struct LegacyExport {
  DLManagedTensor managed{};
  ExportContext ctx;
};

struct VersionedExport {
  dlpack::DLManagedTensorVersioned managed{};
  ExportContext ctx;
};

// ---- import ---------------------------------------------------------------

// Calls the producer's deleter unless disarmed: every refusal releases the
// producer's memory, because from_dlpack owns the manager it was given.
class ReleaseOnThrow {
 public:
  explicit ReleaseOnThrow(std::function<void()> release)
      : release_(std::move(release)) {}
  ReleaseOnThrow(const ReleaseOnThrow&) = delete;
  ReleaseOnThrow& operator=(const ReleaseOnThrow&) = delete;
  ~ReleaseOnThrow() {
    if (release_) release_();
  }
  void disarm() { release_ = nullptr; }

 private:
  std::function<void()> release_;
};

std::int64_t mul_or_fail(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  TESSEL_CHECK(!__builtin_mul_overflow(a, b, &r), MalformedFile, kImport,
               "the tensor's extent overflows 64 bits ({} * {})", a, b);
  return r;
}

std::int64_t add_or_fail(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  TESSEL_CHECK(!__builtin_add_overflow(a, b, &r), MalformedFile, kImport,
               "the tensor's extent overflows 64 bits ({} + {})", a, b);
  return r;
}

// Validates `dl` and wraps it in a borrowed storage whose release is
// `release` (run exactly once: here on a refusal, else by the storage).
Tensor import_dl_tensor(const DLTensor& dl, bool writable,
                        std::function<void()> release) {
  ReleaseOnThrow guard(release);
  TESSEL_CHECK(dl.ndim >= 0 && dl.ndim <= kMaxRank, MalformedFile, kImport,
               "ndim {} is outside [0, {}]", dl.ndim, kMaxRank);
  const DType dtype = dtype_of_dl(dl.dtype);
  const Device device = device_of_dl(dl.device);
  TESSEL_CHECK(dl.ndim == 0 || dl.shape != nullptr, MalformedFile, kImport,
               "shape is NULL for ndim {}", dl.ndim);
  const auto rank = static_cast<std::size_t>(dl.ndim);
  Shape shape(dl.shape, dl.shape + rank);
  std::int64_t numel = 1;
  for (const std::int64_t e : shape) {
    TESSEL_CHECK(e >= 0, MalformedFile, kImport, "negative extent in shape {}",
                 shape_string(shape));
    numel = mul_or_fail(numel, e);
  }
  // NULL strides: compact row-major (older producers, FORMATS §6).
  Strides strides(rank, 0);
  std::int64_t running = 1;
  for (std::size_t i = rank; i-- > 0;) {
    if (dl.strides != nullptr) {
      strides[i] = dl.strides[i];
    } else {
      strides[i] = running;
      running = mul_or_fail(running, std::max<std::int64_t>(shape[i], 1));
    }
    TESSEL_CHECK(strides[i] >= 0, MalformedFile, kImport,
                 "negative stride in {} (shape {}): tessel views have none",
                 shape_string(strides), shape_string(shape));
  }
  // Elements addressed from the (offset) start: the last one plus one.
  std::int64_t span = 0;
  if (numel > 0) {
    std::int64_t last = 0;
    for (std::size_t i = 0; i < rank; ++i) {
      last = add_or_fail(last, mul_or_fail(shape[i] - 1, strides[i]));
    }
    span = add_or_fail(last, 1);
  }
  const std::int64_t nbytes = mul_or_fail(span, element_size(dtype));
  TESSEL_CHECK(
      dl.byte_offset <= static_cast<std::uint64_t>(
                            std::numeric_limits<std::int64_t>::max() - nbytes),
      MalformedFile, kImport, "byte_offset {} overflows", dl.byte_offset);
  TESSEL_CHECK(dl.data != nullptr || nbytes == 0, MalformedFile, kImport,
               "data is NULL for {} elements", numel);
  void* base = dl.data == nullptr
                   ? nullptr
                   : static_cast<char*>(dl.data) + dl.byte_offset;
  Storage storage = Storage::borrow(
      base, nbytes, device, [release](void*) { release(); }, writable);
  guard.disarm();  // from here the storage owns the release
  return Tensor(std::move(storage), std::move(shape), std::move(strides), 0,
                dtype);
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  TESSEL_CHECK(!t.defined() || t.storage().writable(), IoFailure, kExport,
               "the tensor's memory is read-only ({}) and the legacy "
               "DLManagedTensor cannot say so; use to_dlpack_versioned or "
               "export a clone()",
               origin_name(t.storage().origin()));
  auto owner = std::make_unique<LegacyExport>();
  owner->managed.dl_tensor = describe_for_export(t, owner->ctx);
  owner->managed.manager_ctx = owner.get();
  owner->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<LegacyExport*>(self->manager_ctx);
  };
  return &owner.release()->managed;
}

dlpack::DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t) {
  auto owner = std::make_unique<VersionedExport>();
  owner->managed.dl_tensor = describe_for_export(t, owner->ctx);
  owner->managed.version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
  owner->managed.flags = t.storage().writable() ? 0 : dlpack::kFlagReadOnly;
  owner->managed.manager_ctx = owner.get();
  owner->managed.deleter = [](dlpack::DLManagedTensorVersioned* self) {
    delete static_cast<VersionedExport*>(self->manager_ctx);
  };
  return &owner.release()->managed;
}

Tensor from_dlpack(DLManagedTensor* managed) {
  TESSEL_CHECK(managed != nullptr, MalformedFile, kImport,
               "null DLManagedTensor");
  auto release = [managed] {
    if (managed->deleter != nullptr) managed->deleter(managed);
  };
  // The legacy struct has no flags: its memory is taken as writable, as
  // every consumer of it does.
  return import_dl_tensor(managed->dl_tensor, true, release);
}

Tensor from_dlpack(dlpack::DLManagedTensorVersioned* managed) {
  TESSEL_CHECK(managed != nullptr, MalformedFile, kImport,
               "null DLManagedTensorVersioned");
  auto release = [managed] {
    if (managed->deleter != nullptr) managed->deleter(managed);
  };
  if (managed->version.major != dlpack::kMajorVersion) {
    // The layout past the deleter may differ: read nothing else (spec).
    const dlpack::DLPackVersion v = managed->version;
    release();
    detail::fail(ErrorCode::MalformedFile, kImport,
                 "DLPack version {}.{} has a different major version than "
                 "tessel's {}.{}",
                 v.major, v.minor, dlpack::kMajorVersion,
                 dlpack::kMinorVersion);
  }
  const bool writable = (managed->flags & dlpack::kFlagReadOnly) == 0;
  return import_dl_tensor(managed->dl_tensor, writable, release);
}

}  // namespace tessel

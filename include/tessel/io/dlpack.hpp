// DLPack export and import (DESIGN §5, FORMATS §6), zero copy both ways.
//
// The legacy struct DLManagedTensor comes from the system header (Debian's
// libdlpack-dev is v0.6). The v1.x additions (the version handshake, the
// versioned struct with its flags, the bool and fp8 type codes) are
// declared in tessel::dlpack so that they cannot clash with a newer system
// header that declares them in the global namespace.
//
// Ownership: from_dlpack always takes over the manager it is given. On
// success the producer's deleter runs exactly once, when the last tessel
// tensor over the memory goes; on every refusal it runs before the throw.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel::dlpack {

// The ABI version tessel speaks: 1.1.
inline constexpr std::uint32_t kMajorVersion = 1;
inline constexpr std::uint32_t kMinorVersion = 1;

// DLManagedTensorVersioned::flags.
inline constexpr std::uint64_t kFlagReadOnly = 1ULL << 0;
inline constexpr std::uint64_t kFlagIsCopied = 1ULL << 1;
inline constexpr std::uint64_t kFlagIsSubbyteTypePadded = 1ULL << 2;

// DLDataType codes newer than the v0.6 header.
inline constexpr std::uint8_t kDLBool = 6;
inline constexpr std::uint8_t kDLFloat8_e3m4 = 7;
inline constexpr std::uint8_t kDLFloat8_e4m3 = 8;
inline constexpr std::uint8_t kDLFloat8_e4m3b11fnuz = 9;
inline constexpr std::uint8_t kDLFloat8_e4m3fn = 10;
inline constexpr std::uint8_t kDLFloat8_e4m3fnuz = 11;
inline constexpr std::uint8_t kDLFloat8_e5m2 = 12;
inline constexpr std::uint8_t kDLFloat8_e5m2fnuz = 13;

struct DLPackVersion {
  std::uint32_t major;
  std::uint32_t minor;
};

// The v1.x managed tensor: the version comes first so that a consumer can
// read it (and the deleter) before trusting the rest of the layout.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace tessel::dlpack

namespace tessel {

// Exports `t` without copying. data points at the tensor's first element
// and byte_offset is 0 (PyTorch 1.x ignores byte_offset on import);
// shape and strides (in elements) are always set. The manager keeps the
// storage alive until the consumer calls the deleter. E2201 for dtypes
// DLPack cannot name (i4/u4, block-quantised); E3002 for read-only storage,
// because the legacy struct cannot say "read-only": use
// to_dlpack_versioned, or export a clone().
DLManagedTensor* to_dlpack(const Tensor& t);

// The same as a v1.1 managed tensor; READ_ONLY is set when the storage is
// not writable.
dlpack::DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t);

// A tensor over the producer's memory (Storage origin Borrowed). Honours
// byte_offset and strides; NULL strides mean compact row-major. kDLCPU and
// kDLCUDAHost (pinned host memory) give CPU tensors; kDLCUDA needs a usable
// CUDA device; other devices are E2501. E3001 for what tessel cannot
// represent or does not trust: lanes != 1, unknown or sub-byte codes,
// bad ndim, negative extents or strides, size overflow, a NULL data pointer
// with elements. A null `managed` is E3001 too.
Tensor from_dlpack(DLManagedTensor* managed);

// Versioned import: a major version other than 1 is E3001 after calling
// only the deleter; READ_ONLY gives a non-writable storage.
Tensor from_dlpack(dlpack::DLManagedTensorVersioned* managed);

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
// A newer system header declares the versioned struct itself; its layout is
// the one above.
inline Tensor from_dlpack(::DLManagedTensorVersioned* managed) {
  static_assert(sizeof(::DLManagedTensorVersioned) ==
                sizeof(dlpack::DLManagedTensorVersioned));
  return from_dlpack(
      reinterpret_cast<dlpack::DLManagedTensorVersioned*>(managed));
}
#endif

}  // namespace tessel

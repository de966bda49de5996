// Storage (DESIGN §1): a reference-counted byte buffer with a device and an
// origin. Copies of a Storage share the buffer; the last one releases it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "tessel/core/device.hpp"

namespace tessel {

enum class StorageOrigin : std::uint8_t {
  Owned,         // allocated by tessel, 64-byte aligned
  Pinned,        // page-locked host memory allocated by tessel
  MappedFile,    // a memory-mapped file
  SharedMemory,  // a shared-memory file descriptor
  Borrowed,      // another owner's memory, released through its deleter
};

enum class MapMode : std::uint8_t {
  ReadOnly,     // writes through the tensor are refused (E3002)
  CopyOnWrite,  // writes stay private to this process; the file is untouched
  // Read once into private memory in 2 MiB pages, then read-only as
  // ReadOnly (llama.cpp's --no-mmap). Loading pays for reading the file;
  // every later pass over it misses the TLB once per 2 MiB instead of once
  // per 4 KiB page of a file mapping: a decode step streams every weight,
  // and this made a Qwen3-0.6B's decode up to half again as fast
  // (docs/models.md). Not a mapping: the storage's origin is Owned.
  Resident,
};

// Alignment of every buffer tessel allocates: the format standard's
// minimum, and an AVX-512 register / cache line.
inline constexpr std::size_t kAllocAlignment = 64;
// The most Storage::allocate aligns to (a 2 MiB huge page).
inline constexpr std::size_t kMaxAllocAlignment = std::size_t{2} << 20;

const char* origin_name(StorageOrigin origin);

// The format standard's capability query: the alignment `device`'s kernels
// want for a buffer (64 on the CPU: a cache line, an AVX-512 register).
// Memory tessel allocates there has at least this; a consumer that needs
// more (a GPU's 256) allocates with Storage::allocate(n, device, 256) or
// takes Tensor::aligned(256). E2501 when the build has no such backend.
std::size_t device_alignment(Device device);

// The cache of large host buffers (Note [caching allocator]).
struct AllocatorStats {
  std::int64_t cached_bytes = 0;  // freed buffers kept for reuse
  std::int64_t cached_blocks = 0;
  std::int64_t hits = 0;  // large allocations served from the cache
  std::int64_t misses = 0;
};
AllocatorStats allocator_stats();
// Returns every cached buffer to the OS.
void empty_cache();

// What tensors on the meta device would occupy if they held data (Note
// [meta backend]): the bytes of meta storages alive now, the most alive at
// once since the last reset, and how many were made. How `tessel plan`
// measures a forward pass without running it.
struct MetaMemoryStats {
  std::int64_t live_bytes = 0;
  std::int64_t peak_bytes = 0;
  std::int64_t allocations = 0;
};
MetaMemoryStats meta_memory_stats();
// Starts a new peak (and allocation count) from the bytes alive now.
void reset_meta_memory_peak();

class Storage {
 public:
  Storage() = default;

  // Owned, uninitialised, aligned to `alignment` bytes: 64 by default, more
  // for a consumer that needs it (a GPU's 256, a page) — a power of two up
  // to kMaxAllocAlignment, else E2102. Large buffers come from a cache of
  // freed ones. E2501 for an unavailable device. On meta, a size and no
  // memory: data() is null.
  static Storage allocate(std::int64_t nbytes, Device device = Device::cpu(),
                          std::size_t alignment = kAllocAlignment);

  // Page-locked host memory. When the OS refuses to lock (RLIMIT_MEMLOCK),
  // throws E3002 naming the limit, or, with `fall_back_to_pageable`, returns
  // ordinary owned memory (origin() tells which one you got).
  static Storage allocate_pinned(std::int64_t nbytes,
                                 bool fall_back_to_pageable = false);

  // Maps [offset, offset + length) of a file; the whole rest of the file
  // when `length` is empty. E3001 when the path is not a regular file (a
  // FIFO, socket or device), E3002 when it cannot be opened or mapped or
  // the range lies outside it. If another process truncates the file while
  // it is mapped, reads of the lost pages return zeros instead of killing
  // the process with SIGBUS, and check_mapped_files() reports it.
  // MapMode::Resident reads the range instead of mapping it (E3002 if the
  // read fails or comes up short).
  static Storage map_file(const std::filesystem::path& path,
                          MapMode mode = MapMode::ReadOnly,
                          std::uint64_t offset = 0,
                          std::optional<std::uint64_t> length = std::nullopt);

  // Maps the first `nbytes` of a shared-memory file descriptor (MAP_SHARED,
  // so writes are seen by every process mapping it; PROT_READ only unless
  // `writable`). The fd stays the caller's: the mapping keeps the file
  // alive. E3002 when mmap fails.
  static Storage map_shared_fd(int fd, std::int64_t nbytes, bool writable);

  // Zero-copy view of memory owned elsewhere; `deleter(data)` runs when the
  // last tensor using it goes away (it may be empty).
  static Storage borrow(void* data, std::int64_t nbytes, Device device,
                        std::function<void(void*)> deleter,
                        bool writable = true);

  bool defined() const { return impl_ != nullptr; }
  void* data() const;
  std::int64_t nbytes() const;
  Device device() const;
  StorageOrigin origin() const;
  bool writable() const;
  // For a read-only file mapping: the pages wholly inside [offset,
  // offset + nbytes) leave this process's resident set (the page cache
  // keeps them; reading them again maps them back). Streaming readers call
  // it for data they are done with, so that memory stays near one chunk
  // however large the file. No effect on any other storage (a private or
  // writable page may hold the only copy of its data).
  void release_pages(std::int64_t offset, std::int64_t nbytes) const;
  // The largest power of two (up to 4096) dividing the data address.
  std::size_t alignment() const;
  long use_count() const { return impl_.use_count(); }
  // The same buffer (not merely equal bytes).
  bool is_same(const Storage& other) const { return impl_ == other.impl_; }

 private:
  struct Impl;
  explicit Storage(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  static Storage empty_mapping(std::shared_ptr<Impl> impl);
  static Storage read_resident(int fd, const std::string& name,
                               std::uint64_t offset, std::uint64_t want);
  std::shared_ptr<Impl> impl_;
};

// E3001 naming the file and the byte offset when a file mapped by
// Storage::map_file was truncated by another process and a read reached
// the lost part since the last check (those reads saw zeros). Each loss is
// reported once. Call it after reading mapped tensors that another process
// might cut short, before trusting what was computed from them; tessel's
// own streaming writers and `inspect --stats` do.
void check_mapped_files();

}  // namespace tessel

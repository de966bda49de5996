// Host memory for owned storage. Buffers under 64 KiB come from malloc,
// aligned to 64 bytes by hand (faster than aligned_alloc); larger ones from
// mmap, and freed large buffers are kept for reuse so that repeated allocations
// of the same size do not pay fresh page faults.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessel::detail {

// At least 64-byte aligned; never null for size 0. Returns nullptr when the
// OS has no memory even after the cache was emptied.
void* host_allocate(std::size_t size);
// Returns a buffer from host_allocate (the same size).
void host_free(void* data, std::size_t size);

// Scratch bytes from host_allocate, freed when it goes: kernels' packed
// operands want the 64-byte alignment a std::vector does not give (a
// 512-bit load across two cache lines costs two), and large ones reuse
// cached pages instead of faulting fresh ones. Throws IoFailure naming
// `what` when there is no memory, as a storage's allocation does.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(std::size_t size, const char* what);
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer();

  std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tessel::detail

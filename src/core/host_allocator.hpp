// Host memory for owned storage. Buffers under 128 KiB come from malloc,
// aligned to 64 bytes by hand (faster than aligned_alloc); larger ones from
// mmap, and freed large buffers are kept for reuse so that repeated allocations
// of the same size do not pay fresh page faults.
#pragma once

#include <cstddef>

namespace tessel::detail {

// At least 64-byte aligned; never null for size 0. Returns nullptr when the
// OS has no memory even after the cache was emptied.
void* host_allocate(std::size_t size);
// Returns a buffer from host_allocate (the same size).
void host_free(void* data, std::size_t size);

}  // namespace tessel::detail

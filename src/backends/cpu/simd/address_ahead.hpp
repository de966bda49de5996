// The address a stream's prefetch asks for, some bytes past where it
// reads. Near a buffer's end that address lies past the end: as a pointer
// sum it would be undefined behaviour, as an integer sum it is just an
// address, and a prefetch of any address neither faults nor touches
// memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessel::cpu::simd {

inline const char* address_ahead(const void* p, std::ptrdiff_t bytes) {
  return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) +
                                       static_cast<std::uintptr_t>(bytes));
}

}  // namespace tessel::cpu::simd

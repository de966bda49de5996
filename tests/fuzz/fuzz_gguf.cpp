// libFuzzer target for the GGUF parser: any bytes must either parse or
// raise a tessel::Error; never crash, hang or read out of bounds (the
// bytes are copied into an exactly sized buffer so ASan sees overreads).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  auto* copy = new std::uint8_t[size == 0 ? 1 : size];
  if (size > 0) std::memcpy(copy, data, size);
  try {
    const tessel::Storage file = tessel::Storage::borrow(
        copy, static_cast<std::int64_t>(size), tessel::Device::cpu(),
        [](void* p) { delete[] static_cast<std::uint8_t*>(p); },
        /*writable=*/false);
    const tessel::GgufFile parsed = tessel::parse_gguf(file);
    volatile std::uint8_t sink = 0;
    for (const tessel::Tensor& t : parsed.tensors) {
      const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
      const std::int64_t n = tessel::storage_bytes(t.dtype(), t.numel());
      for (std::int64_t i = 0; i < n; ++i) sink = sink ^ bytes[i];
    }
  } catch (const tessel::Error&) {
  }
  return 0;
}

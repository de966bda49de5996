// libFuzzer target for the safetensors parser: any bytes must either parse
// or raise a tessel::Error; never crash, hang or read out of bounds. The
// bytes are copied into an exactly sized buffer so that ASan sees any read
// past the end.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

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
    const tessel::SafetensorsFile parsed = tessel::parse_safetensors(file);
    volatile std::uint8_t sink = 0;
    for (const tessel::Tensor& t : parsed.tensors) {
      const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
      for (std::int64_t i = 0; i < t.nbytes(); ++i) sink = sink ^ bytes[i];
    }
  } catch (const tessel::Error&) {
  }
  return 0;
}

// libFuzzer target for the .npy parser: any bytes must either parse or raise
// a tessel::Error; never crash, hang or read out of bounds. Built with
// clang by scripts/fuzz; the GCC build links it to replay_main.cpp, which
// replays the checked-in corpus as a regular test.
#include <cstddef>
#include <cstdint>

#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::Tensor t = tessel::parse_npy({data, size});
    // Touch every byte that was loaded.
    volatile std::uint8_t sink = 0;
    const auto* bytes = static_cast<const std::uint8_t*>(t.raw_data());
    for (std::int64_t i = 0; i < t.nbytes(); ++i) sink = sink ^ bytes[i];
  } catch (const tessel::Error&) {
  }
  return 0;
}

// libFuzzer target for config.json: any text must give a validated
// DecoderConfig or a tessel::Error (E4001), never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::DecoderConfig c = tessel::DecoderConfig::from_json(
        std::string(reinterpret_cast<const char*>(data), size));
    // A config that parsed round-trips.
    if (tessel::DecoderConfig::from_json(c.to_json()).to_json() !=
        c.to_json()) {
      __builtin_trap();
    }
  } catch (const tessel::Error&) {
  }
  return 0;
}

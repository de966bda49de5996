// libFuzzer target for the safetensors parser: any bytes must either parse
// or raise a tessel::Error; never crash, hang or read out of bounds. The
// bytes are copied into an exactly sized buffer so that ASan sees any read
// past the end.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fuzz_util.hpp"
#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::SafetensorsFile parsed =
        tessel::parse_safetensors(tessel::fuzz::exact_storage(data, size));
    for (const tessel::Tensor& t : parsed.tensors) tessel::fuzz::touch(t);
  } catch (const tessel::Error&) {
  }
  return 0;
}

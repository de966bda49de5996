// libFuzzer target for the GGUF parser: any bytes must either parse or
// raise a tessel::Error; never crash, hang or read out of bounds (the
// bytes are copied into an exactly sized buffer so ASan sees overreads).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::GgufFile parsed =
        tessel::parse_gguf(tessel::fuzz::exact_storage(data, size));
    for (const tessel::Tensor& t : parsed.tensors) tessel::fuzz::touch(t);
  } catch (const tessel::Error&) {
  }
  return 0;
}

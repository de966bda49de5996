// libFuzzer target for GGUF vocabularies (tokenizer_from_gguf): any bytes
// must either parse and load or raise a tessel::Error; a loaded tokenizer
// then encodes and decodes fixed texts (tokenizer_fuzz_util.hpp). Never a
// crash, hang or unbounded allocation.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "tessel/tessel.hpp"
#include "tokenizer_fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::GgufFile parsed =
        tessel::parse_gguf(tessel::fuzz::exact_storage(data, size));
    const tessel::Tokenizer t = tessel::tokenizer_from_gguf(parsed);
    tessel::fuzz::exercise(t);
  } catch (const tessel::Error&) {
  }
  return 0;
}

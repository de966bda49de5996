// libFuzzer target for GGUF files as models (CausalLM::load's path without
// the file): any bytes must either build a decoder or raise a
// tessel::Error, and a decoder that builds runs one short forward, and the
// vocabulary converts to tokenizer.json (hf_tokenizer_files). Never a
// crash, hang or allocation sized by metadata the tensors do not back.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace tessel;
  try {
    const GgufFile file = parse_gguf(fuzz::exact_storage(data, size));
    try {
      hf_tokenizer_files(file);
    } catch (const Error&) {
    }
    const DecoderConfig config = decoder_config_from_gguf(file);
    const auto source =
        tensor_weights(gguf_tensors_as_hf(file), "fuzz", gguf_tensor_name);
    const CausalLM lm(config, *source);
    const Tensor ids = zeros({1, 2}, DType::I64);
    lm.next_token_logits(ids);
  } catch (const Error&) {
  }
  return 0;
}

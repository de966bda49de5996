// libFuzzer target for tokenizer.json (load_hf_tokenizer): any bytes must
// either load or raise a tessel::Error; a loaded tokenizer then encodes
// and decodes fixed texts (tokenizer_fuzz_util.hpp). Never a crash, hang or
// unbounded allocation. The bytes go through a file in a private temporary
// directory (holding no tokenizer_config.json), as the API reads paths.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tessel/tessel.hpp"
#include "tokenizer_fuzz_util.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

namespace {

const std::filesystem::path& input_path() {
  static const std::filesystem::path path = [] {
    std::string dir = (std::filesystem::temp_directory_path() /
                       "tessel-fuzz-tokenizer-XXXXXX")
                          .string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    return std::filesystem::path(dir) / "tokenizer.json";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::filesystem::path& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
    if (!out.good()) std::abort();
  }
  try {
    const tessel::Tokenizer t = tessel::load_hf_tokenizer(path);
    tessel::fuzz::exercise(t);
  } catch (const tessel::Error&) {
  }
  return 0;
}

// tessel's block codecs for test_quant_ggml.py, through the public API:
//   quant_tool dequantize TYPE ROWS ROW_LEN IN OUT  (blocks -> f32)
//   quant_tool quantize TYPE ROWS ROW_LEN IN OUT    (f32 -> blocks)
//   quant_tool linear TYPE ROWS ROW_LEN W X OUT     (y = x W^T, W blocks
//     (ROWS, ROW_LEN), X f32 (M, ROW_LEN) with M from its size, y f32)
// IN and OUT are raw little-endian bytes of a (ROWS, ROW_LEN) tensor. An
// error prints its code (E2201, ...) on stderr and exits 3.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

namespace {

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const char* path, const tessel::Tensor& t) {
  const std::int64_t bytes = tessel::storage_bytes(t.dtype(), t.numel());
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.raw_data()), bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const bool linear = argc == 8 && std::string(argv[1]) == "linear";
  if (argc != 7 && !linear) {
    fmt::print(stderr,
               "usage: quant_tool dequantize|quantize|quantize_runtime TYPE "
               "ROWS ROW_LEN IN OUT\n");
    return 2;
  }
  try {
    const std::string mode = argv[1];
    if (mode != "linear" && argc != 7) return 2;
    const tessel::DType type = tessel::parse_dtype(argv[2]);
    const tessel::Shape shape{std::stoll(argv[3]), std::stoll(argv[4])};
    std::vector<char> input = read_file(argv[5]);
    if (mode == "dequantize") {
      const tessel::Tensor blocks =
          tessel::from_blob(input.data(), shape, type);
      write_file(argv[6], blocks.to(tessel::DType::F32));
    } else if (mode == "linear") {
      const tessel::Tensor w = tessel::from_blob(input.data(), shape, type);
      std::vector<char> xs = read_file(argv[6]);
      const auto m =
          static_cast<std::int64_t>(xs.size() / sizeof(float)) / shape[1];
      const tessel::Tensor x =
          tessel::from_blob(xs.data(), {m, shape[1]}, tessel::DType::F32);
      write_file(argv[7], tessel::linear(x, w));
    } else if (mode == "quantize" || mode == "quantize_runtime") {
      const tessel::Tensor values =
          tessel::from_blob(input.data(), shape, tessel::DType::F32);
      tessel::CastOptions options;
      options.runtime_quantizer = mode == "quantize_runtime";
      write_file(argv[6], values.to(type, options));
    } else {
      fmt::print(stderr, "unknown mode {}\n", mode);
      return 2;
    }
  } catch (const tessel::Error& e) {
    fmt::print(stderr, "{}: {}\n", e.code(), e.message());
    return 3;
  }
  return 0;
}

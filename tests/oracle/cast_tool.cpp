// Reads raw little-endian elements of one dtype from a file, casts them with
// Tensor::to and writes the raw result: the C++ half of test_casts.py.
// Usage: cast_tool SRC_DTYPE DST_DTYPE IN_FILE OUT_FILE [--saturate]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: cast_tool SRC DST IN OUT [--saturate]\n";
    return 2;
  }
  try {
    const tessel::DType src = tessel::parse_dtype(argv[1]);
    const tessel::DType dst = tessel::parse_dtype(argv[2]);
    const bool saturate = argc > 5 && std::string(argv[5]) == "--saturate";
    std::ifstream in(argv[3], std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    const auto count =
        static_cast<std::int64_t>(bytes.size()) / tessel::element_size(src);
    const tessel::Tensor input = tessel::from_blob(bytes.data(), {count}, src);
    const tessel::Tensor output = input.to(dst, {.saturate = saturate});
    std::ofstream out(argv[4], std::ios::binary);
    out.write(static_cast<const char*>(output.raw_data()), output.nbytes());
    return out.good() ? 0 : 1;
  } catch (const tessel::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

// tessel's safetensors reader and writer, driven by
// test_safetensors_roundtrip.py against the reference `safetensors`
// package:
//   safetensors_tool copy IN OUT            read IN, write OUT
//   safetensors_tool shard IN DIR BYTES     read IN, write DIR in shards
//   safetensors_tool load PATH              read a file, directory or index;
//                                           print "name dtype shape" lines
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <string>

#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  using namespace tessel;
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "copy" && argc == 4) {
      const SafetensorsFile in = load_safetensors(argv[2]);
      save_safetensors(argv[3], in.tensors, in.metadata);
      return 0;
    }
    if (cmd == "shard" && argc == 5) {
      const SafetensorsFile in = load_safetensors(argv[2]);
      save_safetensors_sharded(argv[3], in.tensors,
                               std::strtoll(argv[4], nullptr, 10), in.metadata);
      return 0;
    }
    if (cmd == "load" && argc == 3) {
      const SafetensorsFile in = load_safetensors_checkpoint(argv[2]);
      for (const Tensor& t : in.tensors) {
        fmt::print("{} {} [{}]\n", t.name(), dtype_name(t.dtype()),
                   fmt::join(t.shape(), ","));
      }
      return 0;
    }
  } catch (const Error& e) {
    fmt::print(stderr, "{}: {}\n", e.code(), e.message());
    return 3;
  }
  fmt::print(stderr, "usage: safetensors_tool copy|shard|load ...\n");
  return 2;
}

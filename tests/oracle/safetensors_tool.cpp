// tessel's safetensors reader and writer, driven by
// test_safetensors_roundtrip.py against the reference `safetensors`
// package:
//   safetensors_tool copy IN OUT            read IN, write OUT
//   safetensors_tool shard IN DIR BYTES     read IN, write DIR in shards
//   safetensors_tool load PATH              read a file, directory or index;
//                                           print "name dtype shape" lines
//   safetensors_tool quantize IN OUT DTYPE GRANULARITY sym|asym
//                                           quantise every tensor of IN
//                                           (GRANULARITY: tensor, channel:AXIS
//                                           or group:SIZE) and write OUT
//   safetensors_tool dequantize IN OUT      write IN's quantised tensors as
//                                           f32, without their scales and
//                                           zero points
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  using namespace tessel;
  const std::string cmd = argc > 1 ? argv[1] : "";
  try {
    if (cmd == "copy" && argc == 4) {
      const SafetensorsFile in = load_safetensors(argv[2]);
      save_safetensors(argv[3], in.tensors, in.metadata, in.quantization);
      return 0;
    }
    if (cmd == "quantize" && argc == 7) {
      const SafetensorsFile in = load_safetensors(argv[2]);
      const DType dtype = parse_dtype(argv[4]);
      const std::string granularity = argv[5];
      AffineChoice choice;
      choice.symmetric = std::string(argv[6]) == "sym";
      if (granularity.starts_with("channel:")) {
        choice.per_channel = true;
        choice.axis = std::strtoll(granularity.c_str() + 8, nullptr, 10);
      } else if (granularity.starts_with("group:")) {
        choice.group_size = std::strtoll(granularity.c_str() + 6, nullptr, 10);
      }
      std::vector<Tensor> out;
      std::map<std::string, AffineQuantization> params;
      for (const Tensor& x : in.tensors) {
        const AffineQuantization p =
            choose_affine_quantization(x, dtype, choice);
        Tensor q = quantize_affine(x, dtype, p);
        q.set_name(x.name());
        out.push_back(q);
        params[x.name()] = p;
      }
      save_safetensors(argv[3], out, in.metadata, params);
      return 0;
    }
    if (cmd == "dequantize" && argc == 4) {
      const SafetensorsFile in = load_safetensors(argv[2]);
      std::vector<Tensor> out;
      for (const auto& [name, p] : in.quantization) {
        out.push_back(in.dequantized(name));
      }
      save_safetensors(argv[3], out);
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
  fmt::print(stderr,
             "usage: safetensors_tool copy|shard|load|quantize|dequantize "
             "...\n");
  return 2;
}

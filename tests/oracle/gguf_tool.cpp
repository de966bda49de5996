// tessel's GGUF reader for test_gguf.py: prints what it read as JSON —
// version, byte order, alignment, metadata (typed) and each tensor's name,
// dtype, row-major shape and an FNV-1a hash of its bytes — or the error code;
// `copy IN OUT` reads IN and writes it again with tessel's writer.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tessel/tessel.hpp"

namespace {

using nlohmann::json;
using tessel::GgufValue;

json to_json(const GgufValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.value)) return *u;
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) return *i;
  if (const auto* d = std::get_if<double>(&v.value)) return *d;
  if (const auto* b = std::get_if<bool>(&v.value)) return *b;
  if (const auto* s = std::get_if<std::string>(&v.value)) return *s;
  json a = json::array();
  for (const GgufValue& e : std::get<std::vector<GgufValue>>(v.value)) {
    a.push_back(to_json(e));
  }
  return a;
}

std::uint64_t fnv1a(const std::uint8_t* p, std::int64_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::int64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string(argv[1]) == "copy")) {
    fmt::print(stderr, "usage: gguf_tool FILE | gguf_tool copy IN OUT\n");
    return 2;
  }
  try {
    if (argc == 4) {  // read with tessel, write with tessel
      const tessel::GgufFile in = tessel::load_gguf(argv[2]);
      tessel::save_gguf(argv[3], in.metadata, in.tensors, in.alignment);
      return 0;
    }
    const tessel::GgufFile f = tessel::load_gguf(argv[1]);
    json meta = json::object();
    for (const auto& [k, v] : f.metadata) {
      meta[k] = {{"type", static_cast<int>(v.type)}, {"value", to_json(v)}};
    }
    json tensors = json::array();
    for (const tessel::Tensor& t : f.tensors) {
      tensors.push_back(
          {{"name", t.name()},
           {"dtype", tessel::dtype_name(t.dtype())},
           {"shape",
            std::vector<std::int64_t>(t.shape().begin(), t.shape().end())},
           {"hash",
            fmt::format("{:016x}",
                        fnv1a(static_cast<const std::uint8_t*>(t.raw_data()),
                              tessel::storage_bytes(t.dtype(), t.numel())))}});
    }
    fmt::print("{}\n",
               json({{"version", f.version},
                     {"big_endian", f.big_endian},
                     {"alignment", f.alignment},
                     {"metadata", meta},
                     {"tensors", tensors}})
                   .dump(-1, ' ', false, json::error_handler_t::replace));
  } catch (const tessel::Error& e) {
    fmt::print(stderr, "{}: {}\n", e.code(), e.message());
    return 3;
  }
  return 0;
}

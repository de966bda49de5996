// libFuzzer target for the JSON tensor descriptors: any text must give a
// descriptor or a tessel::Error; a descriptor that parsed round-trips, and
// a concrete one lays a tensor over a buffer of its total_bytes without
// reading outside it. The same text is tried as a sparse (COO/CSR)
// descriptor: a tensor or an Error, and a tensor round-trips.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include "tessel/tessel.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  try {
    const tessel::TensorDescriptor d = tessel::descriptor_from_json(
        std::string(reinterpret_cast<const char*>(data), size));
    const std::string text = tessel::to_json(d);
    if (tessel::to_json(tessel::descriptor_from_json(text)) != text) {
      __builtin_trap();
    }
    if (!d.symbolic() && d.total_bytes <= (1 << 20)) {
      const tessel::Tensor t = tessel::tensor_from_descriptor(
          d, tessel::Storage::allocate(d.total_bytes));
      volatile double sink = 0;
      if (t.numel() > 0 && tessel::is_byte_addressable(t.dtype())) {
        sink = sink + tessel::sum(t.to(tessel::DType::F64)).item<double>();
      }
    }
  } catch (const tessel::Error&) {
  }
  try {
    const tessel::SparseTensor s = tessel::sparse_from_json(
        std::string(reinterpret_cast<const char*>(data), size));
    std::visit(
        [](const auto& t) {
          const std::string text = tessel::to_json(t);
          using T = std::decay_t<decltype(t)>;
          const auto back = std::get<T>(tessel::sparse_from_json(text));
          if (tessel::to_json(back) != text) __builtin_trap();
          if (t.nnz() <= (1 << 16)) {
            volatile double sink = 0;
            sink = sink + static_cast<double>(t.values().numel());
          }
        },
        s);
  } catch (const tessel::Error&) {
  }
  return 0;
}

// tessel's sparse tensors, driven by test_torch_sparse.py against PyTorch.
// Data moves as .npy files; OUT names an output prefix.
//   sparse_tool coo IDX VALS SHAPE OUT      from_parts, coalesce, to_csr,
//                                           to_dense -> OUT_{indices,values,
//                                           crow,col,csr_values,dense}.npy
//   sparse_tool csr CROW COL VALS SHAPE OUT from_parts, to_coo, to_dense
//                                           -> OUT_{indices,dense}.npy
//   sparse_tool dense X INDEX OUT           to_sparse_coo / _csr with i32 or
//                                           i64 -> OUT_{indices,values,crow,
//                                           col}.npy
//   sparse_tool spmm CROW COL VALS SHAPE B DTYPE LAYOUT OUT
//                                           values and b cast to DTYPE; b
//                                           passed as given ("row") or as
//                                           the transpose of B ("t") -> OUT.npy
//                                           (f32 for 16-bit results)
// SHAPE is "3,4". An error prints "CODE: message" and exits with 3.
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

Shape parse_shape(const std::string& text) {
  Shape shape;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto comma = text.find(',', start);
    shape.push_back(
        std::strtoll(text.substr(start, comma - start).c_str(), nullptr, 10));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shape;
}

void save(const std::string& prefix, const char* what, const Tensor& t) {
  save_npy(prefix + "_" + what + ".npy", t);
}

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "coo" && argc == 6) {
    const CooTensor coo = CooTensor::from_parts(
        load_npy(argv[2]), load_npy(argv[3]), parse_shape(argv[4]));
    const CooTensor c = coo.coalesce();
    save(argv[5], "indices", c.indices());
    save(argv[5], "values", c.values());
    save(argv[5], "dense", coo.to_dense());
    if (coo.rank() == 2) {
      const CsrTensor csr = coo.to_csr();
      save(argv[5], "crow", csr.crow_indices());
      save(argv[5], "col", csr.col_indices());
      save(argv[5], "csr_values", csr.values());
    }
    return 0;
  }
  if (cmd == "csr" && argc == 7) {
    const CsrTensor csr =
        CsrTensor::from_parts(load_npy(argv[2]), load_npy(argv[3]),
                              load_npy(argv[4]), parse_shape(argv[5]));
    save(argv[6], "indices", csr.to_coo().indices());
    save(argv[6], "dense", csr.to_dense());
    return 0;
  }
  if (cmd == "dense" && argc == 5) {
    const Tensor x = load_npy(argv[2]);
    const DType index = parse_dtype(argv[3]);
    const CooTensor coo = to_sparse_coo(x, index);
    save(argv[4], "indices", coo.indices());
    save(argv[4], "values", coo.values());
    if (x.rank() == 2) {
      const CsrTensor csr = to_sparse_csr(x, index);
      save(argv[4], "crow", csr.crow_indices());
      save(argv[4], "col", csr.col_indices());
    }
    return 0;
  }
  if (cmd == "spmm" && argc == 10) {
    const DType dtype = parse_dtype(argv[7]);
    const CsrTensor a = CsrTensor::from_parts(
        load_npy(argv[2]), load_npy(argv[3]), load_npy(argv[4]).to(dtype),
        parse_shape(argv[5]));
    Tensor b = load_npy(argv[6]).to(dtype);
    if (std::string(argv[8]) == "t") b = b.transpose(0, 1);
    Tensor y = matmul(a, b);
    if (element_size(dtype) < 4) y = y.to(DType::F32);
    save_npy(argv[9], y);
    return 0;
  }
  fmt::print(stderr, "usage: sparse_tool coo|csr|dense|spmm ...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const tessel::Error& e) {
    fmt::print(stderr, "{}: {}\n", e.code(), e.message());
    return 3;
  }
}

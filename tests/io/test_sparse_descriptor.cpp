// COO and CSR tensors in the format standard's JSON: its own examples,
// exact round trips for every writable dtype, and refusals of hostile
// documents before anything is built from them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using nlohmann::json;

// Bitwise equality (NaN payloads included) of two contiguous tensors.
bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.contiguous().raw_data(), b.contiguous().raw_data(),
                     static_cast<std::size_t>(a.nbytes())) == 0;
}

// The standard's COO example with its "..." cut to three entries.
constexpr const char* kStandardCoo = R"({
  "format": "COO",
  "shape": [1000, 1000],
  "nnz": 3,
  "indices": {"dtype": "INT32", "data": [[0, 5], [0, 12], [1, 3]]},
  "values": {"dtype": "FLOAT32", "data": [1.5, 2.3, 0.7]}
})";

// Its CSR example over a 3 x 50 matrix: plain lists, no dtypes.
constexpr const char* kStandardCsr = R"({
  "format": "CSR",
  "shape": [3, 50],
  "row_pointers": [0, 3, 3, 5],
  "column_indices": [5, 12, 45, 0, 49],
  "values": [1.5, 2.3, 0.7, -1.0, 4.0]
})";

TEST(SparseDescriptor, ReadsTheStandardsExamples) {
  const CooTensor coo = std::get<CooTensor>(sparse_from_json(kStandardCoo));
  EXPECT_EQ(coo.shape(), (Shape{1000, 1000}));
  EXPECT_EQ(coo.nnz(), 3);
  EXPECT_EQ(coo.index_dtype(), DType::I32);
  EXPECT_EQ(coo.dtype(), DType::F32);
  const Tensor dense = coo.to_dense();
  EXPECT_EQ(dense.at<float>({0, 5}), 1.5f);
  EXPECT_EQ(dense.at<float>({0, 12}), 2.3f);
  EXPECT_EQ(dense.at<float>({1, 3}), 0.7f);
  EXPECT_EQ(sum(dense).item<float>(), 1.5f + 2.3f + 0.7f);

  const CsrTensor csr = std::get<CsrTensor>(sparse_from_json(kStandardCsr));
  EXPECT_EQ(csr.index_dtype(), DType::I64);  // plain lists
  EXPECT_EQ(csr.dtype(), DType::F32);
  const Tensor m = csr.to_dense();
  EXPECT_EQ(m.at<float>({0, 45}), 0.7f);
  EXPECT_EQ(m.at<float>({2, 0}), -1.0f);
  EXPECT_EQ(m.at<float>({2, 49}), 4.0f);
  EXPECT_EQ(sum(m.select(0, 1)).item<float>(), 0.0f);  // the empty row
}

TEST(SparseDescriptor, RoundTripsExactly) {
  // Values chosen to need every bit: f32/f64 non-representable decimals,
  // non-finite values, integer extremes.
  const Tensor f = from_vector<double>(
      {0.1, -1e-300, std::numeric_limits<double>::infinity(),
       std::numeric_limits<double>::quiet_NaN(), 3.0e38, 0.0});
  for (const DType d :
       {DType::F64, DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN,
        DType::I8, DType::U8, DType::I64, DType::U64}) {
    for (const DType index : {DType::I32, DType::I64}) {
      SCOPED_TRACE(std::string(dtype_name(d)) + " " +
                   std::string(dtype_name(index)));
      Tensor dense = zeros({2, 3}, d);
      if (is_floating_point(d)) {
        dense = f.reshape({2, 3}).to(d);
      } else if (d == DType::I64) {
        dense = from_vector<std::int64_t>(
            {std::numeric_limits<std::int64_t>::min(), 0, 7, -1, 0,
             std::numeric_limits<std::int64_t>::max()},
            {2, 3});
      } else if (d == DType::U64) {
        dense = from_vector<std::uint64_t>(
            {std::numeric_limits<std::uint64_t>::max(), 0, 1, 0, 0, 2}, {2, 3});
      } else {
        dense = from_vector<std::int64_t>({-128, 0, 1, 0, 127, 0}, {2, 3})
                    .to(d, {.saturate = true});
      }
      const CooTensor coo = to_sparse_coo(dense, index);
      const auto back = std::get<CooTensor>(sparse_from_json(to_json(coo)));
      EXPECT_EQ(back.index_dtype(), index);
      EXPECT_EQ(back.dtype(), d);
      EXPECT_TRUE(equal(back.indices(), coo.indices()));
      // Bitwise for floats (NaN included): compare the bytes.
      EXPECT_TRUE(same_bytes(back.values(), coo.values()));
      const CsrTensor csr = to_sparse_csr(dense, index);
      const auto csr_back = std::get<CsrTensor>(sparse_from_json(to_json(csr)));
      EXPECT_TRUE(equal(csr_back.crow_indices(), csr.crow_indices()));
      EXPECT_TRUE(equal(csr_back.col_indices(), csr.col_indices()));
      EXPECT_TRUE(same_bytes(csr_back.values(), csr.values()));
    }
  }
  // A rank-3 COO, uncoalesced (a repeat that sums), stays as written.
  const CooTensor three = CooTensor::from_parts(
      from_vector<std::int64_t>({1, 1, 0, 2, 2, 1, 0, 0, 3}, {3, 3}),
      from_vector<float>({1, 2, 5}), {2, 3, 4});
  const auto back = std::get<CooTensor>(sparse_from_json(to_json(three)));
  EXPECT_TRUE(equal(back.to_dense(), three.to_dense()));
  EXPECT_EQ(back.nnz(), 3);
  // Complex values have no JSON number.
  EXPECT_TESSEL_ERROR(
      to_json(to_sparse_coo(from_vector<float>({1, 0}).to(DType::C64))),
      "E2201", "no JSON number");
}

TEST(SparseDescriptor, RefusesHostileDocuments) {
  const auto refused = [](json doc, const char* field) {
    SCOPED_TRACE(doc.dump());
    EXPECT_TESSEL_ERROR(sparse_from_json(doc.dump()), "E3001", field);
  };
  const json coo = json::parse(kStandardCoo);
  const json csr = json::parse(kStandardCsr);
  EXPECT_TESSEL_ERROR(sparse_from_json("{"), "E3001", "not JSON");
  json j = coo;
  j["format"] = "BSR";
  refused(j, "'format'");
  j = coo;
  j["nnz"] = 4;
  refused(j, "'nnz'");
  j = coo;
  j["indices"]["data"][1] = {0, 1000};  // outside the shape
  refused(j, "'indices.data'");
  j = coo;
  j["indices"]["data"][1] = {0};  // one index for two axes
  refused(j, "'indices.data'");
  j = coo;
  j["indices"]["data"][0] = {-1, 0};
  refused(j, "'indices.data'");
  j = coo;
  j["shape"] = {5000000000LL, 2};  // an index past INT32 in an INT32 file
  j["indices"]["data"][0] = {3000000000LL, 0};
  refused(j, "does not fit INT32");
  j = coo;
  j["indices"]["dtype"] = "FLOAT32";
  refused(j, "'indices.dtype'");
  j = coo;
  j["values"]["data"] = {1.5, 2.3};  // two values for three entries
  refused(j, "'values'");
  j = coo;
  j["values"]["dtype"] = "INT8";
  j["values"]["data"] = {1, 2, 300};
  refused(j, "does not fit INT8");
  j = coo;
  j["values"]["dtype"] = "INT8";  // 1.5 is no integer
  refused(j, "'values'");
  j = coo;
  j["values"]["dtype"] = "COMPLEX64";
  refused(j, "'values.dtype'");
  j = coo;
  j["values"]["dtype"] = "BOOL";
  refused(j, "'values.dtype'");
  j = coo;
  j["shape"] = json::array();
  refused(j, "'shape'");
  j = coo;
  j["shape"] = {-3, 2};
  refused(j, "'shape'");
  j = csr;
  j["row_pointers"] = {0, 3, 2, 5};  // decreasing
  EXPECT_TESSEL_ERROR(sparse_from_json(j.dump()), "E3001");
  j = csr;
  j["row_pointers"] = {0, 3, 5};  // two pointers short of 3 rows
  refused(j, "'row_pointers'");
  j = csr;
  j["column_indices"] = {12, 5, 45, 0, 49};  // unsorted within row 0
  EXPECT_TESSEL_ERROR(sparse_from_json(j.dump()), "E3001");
  j = csr;
  j["column_indices"] = {5, 12, 50, 0, 49};  // outside 50 columns
  refused(j, "'column_indices'");
  j = csr;
  j["shape"] = {3, 50, 1};
  refused(j, "'shape'");
  j = csr;
  j["values"] = {1.5, "x", 0.7, -1.0, 4.0};
  refused(j, "'values'");
}

}  // namespace
}  // namespace tessel

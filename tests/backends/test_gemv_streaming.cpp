// The decode GEMV streams its rows one of several ways, chosen by CPU vendor
// (simd::row_streaming), so a machine of one vendor would only ever run its
// own choice: each is run here, on every SIMD target, against the f64
// product of the same values.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <vector>

#include "backends/cpu/simd/gemv_simd.hpp"
#include "tessel/tessel.hpp"

namespace tessel {
namespace {

using cpu::simd::FloatStorage;
using cpu::simd::RowStreaming;

TEST(GemvStreaming, EveryWayOfStreamingTheRowsGivesTheProduct) {
  // 37 rows of 999 (odd: the bf16 pairs' scalar tail) and of 1024, the
  // rows 1 element apart from their stored width (ldw > k).
  Generator g(31);
  for (const std::int64_t k : {999, 1024}) {
    const std::int64_t rows = 37, ldw = k + 1;
    const Tensor w = randn({rows, ldw}, g);
    const Tensor x = randn({k}, g);
    for (const DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      const Tensor stored = w.to(dtype);
      const Tensor exact = stored.to(DType::F64);
      const double* w64 = exact.const_data<double>();
      const float* xs = x.const_data<float>();
      std::vector<double> want(static_cast<std::size_t>(rows));
      double scale = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t j = 0; j < k; ++j) {
          want[static_cast<std::size_t>(r)] += w64[r * ldw + j] * xs[j];
        }
        scale = std::max(scale, std::abs(want[static_cast<std::size_t>(r)]));
      }
      const FloatStorage storage = dtype == DType::F32   ? FloatStorage::F32
                                   : dtype == DType::F16 ? FloatStorage::F16
                                                         : FloatStorage::BF16;
      for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        for (const RowStreaming how :
             {RowStreaming{false, false}, RowStreaming{true, false},
              RowStreaming{false, true}, RowStreaming{true, true}}) {
          std::vector<float> y(static_cast<std::size_t>(rows), NAN);
          cpu::simd::gemv_rows(storage, stored.raw_data(), ldw, rows, k, xs,
                               y.data(), how);
          for (std::int64_t r = 0; r < rows; ++r) {
            // f32 sums of ~1000 products: within 1e-5 of the largest.
            EXPECT_NEAR(y[static_cast<std::size_t>(r)],
                        want[static_cast<std::size_t>(r)], 1e-5 * scale)
                << dtype_name(dtype) << " k " << k << " row " << r
                << " prefetch " << how.prefetch << " pairs " << how.bf16_pairs
                << " on " << hwy::TargetName(target);
          }
        }
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

}  // namespace
}  // namespace tessel

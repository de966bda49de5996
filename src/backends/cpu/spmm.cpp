// CSR x dense (SpMM), row by row: each output row is a sum of scaled rows
// of the dense operand, so the inner loop is a unit-stride axpy over N.
// Plain loops: at -O2/-O3 the compiler vectorises the axpy for the
// baseline ISA (no Highway needed for a single multiply-add stream), and
// the gathered dense rows, not arithmetic, bound the speed.
#include <algorithm>
#include <vector>

#include "backends/cpu/spmm_kernels.hpp"
#include "core/check.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

// Work of about this many multiply-adds per thread before splitting pays.
constexpr std::int64_t kWorkPerBlock = 1 << 15;

// Row r starts block b when it is the first row whose cost so far,
// crow[r] + r (entries plus rows, each row costing N), reaches b / blocks
// of the total; rows thus split evenly by work even when their lengths
// are skewed.
template <class Index>
std::int64_t block_start(const Index* crow, std::int64_t rows,
                         std::int64_t block, std::int64_t blocks) {
  const std::int64_t total = static_cast<std::int64_t>(crow[rows]) + rows;
  const std::int64_t target =
      total / blocks * block + total % blocks * block / blocks;
  std::int64_t lo = 0, hi = rows;  // first r in [0, rows] with cost >= target
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(crow[mid]) + mid < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class Index, class Acc, class Out>
void spmm_rows(const Index* crow, const Index* col, const Acc* values,
               const Acc* dense, Out* out, std::int64_t n, std::int64_t lo,
               std::int64_t hi) {
  // Out == Acc accumulates in place; narrower outputs use a row buffer
  // and round once.
  constexpr bool direct = std::is_same_v<Out, Acc>;
  std::vector<Acc> buffer(direct ? 0 : static_cast<std::size_t>(n));
  for (std::int64_t r = lo; r < hi; ++r) {
    Out* out_row = out + r * n;
    Acc* y;
    if constexpr (direct)
      y = out_row;
    else
      y = buffer.data();
    std::fill(y, y + n, Acc{0});
    for (auto p = static_cast<std::int64_t>(crow[r]); p < crow[r + 1]; ++p) {
      const Acc v = values[p];
      const Acc* x = dense + static_cast<std::int64_t>(col[p]) * n;
      for (std::int64_t j = 0; j < n; ++j) y[j] += v * x[j];
    }
    if constexpr (!direct) {
      for (std::int64_t j = 0; j < n; ++j) out_row[j] = convert<Out>(y[j]);
    }
  }
}

template <class Index, class Acc, class Out>
void spmm_typed(const KernelInput& crow_t, const KernelInput& col_t,
                const KernelInput& values_t, const KernelInput& dense_t,
                const KernelOutput& out_t) {
  const Index* crow = crow_t.const_data<Index>();
  const Index* col = col_t.const_data<Index>();
  const Acc* values = values_t.const_data<Acc>();
  const Acc* dense = dense_t.const_data<Acc>();
  Out* out = out_t.data<Out>();
  const std::int64_t rows = out_t.shape()[0], n = out_t.shape()[1];
  const std::int64_t work = (static_cast<std::int64_t>(crow[rows]) + rows) *
                            std::max<std::int64_t>(n, 1);
  const std::int64_t blocks = std::clamp<std::int64_t>(
      work / kWorkPerBlock, 1,
      std::min<std::int64_t>(get_num_threads(),
                             std::max<std::int64_t>(rows, 1)));
  parallel_for(0, blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    const std::int64_t lo = block_start(crow, rows, b0, blocks);
    const std::int64_t hi = block_start(crow, rows, b1, blocks);
    spmm_rows<Index, Acc, Out>(crow, col, values, dense, out, n, lo, hi);
  });
}

// f64 outputs accumulate in f64, every other float in f32.
template <class Index>
void spmm_index(const KernelInput& crow, const KernelInput& col,
                const KernelInput& values, const KernelInput& dense,
                const KernelOutput& out) {
  switch (out.dtype()) {
    case DType::F64:
      return spmm_typed<Index, double, double>(crow, col, values, dense, out);
    case DType::F32:
      return spmm_typed<Index, float, float>(crow, col, values, dense, out);
    case DType::BF16:
      return spmm_typed<Index, float, BFloat16>(crow, col, values, dense, out);
    case DType::F16:
      return spmm_typed<Index, float, Half>(crow, col, values, dense, out);
    default: TESSEL_ASSERT(false && "spmm output dtype");
  }
}

}  // namespace

void spmm_csr(const KernelInput& crow, const KernelInput& col,
              const KernelInput& values, const KernelInput& dense,
              const KernelOutput& out) {
  if (crow.dtype() == DType::I32)
    spmm_index<std::int32_t>(crow, col, values, dense, out);
  else
    spmm_index<std::int64_t>(crow, col, values, dense, out);
}

}  // namespace tessel::cpu

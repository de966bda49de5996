// The sparse (CSR) x dense product. Operands are checked and prepared by
// src/ops/sparse.cpp: indices valid, values and dense in the accumulation
// type, everything contiguous.
#pragma once

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// out[r, :] = sum over p in [crow[r], crow[r + 1]) of values[p] *
// dense[col[p], :]. crow [rows + 1] and col [nnz] are both i32 or both
// i64; out [rows, N] is f16, bf16, f32 or f64; values [nnz] and dense
// [cols, N] are in the accumulation type: f64 for an f64 out, else f32.
void spmm_csr(const KernelInput& crow, const KernelInput& col,
              const KernelInput& values, const KernelInput& dense,
              const KernelOutput& out);

}  // namespace tessel::cpu

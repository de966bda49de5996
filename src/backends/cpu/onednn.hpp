// oneDNN, the GEMM and convolution engine of the CPU backend (chosen by
// measurement, see docs/gemm.md). One CPU engine, a stream per thread and a
// cache of primitives keyed by their descriptors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu::onednn {

// "oneDNN 2.6.3 (avx512_core_bf16, OpenMP)".
std::string describe();

// Whether oneDNN multiplies bf16 with bf16 dot-product instructions on
// this CPU (AVX512-BF16 or AMX) rather than emulating them.
bool has_native_bf16();

// out[..., M, N] = a[..., M, K] @ b[..., K, N] (+ bias[N]) for operands of
// one rank >= 2 whose batch extents are equal or 1 (broadcast). The last
// two axes of a and b must each be dense row- or column-major. Returns
// false when oneDNN has no kernel for these dtypes on this CPU (the caller
// then takes another path); out's dtype is the accumulator's or the
// inputs' (rounded once).
bool matmul(const KernelInput& a, const KernelInput& b, const KernelInput* bias,
            const KernelOutput& out);

// y = conv(x, w) + bias for logical channels-first views: x (N, C, S...),
// w (O, C/groups, K...), y (N, O, S'...), any strides (a channels-last
// tensor is passed as its permuted view). With `transpose`, a transposed
// convolution: w is (C, O/groups, K...) and y the larger output. Returns
// false when oneDNN has no kernel for the dtypes.
bool convolution(const KernelInput& x, const KernelInput& w,
                 const KernelInput* bias, const KernelOutput& y,
                 const ConvGeometry& g, bool transpose);

// Row-major C = alpha * op(A) op(B) + beta * C in f32 (oneDNN's BLAS-like
// sgemm: no primitive to create, for the many small products of fused
// kernels). Call from inside a parallel region to run single-threaded.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
           std::int64_t k, float alpha, const float* a, std::int64_t lda,
           const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

// Threads oneDNN may use from the calling thread: all of the pool's
// outside a parallel region, one inside (no nested oversubscription).
void set_threads_for_this_call();

}  // namespace tessel::cpu::onednn

// The CPU backend's GEMM engine choice (Note [backend seam]): the decode
// GEMV, oneDNN's sgemm, its matmul primitive (retried on contiguous copies),
// 16-bit products widened to f32 where the CPU has no 16-bit kernel, the
// exact 8-bit path, and the reference GEMM for f64 and wide integers.
#include <algorithm>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/gemm_kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// The last two axes dense row-major or column-major (what GEMM kernels take).
bool gemm_layout(const Tensor& t) {
  const auto r = t.shape().size();
  const auto rows = t.shape()[r - 2], cols = t.shape()[r - 1];
  const auto s_row = t.strides()[r - 2], s_col = t.strides()[r - 1];
  const bool row_major =
      (s_col == 1 || cols <= 1) && (s_row >= cols || rows <= 1);
  const bool col_major =
      (s_row == 1 || rows <= 1) && (s_col >= rows || cols <= 1);
  for (std::size_t d = 0; d + 2 < r; ++d) {
    if (t.strides()[d] == 0 && t.shape()[d] > 1)
      return false;  // expanded batch
  }
  return row_major || col_major;
}

// out (row-major) = a @ b (+ bias) for single f32 matrices (leading axes
// of extent 1) whose inner axes are row- or column-major.
bool sgemm_2d(const Tensor& a, const Tensor& b, const Tensor* bias,
              const Tensor& out) {
  const std::size_t r = out.shape().size();
  const std::int64_t m = out.shape()[r - 2], n = out.shape()[r - 1],
                     k = a.shape()[r - 1];
  auto layout = [](const Tensor& t, bool* transposed, std::int64_t* ld) {
    const std::size_t rank = t.shape().size();
    const std::int64_t rows = t.shape()[rank - 2], cols = t.shape()[rank - 1];
    const std::int64_t s_row = t.strides()[rank - 2],
                       s_col = t.strides()[rank - 1];
    if ((s_col == 1 || cols == 1) && (s_row >= cols || rows == 1)) {
      *transposed = false;
      *ld = std::max<std::int64_t>({s_row, cols, 1});
      return true;
    }
    if ((s_row == 1 || rows == 1) && (s_col >= rows || cols == 1)) {
      *transposed = true;
      *ld = std::max<std::int64_t>({s_col, rows, 1});
      return true;
    }
    return false;
  };
  bool ta, tb;
  std::int64_t lda, ldb;
  if (a.dtype() != DType::F32 || b.dtype() != DType::F32 ||
      !out.is_contiguous() || !layout(a, &ta, &lda) || !layout(b, &tb, &ldb)) {
    return false;
  }
  // With b transposed (x W^T), sgemm repacks W on every call: measured
  // 3-10x slower than the matmul primitive for 2 <= m < 1024.
  if (tb && m > 1 && m < 1024) return false;
  float beta = 0.0f;
  if (bias) {
    Tensor(out).copy_(bias->to(DType::F32).expand(out.shape()));
    beta = 1.0f;
  }
  cpu::onednn::sgemm(ta, tb, m, n, k, 1.0f, input_view(a).data<float>(), lda,
                     input_view(b).data<float>(), ldb, beta,
                     output_view(out).data<float>(),
                     std::max<std::int64_t>(n, 1));
  return true;
}

// The decode step, out (1, n) = a @ b with b = W^T for row-major weights
// W (n, k): tessel's GEMV streams W at memory speed, where oneDNN reaches
// about two thirds of it (docs/gemm.md).
bool decode_gemv(const Tensor& a, const Tensor& b, const Tensor* bias,
                 Tensor& out) {
  const std::size_t r = out.shape().size();
  const std::int64_t m = out.shape()[r - 2], n = out.shape()[r - 1],
                     k = a.shape()[r - 1];
  if (m != 1 || out.numel() != n || k == 0) return false;
  const std::int64_t w_k = b.strides()[r - 2], w_n = b.strides()[r - 1];
  if ((w_k != 1 && k > 1) || w_n < k) return false;
  const Tensor x = a.to(DType::F32).reshape({m, k}).contiguous();
  Tensor y = empty({m, n}, DType::F32, Device::cpu());
  cpu::gemv(input_view(x), input_view(b).raw_data(), b.dtype(), w_n, n,
            output_view(y));
  if (bias) y = add(y, bias->to(DType::F32));
  out.copy_(y.reshape(out.shape()));
  return true;
}

// GEMM of equal-rank operands (rank >= 2) into out of shape batch + (M, N).
// oneDNN's matmul primitive on views; false when it has no kernel.
bool onednn_matmul(const Tensor& a, const Tensor& b, const Tensor* bias,
                   const Tensor& out) {
  const KernelInput bias_view = bias ? input_view(*bias) : KernelInput();
  return cpu::onednn::matmul(input_view(a), input_view(b),
                             bias ? &bias_view : nullptr, output_view(out));
}

void gemm(const Tensor& a, const Tensor& b, const Tensor* bias, Tensor out) {
  if (a.numel() == 0 || b.numel() == 0) {
    out.fill_(0);
    if (bias) add_out(out, out, *bias);
    return;
  }
  const DType dtype = out.dtype();
  const bool narrow_float = dtype == DType::F16 || dtype == DType::BF16;
  const bool onednn_dtype =
      dtype == DType::F32 || narrow_float || dtype == DType::I32;
  if (onednn_dtype) {
    const Tensor a1 = gemm_layout(a) ? a : a.contiguous();
    const Tensor b1 = gemm_layout(b) ? b : b.contiguous();
    if ((narrow_float || dtype == DType::F32) && decode_gemv(a1, b1, bias, out))
      return;
    // One f32 product: oneDNN's BLAS-like sgemm beats its matmul primitive
    // by about 10% at 2048 here (docs/gemm.md).
    if (dtype == DType::F32 &&
        out.numel() ==
            out.shape()[out.rank() - 2] * out.shape()[out.rank() - 1] &&
        sgemm_2d(a1, b1, bias, out)) {
      return;
    }
    if (onednn_matmul(a1, b1, bias, out)) return;
    if (onednn_matmul(a1.contiguous(), b1.contiguous(), bias, out)) return;
    if (narrow_float) {
      // No 16-bit kernel on this CPU (f16 needs AVX512-FP16): the inputs
      // widen exactly to f32, which accumulates; the result rounds once.
      Tensor wide = empty(out.shape(), DType::F32, Device::cpu());
      const Tensor wide_bias = bias ? bias->to(DType::F32) : Tensor();
      gemm(a.to(DType::F32), b.to(DType::F32), bias ? &wide_bias : nullptr,
           wide);
      out.copy_(wide);
      return;
    }
  }
  // Reference GEMM on rank-3 views with broadcast batches.
  const std::size_t r = out.shape().size();
  Shape batch(out.shape().begin(), out.shape().end() - 2);
  auto flat = [&](const Tensor& t) {
    Shape target = batch;
    target.push_back(t.shape()[r - 2]);
    target.push_back(t.shape()[r - 1]);
    return t.expand(target).reshape({-1, t.shape()[r - 2], t.shape()[r - 1]});
  };
  Tensor out3 = empty({out.numel() / (out.shape()[r - 2] * out.shape()[r - 1]),
                       out.shape()[r - 2], out.shape()[r - 1]},
                      dtype, Device::cpu());
  cpu::gemm_reference(input_view(flat(a.to(dtype))),
                      input_view(flat(b.to(dtype))), output_view(out3));
  out.copy_(out3.reshape(out.shape()));
  if (bias) add_out(out, out, *bias);
}

// 8-bit integer products without an exact integer kernel (CPUs without
// VNNI, where oneDNN's int8 kernels saturate; u8 x u8, which oneDNN lacks):
// f32 GEMMs over K in blocks of 256. A product of two 8-bit values is below
// 2^16 in magnitude (255 * 255), so a block's sum stays within 2^24, where
// every integer is exact in f32 whatever the summation order; the block
// sums are added in i32 (wrapping, as every i32 accumulation does). About
// the f32 GEMM's speed instead of the reference loop's (100x on AVX2).
void exact_int8_gemm(const Tensor& a, const Tensor& b, Tensor out) {
  constexpr std::int64_t kBlock = 256;
  const std::int64_t k = a.shape().back();
  const Tensor af = a.to(DType::F32), bf = b.to(DType::F32);
  const std::size_t r = out.shape().size();
  Tensor block = empty(out.shape(), DType::F32, Device::cpu());
  out.fill_(0);
  for (std::int64_t k0 = 0; k0 < k; k0 += kBlock) {
    const std::int64_t k1 = std::min(k, k0 + kBlock);
    gemm(af.slice(static_cast<std::int64_t>(r) - 1, k0, k1),
         bf.slice(static_cast<std::int64_t>(r) - 2, k0, k1), nullptr, block);
    add_out(out, out, block.to(DType::I32));
  }
}

}  // namespace

void CpuBackend::matmul(const Tensor& a, const Tensor& b, const Tensor* bias,
                        const Tensor& out) const {
  const bool int8 = out.dtype() == DType::I32 && element_size(a.dtype()) == 1 &&
                    element_size(b.dtype()) == 1 && a.dtype() != DType::Bool;
  if (!int8) {
    gemm(a, b, bias, out);
  } else if ((a.dtype() == DType::U8 && b.dtype() == DType::U8) ||
             !onednn_matmul(a.contiguous(), b.contiguous(), nullptr, out)) {
    exact_int8_gemm(a, b, out);  // oneDNN has no u8 x u8, or no exact one
  }
}

}  // namespace tessel

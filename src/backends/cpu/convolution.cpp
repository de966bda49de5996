// The CPU backend's convolution engine choice (Note [backend seam]): oneDNN
// for f32 and bf16 (f16 widened to f32), retried on contiguous copies when
// it refuses a layout; the direct reference kernels, accumulating in f64,
// for f64 and for geometries oneDNN refuses.
#include "backends/cpu/conv_kernels.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/onednn.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

bool onednn_convolution(const Tensor& x, const Tensor& w, const Tensor* bias,
                        const Tensor& y, const ConvGeometry& g,
                        bool transpose) {
  const KernelInput bias_view = bias ? input_view(*bias) : KernelInput();
  return cpu::onednn::convolution(input_view(x), input_view(w),
                                  bias ? &bias_view : nullptr, output_view(y),
                                  g, transpose);
}

}  // namespace

void CpuBackend::convolution(const Tensor& x, const Tensor& w,
                             const Tensor& bias, const Tensor& y,
                             const ConvGeometry& g, bool transpose) const {
  const DType dtype = y.dtype();
  const DType kernel_dtype = dtype == DType::F16 ? DType::F32 : dtype;
  if (kernel_dtype == DType::F32 || kernel_dtype == DType::BF16) {
    const Tensor xk = x.to(kernel_dtype), wk = w.to(kernel_dtype);
    const Tensor bk = bias.defined() ? bias.to(kernel_dtype) : Tensor();
    const Tensor yk = kernel_dtype == dtype
                          ? y
                          : empty(y.shape(), kernel_dtype, Device::cpu());
    const Tensor* bp = bias.defined() ? &bk : nullptr;
    bool done = onednn_convolution(xk, wk, bp, yk, g, transpose) ||
                onednn_convolution(xk.contiguous(), wk.contiguous(), bp, yk, g,
                                   transpose);
    if (done) {
      if (yk.dtype() != dtype) Tensor(y).copy_(yk);
      return;
    }
  }
  // f64, and geometries oneDNN refuses (a transposed convolution whose
  // output_padding exceeds its padding on a kernel of extent 1): the direct
  // kernels, accumulating in f64.
  Tensor yc = empty(y.shape(), dtype, Device::cpu());
  const Tensor bc = bias.defined() ? bias.contiguous() : Tensor();
  if (transpose) {
    cpu::conv_transpose_reference(
        input_view(x.contiguous()), input_view(w.contiguous()), input_view(bc),
        output_view(yc), g.stride, g.dilation, g.pad_begin, g.groups);
  } else {
    cpu::conv_reference(input_view(x.contiguous()), input_view(w.contiguous()),
                        input_view(bc), output_view(yc), g.stride, g.dilation,
                        g.pad_begin, g.groups);
  }
  Tensor(y).copy_(yc);
}

}  // namespace tessel

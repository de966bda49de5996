// The parts of complex tensors. The views rewrite strides in place of a
// kernel: c64 element k is f32 elements 2k and 2k+1 of the same storage.
#include "tessel/ops/complex.hpp"

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

Tensor view_as_real(const Tensor& z) {
  const ops::CheckedOperands checked("view_as_real", z);
  TESSEL_CHECK(is_complex(z.dtype()), BadDType, "view_as_real",
               "needs a complex tensor, got {}", dtype_name(z.dtype()));
  Shape shape = z.shape();
  Strides strides = z.strides();
  for (auto& s : strides) s *= 2;
  shape.push_back(2);
  strides.push_back(1);
  return Tensor(z.storage(), std::move(shape), std::move(strides),
                z.storage_offset() * 2, complex_component_type(z.dtype()));
}

Tensor view_as_complex(const Tensor& x) {
  const ops::CheckedOperands checked("view_as_complex", x);
  TESSEL_CHECK(x.dtype() == DType::F32 || x.dtype() == DType::F64, BadDType,
               "view_as_complex", "needs an f32 or f64 tensor, got {}",
               dtype_name(x.dtype()));
  TESSEL_CHECK(
      x.rank() >= 1 && x.shape().back() == 2 && x.strides().back() == 1,
      BadShape, "view_as_complex",
      "needs a last axis of size 2 and stride 1, got shape {} with "
      "strides {}",
      shape_string(x.shape()), shape_string(x.strides()));
  Shape shape(x.shape().begin(), x.shape().end() - 1);
  Strides strides(x.strides().begin(), x.strides().end() - 1);
  for (auto& s : strides) {
    TESSEL_CHECK(s % 2 == 0, BadShape, "view_as_complex",
                 "strides {} are not whole complex elements (each must be "
                 "even)",
                 shape_string(x.strides()));
    s /= 2;
  }
  TESSEL_CHECK(x.storage_offset() % 2 == 0, BadShape, "view_as_complex",
               "the storage offset {} is not a whole complex element",
               x.storage_offset());
  return Tensor(x.storage(), std::move(shape), std::move(strides),
                x.storage_offset() / 2, complex_type_for(x.dtype()));
}

Tensor real(const Tensor& x) {
  const ops::CheckedOperands checked("real", x);
  if (!is_complex(x.dtype())) return x;
  return view_as_real(x).select(-1, 0);
}

Tensor imag(const Tensor& x) {
  const ops::CheckedOperands checked("imag", x);
  if (!is_complex(x.dtype())) return zeros(x.shape(), x.dtype(), x.device());
  return view_as_real(x).select(-1, 1);
}

Tensor conj(const Tensor& x) {
  const ops::CheckedOperands checked("conj", x);
  if (!is_complex(x.dtype())) return x;
  Tensor out = empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) {
    real(out).copy_(real(x));
    neg_out(imag(out), imag(x));
  }
  return out;
}

Tensor make_complex(const Tensor& re, const Tensor& im) {
  const ops::CheckedOperands checked("complex", {&re, &im});
  TESSEL_CHECK(!is_complex(re.dtype()) && !is_complex(im.dtype()), BadDType,
               "complex", "takes real parts, got {} and {}",
               dtype_name(re.dtype()), dtype_name(im.dtype()));
  const DType dtype = complex_type_for(
      float_result_type(promote_types(re.dtype(), im.dtype(), "complex")));
  const Shape shape = [&] {
    try {
      return broadcast_shapes(re.shape(), im.shape());
    } catch (const ShapeError&) {
      detail::fail(ErrorCode::BroadcastMismatch, "complex",
                   "shapes {} and {} cannot be broadcast together",
                   shape_string(re.shape()), shape_string(im.shape()));
    }
  }();
  Tensor out = empty(shape, dtype, re.device());
  if (out.numel() > 0) {
    real(out).copy_(re);
    imag(out).copy_(im);
  }
  return out;
}

}  // namespace tessel

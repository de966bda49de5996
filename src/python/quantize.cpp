// Affine integer quantisation (tessel::quantize_affine and friends): the
// format standard's INT8/INT4 schemes, PyTorch's quantize_per_tensor /
// per_channel and ONNX's blocked QuantizeLinear. The GGUF block types
// convert with Tensor.astype (tessel.q4_k, ...).
#include <nanobind/stl/pair.h>

#include "bindings.hpp"

namespace tessel::python {

namespace {

AffineQuantization affine_params(nb::handle scale, nb::handle zero_point,
                                 std::int64_t axis, std::int64_t group_size) {
  AffineQuantization p;
  p.scale = to_tensor(scale);
  if (!zero_point.is_none()) p.zero_point = to_tensor(zero_point);
  p.axis = axis;
  p.group_size = group_size;
  return p;
}

}  // namespace

void bind_quantize(nb::module_& m) {
  m.def(
      "quantize_affine",
      [](nb::handle x, nb::handle dtype, nb::handle scale,
         nb::handle zero_point, std::int64_t axis, std::int64_t group_size) {
        const Tensor t = to_tensor(x);
        const AffineQuantization p =
            affine_params(scale, zero_point, axis, group_size);
        const DType d = to_dtype(dtype);
        return without_gil_if(t.numel() >= kReleaseGilElements,
                              [&] { return quantize_affine(t, d, p); });
      },
      nb::arg("x"), nb::arg("dtype"), nb::arg("scale"),
      nb::arg("zero_point") = nb::none(), nb::kw_only(), nb::arg("axis") = -1,
      nb::arg("group_size") = 0,
      "clamp(round_half_even(x / scale) + zero_point) in an integer dtype "
      "(int8, uint8, int16, uint16, int4, uint4). One scale: per tensor; a "
      "1-D scale: per channel along `axis`; group_size > 0: per group of "
      "that many along `axis`.");
  m.def(
      "dequantize_affine",
      [](nb::handle q, nb::handle scale, nb::handle zero_point,
         std::int64_t axis, std::int64_t group_size, nb::handle dtype) {
        const Tensor t = to_tensor(q);
        const AffineQuantization p =
            affine_params(scale, zero_point, axis, group_size);
        const DType d = dtype.is_none() ? DType::F32 : to_dtype(dtype);
        return without_gil_if(t.numel() >= kReleaseGilElements,
                              [&] { return dequantize_affine(t, p, d); });
      },
      nb::arg("q"), nb::arg("scale"), nb::arg("zero_point") = nb::none(),
      nb::kw_only(), nb::arg("axis") = -1, nb::arg("group_size") = 0,
      nb::arg("dtype") = nb::none(),
      "(q - zero_point) * scale in `dtype` (float32 by default).");
  m.def(
      "choose_affine_quantization",
      [](nb::handle x, nb::handle dtype, bool symmetric, bool per_channel,
         std::int64_t axis, std::int64_t group_size) {
        AffineChoice choice;
        choice.symmetric = symmetric;
        choice.per_channel = per_channel;
        choice.axis = axis;
        choice.group_size = group_size;
        const AffineQuantization p =
            choose_affine_quantization(to_tensor(x), to_dtype(dtype), choice);
        return std::make_pair(p.scale, p.zero_point.defined()
                                           ? nb::cast(p.zero_point)
                                           : nb::none());
      },
      nb::arg("x"), nb::arg("dtype"), nb::kw_only(),
      nb::arg("symmetric") = true, nb::arg("per_channel") = false,
      nb::arg("axis") = -1, nb::arg("group_size") = 0,
      "(scale, zero_point or None) covering x's range for `dtype`: "
      "symmetric max|x| / qmax, or PyTorch's MinMaxObserver range; per "
      "tensor, per channel along `axis`, or per group.");
}

}  // namespace tessel::python

// Affine (linear) integer quantisation: the format standard's INT8/INT4
// schemes, ONNX QuantizeLinear / DequantizeLinear and PyTorch's
// quantize_per_tensor / quantize_per_channel:
//   q = clamp(round_half_to_even(x / scale) + zero_point, qmin, qmax)
//   x = (q - zero_point) * scale
// The GGUF block types carry their scales inside the blocks instead and
// convert with Tensor::to (docs/quantisation.md).
#pragma once

#include <cstdint>

#include "tessel/core/tensor.hpp"

namespace tessel {

// Which elements share a scale follows from the shapes:
//  - per tensor: `scale` has one element;
//  - per channel: `scale` is 1-D with x.shape[axis] elements;
//  - per group (group_size > 0): `scale` has x's rank, x's extents except
//    ceil(x.shape[axis] / group_size) along `axis` (ONNX's blocked form;
//    the usual LLM layout is groups along the last axis).
// `zero_point` is undefined (0: symmetric) or an integer tensor of scale's
// shape. Any other shape is E2102 saying which shape was expected.
struct AffineQuantization {
  Tensor scale;
  Tensor zero_point;
  std::int64_t axis = -1;
  std::int64_t group_size = 0;
};

// The integer dtypes an affine quantisation may target: i8 u8 i16 u16 and
// the packed i4 u4. Scales must be positive and finite (E2102 otherwise,
// checked on the host); x / scale is computed in f32 (f64 for f64 x), then
// rounded half to even as ONNX and PyTorch do. NaN quantises to the zero
// point; +-Inf saturate.
Tensor quantize_affine(const Tensor& x, DType dtype,
                       const AffineQuantization& params);

// (q - zero_point) * scale, in `dtype` (a float type; f32 by default).
Tensor dequantize_affine(const Tensor& q, const AffineQuantization& params,
                         DType dtype = DType::F32);

// Parameters that cover x's range for `dtype` at one granularity (the
// one AffineQuantization's fields describe: group_size > 0 per group,
// per_channel along `axis`, else per tensor). Symmetric: zero point 0 and
// scale = max|x| / qmax. Asymmetric: the range [min(x, 0), max(x, 0)]
// spread over [qmin, qmax], zero point round(qmin - min / scale) (PyTorch's
// MinMaxObserver). An all-zero group gets scale 1.
struct AffineChoice {
  bool symmetric = true;
  bool per_channel = false;
  std::int64_t axis = -1;
  std::int64_t group_size = 0;
};
AffineQuantization choose_affine_quantization(const Tensor& x, DType dtype,
                                              const AffineChoice& choice);

}  // namespace tessel

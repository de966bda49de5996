// Affine (linear) integer quantisation: the format standard's INT8/INT4
// schemes, ONNX QuantizeLinear / DequantizeLinear and PyTorch's
// quantize_per_tensor / quantize_per_channel:
//   q = clamp(round_half_to_even(x / scale) + zero_point, qmin, qmax)
//   x = (q - zero_point) * scale
// The GGUF block types carry their scales inside the blocks instead and
// convert with Tensor::to (docs/quantisation.md).
#pragma once

#include <cstdint>
#include <string>

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

// Which elements share a scale: group_size > 0 means per group; a scale of
// one element and rank <= 1 per tensor; anything else per channel.
enum class AffineGranularity { PerTensor, PerChannel, PerGroup };
AffineGranularity affine_granularity(const AffineQuantization& params);

// The shape `scale` (and `zero_point`) must have for a tensor of shape `x`
// at `granularity` ([] per tensor, where [1] is accepted too). E2102 for an
// axis outside x's rank or a non-positive group size.
Shape affine_parameter_shape(const Shape& x, AffineGranularity granularity,
                             std::int64_t axis, std::int64_t group_size);

// Checks `params` against a tensor of shape `x` as quantize_affine and
// dequantize_affine do (E2102 naming the expected shape; E2201 for a scale
// that is not a float tensor or a zero point that is not an integer one)
// and returns the axis, normalised (0 per tensor). `op` names the caller
// in the message.
std::int64_t check_affine_quantization(
    const Shape& x, const AffineQuantization& params,
    const char* op = "check_affine_quantization");

// True for the dtypes quantize_affine may target: i8 u8 i16 u16 i4 u4.
bool is_affine_quantized_dtype(DType dtype);

// The scheme's name as files write it (PyTorch's qscheme names, with
// per_group_* added): per_tensor_affine, per_tensor_symmetric,
// per_channel_affine, per_channel_symmetric, per_group_affine,
// per_group_symmetric; symmetric means no zero point.
std::string affine_scheme_name(const AffineQuantization& params);

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

// Convolution and pooling over 1, 2 or 3 spatial axes (DESIGN §7 names).
// Channels-first data is (N, C, spatial...) with weights (O, C/groups,
// kernel...) (NCHW/OIHW); channels-last data is (N, spatial..., C) with
// weights (kernel..., C/groups, O) (NHWC/HWCF). Transposed convolutions take
// weights (C, O/groups, kernel...) channels-first (PyTorch, ONNX) and
// (kernel..., O/groups, C) channels-last. f32 and bf16 run on oneDNN,
// f16 through f32, f64 on a direct reference kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel {

enum class DataLayout { ChannelsFirst, ChannelsLast };  // NCHW vs NHWC

enum class AutoPad {
  Explicit,   // use `padding`
  SameUpper,  // output = ceil(input / stride); odd padding goes at the end
  SameLower,  // ... at the beginning
  Valid,      // no padding
};

struct ConvOptions {
  // Per spatial axis, or one value for every axis (PyTorch's `stride=2`).
  std::vector<std::int64_t> stride;    // empty = all 1
  std::vector<std::int64_t> dilation;  // empty = all 1
  // Explicit padding: empty (none), one value for every side, one value per
  // spatial axis (both sides), or begin values then end values (ONNX's order).
  std::vector<std::int64_t> padding;
  AutoPad auto_pad = AutoPad::Explicit;
  std::int64_t groups = 1;
  DataLayout layout = DataLayout::ChannelsFirst;
  // Transposed convolutions only: extra output on the end side, or the
  // exact spatial output shape (ONNX output_shape; overrides the rest).
  std::vector<std::int64_t> output_padding;
  std::vector<std::int64_t> output_shape;
};

// The padding a convolution of these shapes uses, SAME resolved: begin
// values then end values, one per spatial axis (for building its adjoint).
std::vector<std::int64_t> conv_padding(const Shape& x_shape,
                                       const Shape& weight_shape,
                                       const ConvOptions& options);

struct PoolOptions {
  std::vector<std::int64_t> kernel;  // required, per spatial axis
  std::vector<std::int64_t> stride;  // empty = the kernel size (PyTorch)
  std::vector<std::int64_t> dilation;
  std::vector<std::int64_t> padding;  // as ConvOptions
  AutoPad auto_pad = AutoPad::Explicit;
  bool ceil_mode = false;          // round the output size up
  bool count_include_pad = false;  // average pooling divisor
  DataLayout layout = DataLayout::ChannelsFirst;
};

struct MaxPoolResult {
  Tensor values;
  Tensor indices;  // i64: flat index of each maximum within its (n, c) plane
};

// conv conv1d conv2d conv_transpose conv_transpose2d max_pool max_pool2d
// avg_pool avg_pool2d global_avg_pool, declared once for Tensor and
// Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/conv.inc"
#undef TESSEL_VALUE

MaxPoolResult max_pool_with_indices(const Tensor& x,
                                    const PoolOptions& options);
// The gradient of avg_pool with respect to its input of `input_shape`.
Tensor avg_pool_backward(const Tensor& grad_output, const Shape& input_shape,
                         const PoolOptions& options);

}  // namespace tessel

// ConvOptions as the shared convolution rule (core/shape_rules.hpp) takes
// them, so the eager convolutions and the symbolic checker read the same
// options the same way.
#pragma once

#include "core/shape_rules.hpp"
#include "tessel/ops/conv.hpp"

namespace tessel::ops {

inline rules::WindowPadding window_padding(AutoPad auto_pad) {
  switch (auto_pad) {
    case AutoPad::SameUpper: return rules::WindowPadding::SameUpper;
    case AutoPad::SameLower: return rules::WindowPadding::SameLower;
    case AutoPad::Valid: return rules::WindowPadding::Valid;
    case AutoPad::Explicit: break;
  }
  return rules::WindowPadding::Explicit;
}

inline rules::ConvolutionWindow convolution_window(const ConvOptions& o) {
  return {o.stride, o.dilation, o.padding, window_padding(o.auto_pad)};
}

}  // namespace tessel::ops

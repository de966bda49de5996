// What every method asks of its tensors before touching them: f32,
// contiguous, on the CPU and of one shape (merge/plan.hpp's runner widens
// and checks names first, so a failure here is a caller's bug, not a
// user's file).
#pragma once

#include <span>
#include <string>

#include "tessel/core/tensor.hpp"

namespace tessel::merge::detail {

void check_merge_input(const Tensor& t, const Tensor& like, const char* method);
// E4001 "[merge] <method>: <what>".
[[noreturn]] void bad_parameter(const char* method, const std::string& what);
// A fresh f32 tensor of `like`'s shape.
Tensor new_like(const Tensor& like);

}  // namespace tessel::merge::detail

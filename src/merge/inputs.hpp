// What every method asks of its tensors before touching them: f32, f16 or
// bf16, contiguous, on the CPU and of one shape (merge/plan.hpp's runner widens
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
// A method's result: the buffer lent by the innermost OutputLoan of this
// thread when it is large enough (once), else a fresh f32 tensor of
// `like`'s shape. A streamed
// merge lends the same buffer for every tensor, so that the pages of each
// result are not faulted in and zeroed anew.
Tensor new_output(const Tensor& like);
class OutputLoan {
 public:
  explicit OutputLoan(Tensor buffer);  // 1-D f32, contiguous
  ~OutputLoan();
  OutputLoan(const OutputLoan&) = delete;
  OutputLoan& operator=(const OutputLoan&) = delete;

 private:
  Tensor previous_;
};

}  // namespace tessel::merge::detail

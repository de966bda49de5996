// Each method as a PreparedMerge. The streamed ones (linear, slerp and the
// task-arithmetic family) compute any block from their inputs, widened a
// block at a time; the others (nuslerp, model stock, passthrough) compute
// their whole f32 result up front and hand out blocks of it.
#pragma once

#include <memory>
#include <span>

#include "tessel/merge/methods.hpp"
#include "tessel/merge/plan.hpp"

namespace tessel::merge::detail {

std::unique_ptr<PreparedMerge> prepare_linear(std::span<const Tensor> inputs,
                                              std::span<const double> weights,
                                              bool normalize);
std::unique_ptr<PreparedMerge> prepare_slerp(const Tensor& base,
                                             const Tensor& other, double t);
std::unique_ptr<PreparedMerge> prepare_task_arithmetic(
    const Tensor& base, std::span<const TaskInput> inputs,
    const TaskArithmeticOptions& options);
// An f32 result computed whole (contiguous).
std::unique_ptr<PreparedMerge> prepared_result(Tensor result);

// The f32 result of a prepared merge of `like`'s shape, in the buffer lent
// by the innermost OutputLoan of this thread when it is large enough.
Tensor produce_output(const PreparedMerge& merge, const Tensor& like);

}  // namespace tessel::merge::detail

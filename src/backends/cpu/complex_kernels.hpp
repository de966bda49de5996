// The complex (c64/c128) element-wise kernels, reached from unary() and
// binary() when the operand is complex. The op layer admits only the ops
// of accepts_complex; out is complex, bool (predicates, comparisons) or,
// for abs, the component type.
#pragma once

#include "backends/kernel_view.hpp"
#include "tessel/ops/op_list.hpp"

namespace tessel::cpu {

void complex_unary(UnaryOp op, const KernelOutput& out, const KernelInput& in);

void complex_binary(BinaryOp op, const KernelOutput& out, const KernelInput& a,
                    const KernelInput& b);

}  // namespace tessel::cpu

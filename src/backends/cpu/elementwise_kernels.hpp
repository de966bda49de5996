// Element-wise CPU kernels. The op layer has already broadcast the inputs
// to the output's shape, cast them to the kernel's input dtype and
// allocated the output; nothing is validated here.
#pragma once

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"
#include "tessel/ops/op_list.hpp"

namespace tessel::cpu {

// out = op(in). out's dtype is in's, or bool for Bool-result ops.
void unary(UnaryOp op, const UnaryParams& params, const KernelOutput& out,
           const KernelInput& in);

// out = op(a, b); a and b share a dtype; out has it, or bool.
void binary(BinaryOp op, const KernelOutput& out, const KernelInput& a,
            const KernelInput& b);

// out = cond ? a : b, with cond bool and a, b, out of one dtype.
void where(const KernelOutput& out, const KernelInput& cond,
           const KernelInput& a, const KernelInput& b);

// out = a * b + c in one rounding per element (all of one float dtype;
// integers multiply and add with wrap-around).
void fma(const KernelOutput& out, const KernelInput& a, const KernelInput& b,
         const KernelInput& c);

}  // namespace tessel::cpu

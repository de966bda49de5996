// Reduction, scan and softmax kernels over the canonical (A, R, B) view:
// a contiguous input where axis R is reduced, A (outer) and B (inner) are
// kept. The op layer builds the view and allocates the output.
#pragma once

#include <cstdint>

#include "backends/kernel_problems.hpp"
#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// out (A*B elements, contiguous, of the op's result dtype) from in.
void reduce(ReduceOp op, double correction, const KernelInput& in,
            const KernelOutput& out, const ReduceShape& shape);

// Cumulative sum or product along R; out has in's shape.
void cumulative(bool product, bool exclusive, bool reverse,
                const KernelInput& in, const KernelOutput& out,
                const ReduceShape& shape);

void softmax(SoftmaxKind kind, const KernelInput& in, const KernelOutput& out,
             const ReduceShape& shape);

}  // namespace tessel::cpu

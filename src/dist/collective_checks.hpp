// The operand rules every backend's collectives share, so that a tensor a
// group of one accepts, an MPI group accepts too (and refuses the same way).
#pragma once

#include "tessel/core/tensor.hpp"
#include "tessel/dist/process_group.hpp"

namespace tessel::dist::detail {

// Defined, on the CPU (E2501), contiguous (E2301), whole elements (E2201
// for packed and block-quantised dtypes).
void check_operand(const char* op, const Tensor& t);
// all_reduce's dtype rule (E2201 otherwise): floats with Sum, Mean and
// Max; complex with Sum and Mean; integers with Sum and Max; not bool.
void check_reducible(const Tensor& t, ReduceOp op);
// E2302 unless 0 <= root < world_size.
void check_root(int root, int world_size);

}  // namespace tessel::dist::detail

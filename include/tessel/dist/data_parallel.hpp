// The two collectives data-parallel training is made of, over a process
// group (dist/process_group.hpp): every rank starts from rank 0's weights,
// and after each backward pass every rank holds the mean of all ranks'
// gradients, so identical optimiser steps keep the replicas identical.
#pragma once

#include <cstddef>
#include <vector>

#include "tessel/autograd/variable.hpp"
#include "tessel/dist/process_group.hpp"

namespace tessel::dist {

// Every parameter's value becomes rank 0's (in place, one broadcast per
// bucket of `bucket_bytes`).
void broadcast_parameters(ProcessGroup& group,
                          const std::vector<Variable>& parameters,
                          std::size_t bucket_bytes = std::size_t{25} << 20);

// Every parameter's grad becomes the mean over the ranks. Gradients are
// packed into flat buffers of at most `bucket_bytes` (PyTorch DDP's 25 MiB
// default) of one dtype and reduced one buffer per collective, so a model
// of many small tensors pays a few latencies, not one per parameter. A
// parameter without a gradient counts as zeros (and receives the mean).
// Returns the seconds spent inside the collectives.
double all_reduce_gradients(ProcessGroup& group,
                            const std::vector<Variable>& parameters,
                            std::size_t bucket_bytes = std::size_t{25} << 20);

}  // namespace tessel::dist

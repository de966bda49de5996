// The MPI engine behind ProcessGroup (src/dist/mpi_group.cpp).
#pragma once

#include <memory>

#include "tessel/dist/process_group.hpp"

namespace tessel::dist::detail {

// MPI_COMM_WORLD as a group; initialises MPI (finalised at exit).
std::unique_ptr<ProcessGroup> make_mpi_world();

}  // namespace tessel::dist::detail

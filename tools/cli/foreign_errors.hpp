// Exceptions of the libraries below tessel, as tessel errors with a code.
#pragma once

#include <exception>

#include "tessel/core/error.hpp"

namespace tessel::cli {

// What a library below tessel threw, as the DESIGN §2 error it means:
// every failure a user sees carries a code. JSON exceptions come from
// text that is not what a format promised (E3001); the filesystem,
// streams, the system and the allocator fail at I/O (E3002). Anything
// else is a tessel bug, still reported with a code and the request to
// report it.
tessel::Error as_tessel_error(const std::exception& e);

}  // namespace tessel::cli

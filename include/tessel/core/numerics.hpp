// The numerics check of DESIGN §2: when on, ops where stability is expected
// (softmax, log_softmax, norms, logsumexp, attention, losses, merges,
// optimiser steps) scan their outputs and throw E2401 naming the op and the
// first NaN or Inf. Off by default; TESSEL_CHECK_NUMERICS=1 turns it on.
#pragma once

#include "tessel/core/tensor.hpp"

namespace tessel {

void set_check_numerics(bool enabled);
bool check_numerics();

// Throws E2401 if `t` holds a NaN or Inf (only when the check is on).
void check_finite(const Tensor& t, const char* op);

// The row-major position of the first NaN or Inf of the floating-point
// tensor `t`, or -1 (whether or not the check is on; a vectorised scan of
// the bits first, so a finite tensor costs one read).
std::int64_t first_non_finite(const Tensor& t);

// Scoped switch, e.g. for one block of code.
class CheckNumericsGuard {
 public:
  explicit CheckNumericsGuard(bool enabled) : previous_(check_numerics()) {
    set_check_numerics(enabled);
  }
  ~CheckNumericsGuard() { set_check_numerics(previous_); }
  CheckNumericsGuard(const CheckNumericsGuard&) = delete;
  CheckNumericsGuard& operator=(const CheckNumericsGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tessel

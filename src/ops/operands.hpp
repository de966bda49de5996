// The one operand check of the op layer (DESIGN §2), instead of a copy per
// op file: every operand defined (E2102), all on one device (E2501 naming
// the op and both devices), and a kernel for that device in this build
// (E2501). It returns that device, where the op's outputs belong; the op
// then computes through backend_of(output) (Note [backend seam]).
#pragma once

#include <initializer_list>
#include <optional>
#include <span>

#include "backends/backend.hpp"
#include "core/check.hpp"
#include "core/operand_scope.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::ops {

namespace detail {

template <class Range, class Get>
Device check_all(const char* op, const Range& operands, Get get) {
  std::optional<Device> first;
  for (const auto& entry : operands) {
    const Tensor& t = get(entry);
    TESSEL_CHECK(t.defined(), BadShape, op, "an operand is undefined");
    if (!first) first = t.device();
    TESSEL_CHECK(t.device() == *first, DeviceMismatch, op,
                 "operands on {} and {}", first->str(), t.device().str());
  }
  // No operands (an empty list to concatenate): the op's own rule refuses.
  if (!first) return current_device();
  backend_for(*first, op);  // E2501 when this build has no backend for it
  return *first;
}

}  // namespace detail

inline Device check_operands(const char* op,
                             std::initializer_list<const Tensor*> operands) {
  return detail::check_all(op, operands,
                           [](const Tensor* t) -> const Tensor& { return *t; });
}

// A list of operands (concat, stack, einsum).
inline Device check_operands(const char* op, std::span<const Tensor> operands) {
  return detail::check_all(op, operands,
                           [](const Tensor& t) -> const Tensor& { return t; });
}

// The backend that computes on `t`'s device (t already checked).
inline const Backend& backend_of(const Tensor& t) {
  return backend_for(t.device(), "op");
}

// An operand named in the message when it is undefined ("weight is
// undefined"); ops with named operands check each so, then all together
// with check_operands.
inline void check_defined(const char* op, const Tensor& t, const char* what) {
  TESSEL_CHECK(t.defined(), BadShape, op, "{} is undefined", what);
}

// A single operand.
inline Device check_operand(const char* op, const Tensor& t,
                            const char* what = "an operand") {
  check_defined(op, t, what);
  return check_operands(op, {&t});
}

// check_operands as an object that lives as long as the op runs: while it
// does, the op's contract errors end with its operands' dtypes, shapes and
// devices (core/operand_scope.hpp). Ops open one on entry:
//   const ops::CheckedOperands checked("matmul", {&a, &b});
class CheckedOperands : ::tessel::detail::OperandScope {
 public:
  CheckedOperands(const char* op, std::initializer_list<const Tensor*> operands)
      : OperandScope(operands), device_(check_operands(op, operands)) {}
  CheckedOperands(const char* op, std::span<const Tensor> operands)
      : OperandScope(operands), device_(check_operands(op, operands)) {}
  CheckedOperands(const char* op, const Tensor& t,
                  const char* what = "an operand")
      : OperandScope({&t}), device_(check_operand(op, t, what)) {}
  // Where the op's outputs belong.
  Device device() const { return device_; }

 private:
  Device device_;
};

}  // namespace tessel::ops

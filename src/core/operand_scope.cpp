#include "core/operand_scope.hpp"

#include "core/check.hpp"

#include <fmt/format.h>

namespace tessel::detail {

namespace {

thread_local const OperandScope* innermost = nullptr;

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined";
  return fmt::format("{} {} on {}", dtype_name(t.dtype()),
                     shape_string(t.shape()), t.device().str());
}

}  // namespace

OperandScope::OperandScope(std::initializer_list<const Tensor*> operands)
    : pointers_(operands.begin(), operands.end()), outer_(innermost) {
  innermost = this;
}

OperandScope::OperandScope(std::span<const Tensor> operands)
    : list_(operands), outer_(innermost) {
  innermost = this;
}

OperandScope::~OperandScope() { innermost = outer_; }

std::string operand_context() {
  if (innermost == nullptr) return "";
  std::string out = "; operands: ";
  bool first = true;
  auto add = [&](const Tensor& t) {
    if (!first) out += ", ";
    first = false;
    out += describe(t);
  };
  for (const Tensor* t : innermost->pointers_) add(*t);
  for (const Tensor& t : innermost->list_) add(t);
  if (first) return "";  // an empty list (concat of nothing)
  return out;
}

void throw_op_error(ErrorCode code, std::string message) {
  if (static_cast<int>(code) < 3000) message += operand_context();
  throw_error(code, message);
}

}  // namespace tessel::detail

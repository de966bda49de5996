// The operands of the op running on this thread, for its error messages
// (DESIGN §2: a message names the op and its operands' shapes, dtypes and
// devices). An op opens a scope over its operands on entry; every contract
// error (E21xx-E25xx) raised while it is open ends with
// "; operands: f32 (2, 3) on cpu, i64 (4) on cpu". Scopes nest: while an
// op runs another, errors name the inner op's operands, which are the
// ones its message is about. The tensors must outlive the scope (they are
// the op's arguments).
#pragma once

#include <initializer_list>
#include <span>
#include <string>

#include "tessel/core/small_vector.hpp"
#include "tessel/core/tensor.hpp"

namespace tessel::detail {

class OperandScope {
 public:
  explicit OperandScope(std::initializer_list<const Tensor*> operands);
  explicit OperandScope(std::span<const Tensor> operands);
  ~OperandScope();
  OperandScope(const OperandScope&) = delete;
  OperandScope& operator=(const OperandScope&) = delete;

 private:
  friend std::string operand_context();
  SmallVector<const Tensor*, 4> pointers_;
  std::span<const Tensor> list_;
  const OperandScope* outer_;
};

// "; operands: ..." for the innermost open scope, "" when none is open.
std::string operand_context();

}  // namespace tessel::detail

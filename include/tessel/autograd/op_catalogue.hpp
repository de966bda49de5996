// The ops tessel offers, as data: one row per op that takes tensor
// operands, with its operand count, the dtypes it admits and whether it is
// differentiable — what `tessel ops` prints and programs read (--json).
//
// Nothing here is typed twice. Element-wise rows come from the op tables
// (ops/op_list.hpp) and their gradient rows; other rows name the op once,
// with a call on a small operand. Differentiability is whether that call
// compiles with Variable operands (an overload in
// ops/differentiable/*.inc) and, for element-wise rows, whether the row
// records a gradient. Admissible dtypes are measured: the call runs on a
// 2x2 operand of every value dtype, and E2201 means not admitted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessel/core/dtype.hpp"

namespace tessel {

struct OpDescription {
  std::string name;
  // The shape-engine seed's name when the op is one of its Core v1
  // catalogue (expand_dims is unsqueeze, index is select).
  std::optional<std::string> core_v1;
  std::string kind;  // "element-wise", "reduction", "view", ...
  int operands = 1;  // tensors it needs
  int optional_operands = 0;
  bool variadic = false;  // a list of tensors (concat, stack, einsum)
  bool differentiable = false;
  // The value dtypes it admits (block-quantised and packed 4-bit operands
  // are not probed: element-wise ops and reductions dequantise them to f32,
  // DESIGN §1 rule 4).
  std::vector<DType> dtypes;
};

// The dtypes the catalogue probes, in dtype-table order: every value
// dtype (not block-quantised, not packed 4-bit).
std::vector<DType> catalogue_dtypes();

// Every op, element-wise ops first in table order, then by kind. Computed
// on first use (a few thousand calls on 2x2 operands).
const std::vector<OpDescription>& op_catalogue();

// The 17 ops of the shape-engine seed's Core v1 catalogue, in its order.
std::vector<OpDescription> core_v1_ops();

}  // namespace tessel

// Which element-wise rows record a gradient: read from the gradient rows in
// elementwise.cpp (a TESSEL_UNARY_CONSTANT / TESSEL_BINARY_CONSTANT row has
// none; parameterised unary rows all have one), so the op catalogue cannot
// disagree with autograd.
#pragma once

#include "tessel/ops/op_list.hpp"

namespace tessel::autograd {

bool has_gradient(UnaryOp op);
bool has_gradient(BinaryOp op);

}  // namespace tessel::autograd

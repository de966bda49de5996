// NumPy-style printing: tensor([[1. , 2.5], ...], shape=(2, 2), dtype=f32).
#pragma once

#include <cstdint>
#include <string>

#include "tessel/core/tensor.hpp"

namespace tessel {

struct PrintOptions {
  std::int64_t threshold = 1000;  // summarise tensors with more elements
  std::int64_t edge_items = 3;    // items kept at each end of an axis
  std::int64_t line_width = 75;
  int precision = 8;  // at most this many fraction digits
  // What opens the text ("tensor(" in C++, "tessel.Tensor(" in Python).
  std::string prefix = "tensor(";
  // Shown after "dtype="; empty: tessel's dtype name ("f32").
  std::string dtype_label;
  // false: the shape only where no values show it (an empty tensor), as
  // NumPy's repr does.
  bool show_shape = true;
};

// The repr NumPy's array_repr would give, with "tensor(" for "array(" and
// shape, dtype (tessel names), device and name always shown at the end.
std::string to_string(const Tensor& t, const PrintOptions& options = {});

}  // namespace tessel

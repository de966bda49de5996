// Reductions, scans and softmax (DESIGN §7 names). An axis list may hold
// negative axes; an empty list reduces over every axis (NumPy's axis=None);
// a repeated axis is E2102. Sums, means, norms and softmax accumulate in f32
// or wider (f64 for f64 and for long runs, see docs/ops.md) and round once
// to the result dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "tessel/core/tensor.hpp"

namespace tessel {

using Axes = SmallVector<std::int64_t, 6>;

// sum prod mean max min var std norm sum_squares logsumexp cumsum cumprod
// softmax log_softmax: declared once for Tensor and Variable operands.
#define TESSEL_VALUE Tensor
#include "tessel/ops/differentiable/reduce.inc"
#undef TESSEL_VALUE

// Bool results; any of nothing is false, all of nothing is true.
Tensor any(const Tensor& x, Axes axes = {}, bool keepdims = false);
Tensor all(const Tensor& x, Axes axes = {}, bool keepdims = false);
// Index (i64) of the first maximum / minimum along `axis`, or into the
// flattened tensor when no axis is given. NaN counts as the extreme.
Tensor argmax(const Tensor& x, std::optional<std::int64_t> axis = std::nullopt,
              bool keepdims = false);
Tensor argmin(const Tensor& x, std::optional<std::int64_t> axis = std::nullopt,
              bool keepdims = false);
// One at the first maximum along `axis`, zero elsewhere.
Tensor hardmax(const Tensor& x, std::int64_t axis = -1);

// NumPy's allclose: |a - b| <= atol + rtol * |b| everywhere, broadcasting,
// compared in f64; NaNs are equal only with `equal_nan`.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
              double atol = 1e-8, bool equal_nan = false);
// PyTorch's equal: the same shape and every element equal (NaN != NaN).
bool equal(const Tensor& a, const Tensor& b);

}  // namespace tessel

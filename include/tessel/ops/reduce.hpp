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

// Integer and bool sums and products give i64 (u64 for unsigned), floats
// keep their dtype. Empty extents give 0 and 1.
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdims = false);
Tensor prod(const Tensor& x, Axes axes = {}, bool keepdims = false);
// Float dtype: integers give f32. An empty extent gives NaN.
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdims = false);
// NaN-propagating; the input's dtype. An empty extent is E2102.
Tensor max(const Tensor& x, Axes axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, Axes axes = {}, bool keepdims = false);
// Bool results; any of nothing is false, all of nothing is true.
Tensor any(const Tensor& x, Axes axes = {}, bool keepdims = false);
Tensor all(const Tensor& x, Axes axes = {}, bool keepdims = false);
// Variance / standard deviation dividing by N - correction (PyTorch's
// default correction is 1, NumPy's ddof is 0). N - correction <= 0 is NaN.
Tensor var(const Tensor& x, Axes axes = {}, double correction = 1.0,
           bool keepdims = false);
Tensor std(const Tensor& x, Axes axes = {}, double correction = 1.0,
           bool keepdims = false);
// Vector norms: ord 1 (sum |x|), 2 (sqrt sum x^2), or infinity (max |x|).
Tensor norm(const Tensor& x, double ord = 2.0, Axes axes = {},
            bool keepdims = false);
// Sum of x^2; integers stay exact (i64).
Tensor sum_squares(const Tensor& x, Axes axes = {}, bool keepdims = false);
// log(sum(exp(x))) computed as max + log(sum(exp(x - max))).
Tensor logsumexp(const Tensor& x, Axes axes = {}, bool keepdims = false);
// Index (i64) of the first maximum / minimum along `axis`, or into the
// flattened tensor when no axis is given. NaN counts as the extreme.
Tensor argmax(const Tensor& x, std::optional<std::int64_t> axis = std::nullopt,
              bool keepdims = false);
Tensor argmin(const Tensor& x, std::optional<std::int64_t> axis = std::nullopt,
              bool keepdims = false);

// Running sum / product along `axis` (ONNX CumSum's exclusive and reverse).
Tensor cumsum(const Tensor& x, std::int64_t axis, bool exclusive = false,
              bool reverse = false);
Tensor cumprod(const Tensor& x, std::int64_t axis, bool exclusive = false,
               bool reverse = false);

// Numerically stable (max subtracted); floats keep their dtype, integers
// give f32.
Tensor softmax(const Tensor& x, std::int64_t axis = -1);
Tensor log_softmax(const Tensor& x, std::int64_t axis = -1);
// One at the first maximum along `axis`, zero elsewhere.
Tensor hardmax(const Tensor& x, std::int64_t axis = -1);

// NumPy's allclose: |a - b| <= atol + rtol * |b| everywhere, broadcasting,
// compared in f64; NaNs are equal only with `equal_nan`.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
              double atol = 1e-8, bool equal_nan = false);
// PyTorch's equal: the same shape and every element equal (NaN != NaN).
bool equal(const Tensor& a, const Tensor& b);

}  // namespace tessel

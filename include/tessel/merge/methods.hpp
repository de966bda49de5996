// The model-merge methods, one output tensor at a time: mergekit 0.1.5's
// methods with its parameters, defaults and edge cases, computed in f32
// with SLERP's (and model stock's) dot products and norms in f64 as the
// TensorEngine seed asks. Inputs are contiguous f32, f16 or bf16 tensors
// of one shape, read in blocks widened to f32 (the caller dequantises
// block-quantised ones; merge/plan.hpp says which inputs and parameters);
// the result is a new contiguous f32 tensor. Every reduction
// sums fixed-size chunks in a fixed order, and every random draw is a
// counter-based function of (seed, stream, element), so results are the
// same bytes on any thread count. docs/merge.md gives each formula.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tessel/core/tensor.hpp"

namespace tessel::merge {

enum class Method {
  Linear,
  TaskArithmetic,
  Slerp,
  Nuslerp,
  Ties,
  DareLinear,
  DareTies,
  Breadcrumbs,
  BreadcrumbsTies,
  Della,
  DellaLinear,
  ModelStock,
  Passthrough,
};

// mergekit's names ("dare_ties"); nullopt for any other.
std::optional<Method> parse_method(std::string_view name);
std::string_view method_name(Method method);
// "linear, task_arithmetic, ...", for messages.
std::string supported_methods();

// Weighted sum of the inputs, divided by the sum of the weights when
// `normalize`. E4001 when normalising weights that sum to zero.
Tensor linear(std::span<const Tensor> inputs, std::span<const double> weights,
              bool normalize);

// Spherical interpolation from `base` (t = 0) to `other` (t = 1) over each
// whole tensor: angle from the f64 dot of the normalised tensors (norms at
// most 1e-8 count as 1); linear interpolation when |cos| > 0.9995.
// E4001 for t outside [0, 1].
Tensor slerp(const Tensor& base, const Tensor& other, double t);

// mergekit's nuslerp between `a` and `b` (t = weight_b / (weight_a +
// weight_b), 0.5 when the sum is below 1e-6), of their differences from
// `base` when one is given. Over the flattened tensor (`flatten`), else
// over each row (`row_wise`: each column of a matrix) or each last-axis
// vector. Unlike slerp the unnormalised vectors are combined, and only
// exactly colinear ones fall back to linear interpolation.
struct NuslerpOptions {
  double weight_a = 1.0;
  double weight_b = 1.0;
  bool row_wise = false;
  bool flatten = true;
};
Tensor nuslerp(const Tensor* base, const Tensor& a, const Tensor& b,
               const NuslerpOptions& options);

// Which sign each element votes for in TIES: of the summed deltas, or of
// the count of positive against negative deltas.
enum class Consensus { None, Sum, Count };
// How each model's delta is thinned before the merge.
enum class Sparsification {
  None,
  Magnitude,          // keep the `density` fraction of largest |delta|
  Random,             // keep each element with probability density (DARE)
  MagnitudeOutliers,  // drop the largest gamma fraction, then the smallest
  DellaMagprune,      // keep with probability rising with |delta|'s rank
};

// Where random masks come from: element i of stream s draws from Philox
// block (i / 4, s) under key `seed`.
struct RandomStream {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
};

// One non-base model of a task-arithmetic merge.
struct TaskInput {
  Tensor tensor;
  double weight = 1.0;
  double density = 1.0;   // (0, 1]
  double gamma = 0.01;    // magnitude_outliers
  double epsilon = 0.15;  // della
  RandomStream random;    // Random and DellaMagprune
};

struct TaskArithmeticOptions {
  Consensus consensus = Consensus::None;
  Sparsification sparsification = Sparsification::None;
  bool normalize = false;
  // Rescale each thinned delta to the L1 norm it had (mergekit's
  // `rescale`).
  bool rescale = false;
  double lambda = 1.0;
};

// base + lambda * (sum of weighted, thinned, sign-agreeing deltas),
// divided by the weights that contributed when `normalize` (mergekit's
// generalized task arithmetic: task_arithmetic, ties, dare_*,
// breadcrumbs*, della*). E4001 for a density outside (0, 1] and della's
// density -/+ epsilon leaving (0, 1).
Tensor task_arithmetic(const Tensor& base, std::span<const TaskInput> inputs,
                       const TaskArithmeticOptions& options);

// The defaults mergekit gives each task-arithmetic method; nullopt for the
// others.
std::optional<TaskArithmeticOptions> task_arithmetic_defaults(Method method);

// Model Stock: interpolate from `base` towards the mean of `others` by
// t = N cos / (1 + (N - 1) cos), cos the mean pairwise cosine of their
// deltas (over the whole tensor, or each row when `filter_wise`); the base
// where the denominator is within 1e-6 of zero. E4001 with fewer than two
// others.
Tensor model_stock(const Tensor& base, std::span<const Tensor> others,
                   bool filter_wise);

// The input, times `scale` when given.
Tensor passthrough(const Tensor& input, std::optional<double> scale);

// The keep-mask a sparsification draws for one delta (1 kept, 0 dropped),
// for tests and for the statistics docs/merge.md reports.
std::vector<std::uint8_t> sparsification_mask(const Tensor& delta,
                                              Sparsification method,
                                              const TaskInput& input);

}  // namespace tessel::merge

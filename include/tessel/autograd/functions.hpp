// The differentiable ops: the Tensor ops of tessel/ops with Variable
// operands, same names and meanings. Each records its gradient rule when an
// operand requires a gradient (src/autograd/*.cpp). Index, mask, position
// and statistics operands stay Tensors: they carry no gradient.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/autograd/variable.hpp"
#include "tessel/ops/attention.hpp"
#include "tessel/ops/conv.hpp"
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/embedding.hpp"
#include "tessel/ops/indexing.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

// ---- element-wise ----------------------------------------------------------
// One overload per Plain row of TESSEL_FOR_EACH_UNARY_OP (op_list.hpp),
// generated from the table: neg abs sign sqrt rsqrt reciprocal exp expm1
// log log1p log2 sin cos tanh sigmoid relu selu silu erf floor ceil round
// trunc isnan isinf isfinite logical_not bitwise_not. Each row's gradient
// rule is its TESSEL_UNARY_GRADIENT in src/autograd/elementwise.cpp (a row
// without one does not compile). Piecewise-constant rows (sign, floor,
// ceil, round, trunc) and rows with bool results or integer inputs give
// constants: no gradient flows through them, as in PyTorch.
#define TESSEL_DECLARE_VARIABLE_UNARY(e, name, result, inputs, kind, kernel) \
  TESSEL_DECLARE_VARIABLE_UNARY_##kind(name)
#define TESSEL_DECLARE_VARIABLE_UNARY_Plain(name) \
  Variable name(const Variable& x);
#define TESSEL_DECLARE_VARIABLE_UNARY_Param(name)
TESSEL_FOR_EACH_UNARY_OP(TESSEL_DECLARE_VARIABLE_UNARY)
#undef TESSEL_DECLARE_VARIABLE_UNARY_Param
#undef TESSEL_DECLARE_VARIABLE_UNARY_Plain
#undef TESSEL_DECLARE_VARIABLE_UNARY
// The rows with parameters, declared with their named arguments (as the
// Tensor forms in elementwise.hpp).
Variable leaky_relu(const Variable& x, double negative_slope = 0.01);
Variable elu(const Variable& x, double alpha = 1.0);
Variable gelu(const Variable& x,
              GeluApproximation approximation = GeluApproximation::None);
Variable gelu_tanh(const Variable& x);
Variable softplus(const Variable& x, double beta = 1.0,
                  double threshold = 20.0);
// The gradient passes where min <= x <= max (PyTorch).
Variable clip(const Variable& x, std::optional<Scalar> min,
              std::optional<Scalar> max);

// Every row of TESSEL_FOR_EACH_BINARY_OP (op_list.hpp), generated from
// the table with all operand mixes: two Variables, a Variable and a Tensor
// or a Python-style number (constants: no gradient flows to them). Each
// row's gradient is its TESSEL_BINARY_GRADIENT in src/autograd/
// elementwise.cpp (a row without one does not compile). maximum/minimum
// split the gradient evenly at ties (PyTorch); remainder's gradient is
// PyTorch's (1 for a, -floor(a / b) for b); comparisons, logical and
// bitwise ops and floor_divide give constants.
#define TESSEL_DECLARE_VARIABLE_BINARY(e, name, result, inputs, kind, kernel) \
  Variable name(const Variable& a, const Variable& b);                        \
  Variable name(const Variable& a, const Tensor& b);                          \
  Variable name(const Tensor& a, const Variable& b);                          \
  Variable name(const Variable& a, Scalar b);                                 \
  Variable name(Scalar a, const Variable& b);
TESSEL_FOR_EACH_BINARY_OP(TESSEL_DECLARE_VARIABLE_BINARY)
#undef TESSEL_DECLARE_VARIABLE_BINARY
Variable where(const Tensor& condition, const Variable& a, const Variable& b);
Variable where(const Tensor& condition, const Variable& a, const Tensor& b);
Variable where(const Tensor& condition, const Tensor& a, const Variable& b);

// Operators with a Tensor operand: the Tensor is a constant.
#define TESSEL_MIXED_BINARY(name)                    \
  Variable name(const Variable& a, const Tensor& b); \
  Variable name(const Tensor& a, const Variable& b);
TESSEL_MIXED_BINARY(operator+)
TESSEL_MIXED_BINARY(operator-)
TESSEL_MIXED_BINARY(operator*)
TESSEL_MIXED_BINARY(operator/)
#undef TESSEL_MIXED_BINARY

Variable operator-(const Variable& x);
Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator+(const Variable& a, Scalar b);
Variable operator-(const Variable& a, Scalar b);
Variable operator*(const Variable& a, Scalar b);
Variable operator/(const Variable& a, Scalar b);
Variable operator+(Scalar a, const Variable& b);
Variable operator-(Scalar a, const Variable& b);
Variable operator*(Scalar a, const Variable& b);
Variable operator/(Scalar a, const Variable& b);

// ---- reductions and softmax
// --------------------------------------------------
Variable sum(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable mean(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable prod(const Variable& x, Axes axes = {}, bool keepdims = false);
// The gradient is shared evenly by the elements equal to the extreme.
Variable max(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable min(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable var(const Variable& x, Axes axes = {}, double correction = 1.0,
             bool keepdims = false);
Variable std(const Variable& x, Axes axes = {}, double correction = 1.0,
             bool keepdims = false);
Variable norm(const Variable& x, double ord = 2.0, Axes axes = {},
              bool keepdims = false);
Variable sum_squares(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable logsumexp(const Variable& x, Axes axes = {}, bool keepdims = false);
Variable cumsum(const Variable& x, std::int64_t axis);
Variable cumprod(const Variable& x, std::int64_t axis);
Variable softmax(const Variable& x, std::int64_t axis = -1);
Variable log_softmax(const Variable& x, std::int64_t axis = -1);

// ---- matrix products
// ---------------------------------------------------------
Variable matmul(const Variable& a, const Variable& b);
Variable dot(const Variable& a, const Variable& b);
Variable outer(const Variable& a, const Variable& b);
Variable linear(const Variable& x, const Variable& weight,
                const Variable& bias = {});
Variable einsum(std::string_view equation,
                const std::vector<Variable>& operands);

// ---- indexing and layout
// -----------------------------------------------------
Variable concat(const std::vector<Variable>& xs, std::int64_t axis = 0);
Variable stack(const std::vector<Variable>& xs, std::int64_t axis = 0);
std::vector<Variable> split(const Variable& x,
                            const std::vector<std::int64_t>& sizes,
                            std::int64_t axis = 0);
std::vector<Variable> chunk(const Variable& x, std::int64_t chunks,
                            std::int64_t axis = 0);
Variable gather(const Variable& x, const Tensor& index, std::int64_t axis = 0);
Variable index_select(const Variable& x, std::int64_t axis,
                      const Tensor& index);
Variable gather_elements(const Variable& x, const Tensor& index,
                         std::int64_t axis);
Variable take_along_axis(const Variable& x, const Tensor& index,
                         std::int64_t axis);
// ScatterReduce::None or Add only (E2201 otherwise).
Variable scatter(const Variable& x, std::int64_t axis, const Tensor& index,
                 const Variable& updates,
                 ScatterReduce reduce = ScatterReduce::None);
Variable scatter_add(const Variable& x, std::int64_t axis, const Tensor& index,
                     const Variable& updates);
Variable masked_fill(const Variable& x, const Tensor& mask, Scalar value);
Variable tril(const Variable& x, std::int64_t k = 0);
Variable triu(const Variable& x, std::int64_t k = 0);
Variable pad(const Variable& x,
             const std::vector<std::pair<std::int64_t, std::int64_t>>& pads,
             PadMode mode = PadMode::Constant, Scalar value = 0);
Variable tile(const Variable& x, const std::vector<std::int64_t>& reps);
Variable repeat(const Variable& x, std::int64_t repeats,
                std::optional<std::int64_t> axis = std::nullopt);
Variable flip(const Variable& x, Axes axes = {});
Variable roll(const Variable& x, const std::vector<std::int64_t>& shifts,
              Axes axes = {});
Variable sort(const Variable& x, std::int64_t axis = -1,
              bool descending = false);
struct VariableTopK {
  Variable values;
  Tensor indices;
};
VariableTopK topk(const Variable& x, std::int64_t k, std::int64_t axis = -1,
                  bool largest = true, bool sorted = true);

// ---- convolution, pooling, normalisation
// ------------------------------------------
Variable conv(const Variable& x, const Variable& weight,
              const Variable& bias = {}, const ConvOptions& options = {});
Variable conv1d(const Variable& x, const Variable& weight,
                const Variable& bias = {}, const ConvOptions& options = {});
Variable conv2d(const Variable& x, const Variable& weight,
                const Variable& bias = {}, const ConvOptions& options = {});
Variable conv_transpose(const Variable& x, const Variable& weight,
                        const Variable& bias = {},
                        const ConvOptions& options = {});
Variable conv_transpose2d(const Variable& x, const Variable& weight,
                          const Variable& bias = {},
                          const ConvOptions& options = {});
Variable max_pool(const Variable& x, const PoolOptions& options);
Variable max_pool2d(const Variable& x, const PoolOptions& options);
Variable avg_pool(const Variable& x, const PoolOptions& options);
Variable avg_pool2d(const Variable& x, const PoolOptions& options);
Variable global_avg_pool(const Variable& x,
                         DataLayout layout = DataLayout::ChannelsFirst);
Variable layer_norm(const Variable& x, const Variable& weight = {},
                    const Variable& bias = {}, double eps = 1e-5,
                    std::int64_t axis = -1);
Variable rms_norm(const Variable& x, const Variable& weight = {},
                  double eps = 1e-6, std::int64_t axis = -1);
Variable group_norm(const Variable& x, std::int64_t groups,
                    const Variable& weight = {}, const Variable& bias = {},
                    double eps = 1e-5);
Variable instance_norm(const Variable& x, const Variable& weight = {},
                       const Variable& bias = {}, double eps = 1e-5);
// Inference form: the running statistics are constants.
Variable batch_norm(const Variable& x, const Tensor& running_mean,
                    const Tensor& running_var, const Variable& weight = {},
                    const Variable& bias = {}, double eps = 1e-5);

// ---- transformer pieces
// ------------------------------------------------------------
Variable embedding(const Variable& weight, const Tensor& ids);
Variable rope(const Variable& x, const Tensor& positions,
              const RopeOptions& options = {});
Variable rope_with_tables(const Variable& x, const Tensor& cos,
                          const Tensor& sin, RopeStyle style = RopeStyle::NeoX);
// The mask is a constant. The backward pass recomputes the attention
// weights one (batch, head) at a time.
Variable scaled_dot_product_attention(const Variable& q, const Variable& k,
                                      const Variable& v,
                                      const AttentionOptions& options = {});

}  // namespace tessel

// The autograd engine by hand: recording, accumulation, grad mode, detach,
// retained graphs, broadcasting and views.
#include <gtest/gtest.h>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::expect_near_all;
using testing::values;

TEST(Autograd, ChainRuleByHand) {
  // f = sum(x * x + 3 x) : df/dx = 2x + 3.
  const Variable x(from_vector<double>({1, -2, 0.5}, {3}), true);
  const Variable f = sum(x * x + x * 3.0);
  EXPECT_DOUBLE_EQ(f.item<double>(), 1 + 3 + 4 - 6 + 0.25 + 1.5);
  f.backward();
  expect_near_all(x.grad(), {5, -1, 4}, 1e-15);
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(f.is_leaf());
  EXPECT_STREQ(f.op(), "sum");
}

TEST(Autograd, GradientsAccumulateUntilCleared) {
  const Variable x(from_vector<float>({2}, {1}), true);
  sum(x * x).backward();
  sum(x * x).backward();
  expect_near_all(x.grad(), {8}, 0);  // 4 + 4
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
  sum(x * 5.0).backward();
  expect_near_all(x.grad(), {5}, 0);
}

TEST(Autograd, SharedSubexpressionsSumTheirPaths) {
  // y = x^2 used twice: f = y + y * x = x^2 + x^3, df/dx = 2x + 3x^2.
  const Variable x(from_vector<double>({3}, {1}), true);
  const Variable y = x * x;
  sum(y + y * x).backward();
  expect_near_all(x.grad(), {6 + 27}, 1e-12);
}

TEST(Autograd, BroadcastGradientsSumBack) {
  // (2, 3) + (3,) and * (2, 1): gradients fold to each operand's shape.
  const Variable a(ones({2, 3}), true);
  const Variable b(from_vector<float>({1, 2, 3}, {3}), true);
  const Variable c(from_vector<float>({10, 20}, {2, 1}), true);
  sum((a + b) * c).backward();
  expect_near_all(a.grad(), {10, 10, 10, 20, 20, 20}, 0);
  expect_near_all(b.grad(), {30, 30, 30}, 0);
  // d/dc = sum over the row of (a + b) = 2 + 3 + 4.
  expect_near_all(c.grad(), {9, 9}, 0);
}

TEST(Autograd, ViewsRouteGradients) {
  const Variable x(arange(6, DType::F64).reshape({2, 3}), true);
  // slice with a step, select, permute, expand, reshape.
  const Variable s = x.slice(1, 0, 3, 2);              // columns 0 and 2
  const Variable r = x.select(0, 1).reshape({3, 1});   // row 1 as a column
  const Variable e = x.slice(0, 0, 1).expand({4, 3});  // row 0 four times
  sum(s * 2.0).backward();
  sum(r * 3.0).backward();
  sum(e.permute({1, 0})).backward();
  expect_near_all(x.grad(), {2 + 4, 4, 2 + 4, 3 + 2, 3, 3 + 2}, 1e-15);
}

TEST(Autograd, NoGradDetachAndConstants) {
  const Variable x(from_vector<float>({1, 2}, {2}), true);
  {
    NoGradGuard off;
    const Variable y = x * 2.0;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(grad_enabled());
  }
  EXPECT_TRUE(grad_enabled());
  const Variable d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  // A Tensor operand is a constant: only x gets a gradient.
  const Tensor t = from_vector<float>({5, 7}, {2});
  sum(mul(x, t) + d).backward();
  expect_near_all(x.grad(), {5, 7}, 0);
  EXPECT_TESSEL_ERROR(sum(d).backward(), "E2102",
                      "does not require a gradient");
}

TEST(Autograd, RetainGraphAndFreedGraphs) {
  const Variable x(from_vector<double>({2}, {1}), true);
  const Variable y = sum(exp(x));
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  expect_near_all(x.grad(), {2 * std::exp(2.0)}, 1e-12);
  EXPECT_TESSEL_ERROR(y.backward(), "E2102", "freed", "retain_graph");
}

TEST(Autograd, ExplicitOutputGradient) {
  const Variable x(from_vector<float>({1, 2, 3}, {3}), true);
  const Variable y = x * x;
  EXPECT_TESSEL_ERROR(y.backward(), "E2102", "non-scalar", "(3,)");
  EXPECT_TESSEL_ERROR(y.backward(ones({2})), "E2102", "(2,)", "(3,)");
  y.backward(from_vector<float>({1, 0, -1}, {3}));
  expect_near_all(x.grad(), {2, 0, -6}, 0);
}

TEST(Autograd, DTypesAndErrors) {
  EXPECT_TESSEL_ERROR(Variable(arange(3), true), "E2201", "float");
  // bf16 leaves get bf16 gradients.
  const Variable x(full({2}, 1.5, DType::BF16), true);
  sum(x * x).backward();
  EXPECT_EQ(x.grad().dtype(), DType::BF16);
  expect_near_all(x.grad(), {3, 3}, 0);
  // Casts pass gradients back in the source dtype.
  const Variable h(full({2}, 2.0, DType::F16), true);
  sum(h.to(DType::F32) * 3.0).backward();
  EXPECT_EQ(h.grad().dtype(), DType::F16);
  expect_near_all(h.grad(), {3, 3}, 0);
}

}  // namespace
}  // namespace tessel

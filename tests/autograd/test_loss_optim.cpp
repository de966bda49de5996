// Losses and optimisers by hand; PyTorch parity is in
// tests/oracle/test_torch_train.py.
#include <gtest/gtest.h>

#include <cmath>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using testing::expect_near_all;

TEST(Loss, CrossEntropyByHand) {
  // logits (1, 0) for class 0: -log softmax = log(1 + e^-1).
  const Variable logits(from_vector<double>({1, 0, 0, 0}, {2, 2}), true);
  const Tensor targets = from_vector<std::int64_t>({0, 1}, {2});
  const double l0 = std::log1p(std::exp(-1.0)), l_uniform = std::log(2.0);
  EXPECT_NEAR(cross_entropy(logits, targets).item<double>(),
              (l0 + l_uniform) / 2, 1e-12);
  // Label smoothing 0.1 over 2 classes: 0.9 * nll + 0.1 * mean_c(-logp_c).
  CrossEntropyOptions smooth;
  smooth.label_smoothing = 0.1;
  smooth.reduction = Reduction::None;
  const double l1 = l0 + 1.0;  // -logp of class 1 in the first row
  expect_near_all(cross_entropy(logits, targets, smooth).value(),
                  {0.9 * l0 + 0.05 * (l0 + l1), l_uniform}, 1e-12);
  // Ignored rows neither contribute nor count.
  CrossEntropyOptions ignore;
  ignore.ignore_index = 1;
  EXPECT_NEAR(cross_entropy(logits, targets, ignore).item<double>(), l0, 1e-12);
  ignore.ignore_index = -100;
  const Tensor all_ignored = from_vector<std::int64_t>({-100, -100}, {2});
  EXPECT_TRUE(
      std::isnan(cross_entropy(logits, all_ignored, ignore).item<double>()));
  // The gradient of the mean: (softmax - onehot) / rows.
  cross_entropy(logits, targets).backward();
  const double p0 = 1 / (1 + std::exp(-1.0));
  expect_near_all(logits.grad(), {(p0 - 1) / 2, (1 - p0) / 2, 0.25, -0.25},
                  1e-12);
}

TEST(Loss, Gradchecks) {
  CrossEntropyOptions o;
  o.label_smoothing = 0.2;
  o.ignore_index = 2;
  const Tensor targets = from_vector<std::int64_t>({0, 2, 3, 1, 2, 0}, {2, 3});
  Generator g(3);
  const auto ce =
      gradcheck([&](const auto& v) { return cross_entropy(v[0], targets, o); },
                {randn({2, 3, 4}, g)});
  EXPECT_TRUE(ce.ok) << ce.detail;
  o.reduction = Reduction::Sum;
  EXPECT_TRUE(
      gradcheck([&](const auto& v) { return cross_entropy(v[0], targets, o); },
                {randn({2, 3, 4}, g)})
          .ok);
  const auto nll = gradcheck(
      [&](const auto& v) {
        return nll_loss(log_softmax(v[0], -1), targets, 2);
      },
      {randn({2, 3, 4}, g)});
  EXPECT_TRUE(nll.ok) << nll.detail;
  const auto mse = gradcheck([](const auto& v) { return mse_loss(v[0], v[1]); },
                             {randn({2, 3}, g), randn({3}, g)});
  EXPECT_TRUE(mse.ok) << mse.detail;
}

TEST(Loss, Errors) {
  const Variable logits(zeros({2, 3}), true);
  EXPECT_TESSEL_ERROR(
      cross_entropy(logits, from_vector<std::int64_t>({0, 3}, {2})), "E2302",
      "target 3", "3 classes");
  EXPECT_TESSEL_ERROR(cross_entropy(logits, zeros({2}, DType::F32)), "E2201",
                      "integers");
  EXPECT_TESSEL_ERROR(cross_entropy(logits, zeros({3}, DType::I64)), "E2102",
                      "(3,)", "(2,)");
  CheckNumericsGuard on(true);
  const Variable bad(from_vector<float>({INFINITY, 0}, {1, 2}), true);
  EXPECT_TESSEL_ERROR(cross_entropy(bad, zeros({1}, DType::I64)), "E2401",
                      "cross_entropy");
}

TEST(Optim, SgdWithMomentumByHand) {
  const Variable p(from_vector<double>({1.0}, {1}), true);
  SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  p.set_grad(from_vector<double>({2.0}, {1}));
  sgd.step();  // buffer = 2: p = 1 - 0.2
  expect_near_all(p.value(), {0.8}, 1e-15);
  p.set_grad(from_vector<double>({1.0}, {1}));
  sgd.step();  // buffer = 0.9 * 2 + 1 = 2.8: p = 0.8 - 0.28
  expect_near_all(p.value(), {0.52}, 1e-15);
  // Nesterov uses g + momentum * buffer.
  const Variable q(from_vector<double>({0.0}, {1}), true);
  SGD nesterov({q}, {.lr = 1.0, .momentum = 0.5, .nesterov = true});
  q.set_grad(from_vector<double>({1.0}, {1}));
  nesterov.step();  // buffer = 1: step 1 + 0.5
  expect_near_all(q.value(), {-1.5}, 1e-15);
}

TEST(Optim, AdamFirstStepIsLrTimesSign) {
  // After one step m_hat = g and v_hat = g^2: the update is lr g / (|g| + eps).
  const Variable p(from_vector<double>({1.0, 1.0}, {2}), true);
  Adam adam({p}, {.lr = 0.01});
  p.set_grad(from_vector<double>({3.0, -0.5}, {2}));
  adam.step();
  expect_near_all(p.value(), {0.99, 1.01}, 1e-9);
  // AdamW also shrinks by lr * weight_decay first.
  const Variable w(from_vector<double>({2.0}, {1}), true);
  AdamW adamw({w}, {.lr = 0.1, .weight_decay = 0.5});
  w.set_grad(from_vector<double>({1.0}, {1}));
  adamw.step();
  expect_near_all(w.value(), {2.0 * (1 - 0.05) - 0.1}, 1e-8);  // eps = 1e-8
  EXPECT_EQ(adamw.steps_taken(), 1);
}

TEST(Optim, FusedAdamUpdateMatchesTheOpByOpFormBitForBit) {
  // Contiguous f32 takes the fused pass; a strided view of the same values
  // takes the op-by-op form. Both round every operation once, in the same
  // order, so they agree exactly (37 elements: whole vectors and a tail).
  Generator gen(7);
  for (const bool decoupled : {false, true}) {
    const Tensor fused_p = randn({37}, gen), grad = randn({37}, gen);
    const Tensor wide = zeros({37, 2});
    Tensor view_p = wide.select(1, 0);
    view_p.copy_(fused_p);
    const Tensor before = fused_p.clone();
    ASSERT_FALSE(view_p.is_contiguous());
    const Tensor m1 = zeros({37}), v1 = zeros({37});
    const Tensor m2 = zeros({37, 2}).select(1, 1),
                 v2 = zeros({37, 2}).select(1, 1);
    AdamUpdate u{.options = {.lr = 0.01,
                             .beta1 = 0.8,
                             .beta2 = 0.95,
                             .eps = 1e-6,
                             .weight_decay = 0.1},
                 .decoupled = decoupled};
    for (u.step = 1; u.step <= 3; ++u.step) {
      const Tensor g = mul(grad, static_cast<double>(u.step));
      adam_update_(fused_p, g, m1, v1, u);
      adam_update_(view_p, g, m2, v2, u);
    }
    EXPECT_TRUE(equal(fused_p, view_p.contiguous())) << decoupled;
    EXPECT_TRUE(equal(m1, m2.contiguous()));
    EXPECT_TRUE(equal(v1, v2.contiguous()));
    EXPECT_FALSE(equal(fused_p, before));  // it did move
  }
  EXPECT_THROW(adam_update_(zeros({3}), zeros({4}), zeros({3}), zeros({3}), {}),
               Error);
  EXPECT_THROW(adam_update_(zeros({3}), zeros({3}), zeros({3}, DType::F64),
                            zeros({3}), {}),
               Error);
}

TEST(Optim, StateRoundTripResumesExactly) {
  Generator g(5);
  const Tensor start = randn({3, 2}, g);
  const Tensor grads[3] = {randn({3, 2}, g), randn({3, 2}, g),
                           randn({3, 2}, g)};
  // Three steps straight, or two steps, a save, a fresh optimiser, a load
  // and the third step: the same result.
  const Variable a(start.clone(), true), b(start.clone(), true);
  AdamW oa({a}), ob({b});
  for (int s = 0; s < 3; ++s) {
    a.set_grad(grads[s]);
    oa.step();
  }
  for (int s = 0; s < 2; ++s) {
    b.set_grad(grads[s]);
    ob.step();
  }
  const auto state = ob.state_dict();
  EXPECT_EQ(state.at("step").item<std::int64_t>(), 2);
  EXPECT_TRUE(state.count("0.exp_avg") && state.count("0.exp_avg_sq"));
  AdamW resumed({b});
  resumed.load_state_dict(state);
  b.set_grad(grads[2]);
  resumed.step();
  EXPECT_TRUE(equal(a.value(), b.value()));
  auto broken = state;
  broken["7.exp_avg"] = zeros({3, 2});
  EXPECT_TESSEL_ERROR(resumed.load_state_dict(broken), "E4001", "7.exp_avg");
  broken = state;
  broken["0.exp_avg"] = zeros({2, 3});
  EXPECT_TESSEL_ERROR(resumed.load_state_dict(broken), "E4001", "(2, 3)");
}

TEST(Optim, ScheduleAndClipping) {
  const CosineSchedule s{
      .base_lr = 1.0, .min_lr = 0.1, .warmup_steps = 4, .total_steps = 14};
  EXPECT_DOUBLE_EQ(s.lr_at(0), 0.25);
  EXPECT_DOUBLE_EQ(s.lr_at(3), 1.0);
  EXPECT_DOUBLE_EQ(s.lr_at(4), 1.0);
  EXPECT_NEAR(s.lr_at(9), 0.55, 1e-12);  // half-way down the cosine
  EXPECT_DOUBLE_EQ(s.lr_at(14), 0.1);
  EXPECT_DOUBLE_EQ(s.lr_at(100), 0.1);
  const Variable a(zeros({2}), true), b(zeros({1}), true);
  a.set_grad(from_vector<float>({3, 0}, {2}));
  b.set_grad(from_vector<float>({4}, {1}));
  EXPECT_NEAR(clip_grad_norm({a, b}, 1.0), 5.0, 1e-6);
  expect_near_all(a.grad(), {0.6, 0}, 1e-6);
  expect_near_all(b.grad(), {0.8}, 1e-6);
  EXPECT_NEAR(clip_grad_norm({a, b}, 10.0), 1.0,
              1e-5);  // under the limit: untouched
  expect_near_all(b.grad(), {0.8}, 1e-6);
}

TEST(Optim, NumericsCheckCatchesNonFiniteSteps) {
  CheckNumericsGuard on(true);
  const Variable p(from_vector<float>({1}, {1}), true);
  SGD sgd({p}, {.lr = 1.0});
  p.set_grad(from_vector<float>({NAN}, {1}));
  EXPECT_TESSEL_ERROR(sgd.step(), "E2401", "sgd");
}

}  // namespace
}  // namespace tessel

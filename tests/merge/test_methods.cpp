// Every merge method on tensors small enough to work out by hand; the
// expected values are derived in the comments. mergekit itself is the
// oracle in tests/oracle/test_merge.py.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numeric>
#include <random>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using namespace tessel::merge;
using testing::expect_near_all;
using testing::values;

Tensor vec(std::vector<float> v) { return from_vector(v); }
Tensor mat(std::vector<float> v, std::int64_t rows, std::int64_t cols) {
  return from_vector(v, Shape{rows, cols});
}

constexpr double kTol = 1e-6;
const double kHalfRoot2 = std::sqrt(0.5);

TEST(MergeNames, RoundTripAndRefuseUnknown) {
  for (const char* name :
       {"linear", "task_arithmetic", "slerp", "nuslerp", "ties", "dare_linear",
        "dare_ties", "breadcrumbs", "breadcrumbs_ties", "della", "della_linear",
        "model_stock", "passthrough"}) {
    const auto m = parse_method(name);
    ASSERT_TRUE(m.has_value()) << name;
    EXPECT_EQ(method_name(*m), name);
  }
  EXPECT_FALSE(parse_method("karcher").has_value());
}

TEST(MergeLinear, WeightedAndNormalised) {
  const Tensor a = vec({1, 2});
  const Tensor b = vec({3, 6});
  const std::vector<Tensor> in{a, b};
  // (1*1 + 3*3) / 4 = 2.5, (1*2 + 3*6) / 4 = 5.
  expect_near_all(linear(in, std::vector<double>{1, 3}, true), {2.5, 5}, kTol);
  expect_near_all(linear(in, std::vector<double>{1, 3}, false), {10, 20}, kTol);
}

TEST(MergeLinear, ZeroWeightSumWithNormalizeIsRefused) {
  const std::vector<Tensor> in{vec({1, 2}), vec({3, 6})};
  EXPECT_TESSEL_ERROR(linear(in, std::vector<double>{1, -1}, true), "E4001",
                      "sum to zero");
  // Without normalize it is just a difference: [1 - 3, 2 - 6].
  expect_near_all(linear(in, std::vector<double>{1, -1}, false), {-2, -4},
                  kTol);
}

TEST(MergeSlerp, OrthogonalHalfway) {
  // cos = 0: theta = pi/2, both coefficients sin(pi/4) / sin(pi/2).
  expect_near_all(slerp(vec({1, 0}), vec({0, 1}), 0.5),
                  {kHalfRoot2, kHalfRoot2}, kTol);
  expect_near_all(slerp(vec({1, 0}), vec({0, 1}), 0.0), {1, 0}, kTol);
  expect_near_all(slerp(vec({1, 0}), vec({0, 1}), 1.0), {0, 1}, kTol);
}

TEST(MergeSlerp, ColinearFallsBackToLerp) {
  // [2, 4] is parallel to [1, 2] (cos = 1 > 0.9995): 0.75 a + 0.25 b.
  expect_near_all(slerp(vec({1, 2}), vec({2, 4}), 0.25), {1.25, 2.5}, kTol);
  // Antiparallel too (|cos| counts).
  expect_near_all(slerp(vec({1, 2}), vec({-1, -2}), 0.5), {0, 0}, kTol);
}

TEST(MergeSlerp, ZeroNormCountsAsOne) {
  // |a| = 0 becomes 1, so cos = 0 and the coefficients are the orthogonal
  // case's: b * sin(pi/4).
  expect_near_all(slerp(vec({0, 0}), vec({1, 0}), 0.5), {kHalfRoot2, 0}, kTol);
}

TEST(MergeSlerp, TOutsideUnitIntervalIsRefused) {
  EXPECT_TESSEL_ERROR(slerp(vec({1, 0}), vec({0, 1}), 1.5), "E4001",
                      "outside [0, 1]");
  EXPECT_TESSEL_ERROR(slerp(vec({1, 0}), vec({0, 1}), -0.1), "E4001");
}

// The seed's reason for an f64 dot: over 2^24 elements an f32 running sum
// stops growing (its ulp passes the terms), so the angle it gives is
// wrong, while the f64 one matches a long-double reference.
TEST(MergeSlerp, F64DotGivesTheAngleAnF32DotLoses) {
  const std::int64_t n = std::int64_t{1} << 24;
  std::vector<float> a(n), b(n);
  const double phi = 0.05;  // cos 0.99875: spherical, not linear
  for (std::int64_t i = 0; i < n; ++i) {
    const float base = 1.0f + 0.25f * static_cast<float>(std::sin(0.001 * i));
    const float perp = (i % 2 == 0) ? base : -base;  // orthogonal to base
    a[i] = base;
    b[i] = static_cast<float>(std::cos(phi) * base + std::sin(phi) * perp);
  }
  long double aa = 0, bb = 0, ab = 0;
  float faa = 0, fbb = 0, fab = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    aa += (long double)a[i] * a[i];
    bb += (long double)b[i] * b[i];
    ab += (long double)a[i] * b[i];
    faa += a[i] * a[i];
    fbb += b[i] * b[i];
    fab += a[i] * b[i];
  }
  const double theta = std::acos(double(ab / std::sqrt(aa * bb)));
  const double f32_theta = std::acos(
      std::clamp(double(fab) / std::sqrt(double(faa) * fbb), -1.0, 1.0));
  EXPECT_GT(std::abs(f32_theta - theta), 0.01 * theta)
      << "the f32 dot should visibly miss the angle";

  const double t = 0.3;
  const Tensor out = slerp(from_vector(a), from_vector(b), t);
  const double ca = std::sin((1 - t) * theta) / std::sin(theta);
  const double cb = std::sin(t * theta) / std::sin(theta);
  const float* o = out.data<float>();
  double worst = 0;
  for (std::int64_t i = 0; i < n; i += 4099) {
    const double want = ca * a[i] + cb * b[i];
    worst = std::max(worst, std::abs(o[i] - want) / std::abs(want));
  }
  EXPECT_LT(worst, 1e-6);
}

TEST(MergeNuslerp, CombinesUnnormalisedVectors) {
  // |a| = 2, |b| = 1, orthogonal: sin(pi/4) * (a + b).
  NuslerpOptions o;
  expect_near_all(nuslerp(nullptr, vec({2, 0}), vec({0, 1}), o),
                  {2 * kHalfRoot2, kHalfRoot2}, kTol);
  // With a base the deltas [2, 0] and [0, 1] are interpolated and added.
  const Tensor base = vec({1, 1});
  expect_near_all(nuslerp(&base, vec({3, 1}), vec({1, 2}), o),
                  {1 + 2 * kHalfRoot2, 1 + kHalfRoot2}, kTol);
}

TEST(MergeNuslerp, WeightsSetT) {
  // t = 3 / (1 + 3) = 0.75 on orthogonal unit vectors: sin(pi/8), sin(3pi/8).
  NuslerpOptions o;
  o.weight_a = 1;
  o.weight_b = 3;
  expect_near_all(nuslerp(nullptr, vec({1, 0}), vec({0, 1}), o),
                  {std::sin(M_PI / 8), std::sin(3 * M_PI / 8)}, kTol);
  // Weights summing to (nearly) zero give t = 0.5.
  o.weight_a = 1;
  o.weight_b = -1;
  expect_near_all(nuslerp(nullptr, vec({1, 0}), vec({0, 1}), o),
                  {kHalfRoot2, kHalfRoot2}, kTol);
}

TEST(MergeNuslerp, FlattenedAgainstRowByRow) {
  const Tensor a = mat({1, 0, 1, 0}, 2, 2);
  const Tensor b = mat({0, 1, 1, 0}, 2, 2);
  // Flattened: |a| = |b| = sqrt 2, a.b = 1, cos 1/2, theta pi/3;
  // coefficient sin(pi/6) / sin(pi/3) = 1/sqrt 3 on a + b = [1, 1, 2, 0].
  const double k = 1 / std::sqrt(3.0);
  NuslerpOptions o;
  expect_near_all(nuslerp(nullptr, a, b, o), {k, k, 2 * k, 0}, kTol);
  // Row by row: row 0 orthogonal, row 1 identical (colinear: lerp).
  o.flatten = false;
  expect_near_all(nuslerp(nullptr, a, b, o), {kHalfRoot2, kHalfRoot2, 1, 0},
                  kTol);
  // Column by column (row_wise): column 0 is [1, 1] and [0, 1] (cos
  // 1/sqrt 2, theta pi/4), column 1 is [0, 0] and [1, 0] (a zero vector:
  // cos 0).
  o.row_wise = true;
  const Tensor c = nuslerp(nullptr, a, b, o);
  const double s = std::sin(M_PI / 8) / std::sin(M_PI / 4);
  expect_near_all(c, {s * 1 + s * 0, kHalfRoot2 * 1, s * 1 + s * 1, 0}, kTol);
}

TEST(MergeTaskArithmetic, SumOfWeightedDeltas) {
  const Tensor base = vec({1, 1, 1});
  std::vector<TaskInput> in(2);
  in[0].tensor = vec({2, 0, 1});  // delta [1, -1, 0]
  in[0].weight = 1;
  in[1].tensor = vec({1, 3, 2});  // delta [0, 2, 1]
  in[1].weight = 0.5;
  TaskArithmeticOptions o = *task_arithmetic_defaults(Method::TaskArithmetic);
  // base + [1, -1 + 1, 0.5].
  expect_near_all(task_arithmetic(base, in, o), {2, 1, 1.5}, kTol);
  o.lambda = 2;
  expect_near_all(task_arithmetic(base, in, o), {3, 1, 2}, kTol);
  o.lambda = 1;
  o.normalize = true;  // divided by 1.5
  expect_near_all(task_arithmetic(base, in, o), {1 + 1 / 1.5, 1, 1 + 0.5 / 1.5},
                  kTol);
}

std::vector<TaskInput> ties_inputs() {
  std::vector<TaskInput> in(2);
  in[0].tensor = vec({1, -2, 3, 0});
  in[1].tensor = vec({-3, 1, 1, 2});
  return in;
}

TEST(MergeTies, SignElectionBySum) {
  const Tensor base = vec({0, 0, 0, 0});
  const TaskArithmeticOptions o = *task_arithmetic_defaults(Method::Ties);
  // Sums [-2, -1, 4, 2] elect [-, -, +, +]. Element 0 keeps -3 (weight 1),
  // element 1 keeps -2, element 2 averages 3 and 1, element 3 keeps 2 (a
  // zero delta has no sign and is not counted).
  expect_near_all(task_arithmetic(base, ties_inputs(), o), {-3, -2, 2, 2},
                  kTol);
}

TEST(MergeTies, SignElectionByCount) {
  const Tensor base = vec({0, 0, 0, 0});
  TaskArithmeticOptions o = *task_arithmetic_defaults(Method::Ties);
  o.consensus = Consensus::Count;
  // Sign counts [0, 0, 2, 1] all elect + (ties go to +): 1, 1, (3+1)/2, 2.
  expect_near_all(task_arithmetic(base, ties_inputs(), o), {1, 1, 2, 2}, kTol);
}

TEST(MergeTies, TrimsToDensityByMagnitude) {
  const Tensor base = vec({0, 0, 0, 0});
  std::vector<TaskInput> in = ties_inputs();
  for (TaskInput& i : in) i.density = 0.5;  // keep 2 of 4
  // Model 0 keeps [0, -2, 3, 0], model 1 keeps [-3, 0, 0, 2]; sums
  // [-3, -2, 3, 2] elect each survivor alone.
  const TaskArithmeticOptions o = *task_arithmetic_defaults(Method::Ties);
  expect_near_all(task_arithmetic(base, in, o), {-3, -2, 3, 2}, kTol);
}

TEST(MergeTies, EqualMagnitudesRankByPosition) {
  // bf16 deltas take few distinct values, so the cut falls inside long
  // runs of equal |delta| that span many blocks: the mask must keep
  // exactly the elements whose (|delta|, position) rank lies in the
  // window — here checked against a stable sort by magnitude.
  const std::int64_t n = 50001;
  std::vector<float> d(static_cast<std::size_t>(n));
  std::mt19937 rng(11);
  for (float& v : d) v = float(int(rng() % 7) - 3) * 0.25f;  // 7 values
  TaskInput in;
  in.tensor = from_vector(d);
  in.density = 0.45;
  in.gamma = 0.2;
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](auto p, auto q) {
    return std::abs(d[std::size_t(p)]) < std::abs(d[std::size_t(q)]);
  });
  const auto window = [&](std::int64_t lo, std::int64_t hi) {
    std::vector<std::uint8_t> m(static_cast<std::size_t>(n), 0);
    for (std::int64_t r = lo; r < hi; ++r)
      m[std::size_t(order[std::size_t(r)])] = 1;
    return m;
  };
  const auto k = static_cast<std::int64_t>(0.45 * double(n));
  EXPECT_EQ(sparsification_mask(in.tensor, Sparsification::Magnitude, in),
            window(n - k, n));
  const auto top = static_cast<std::int64_t>(0.2 * double(n));
  EXPECT_EQ(
      sparsification_mask(in.tensor, Sparsification::MagnitudeOutliers, in),
      window(n - k - top, n - top));
}

TEST(MergeTies, DensityOutsideUnitIntervalIsRefused) {
  const Tensor base = vec({0, 0, 0, 0});
  std::vector<TaskInput> in = ties_inputs();
  const TaskArithmeticOptions o = *task_arithmetic_defaults(Method::Ties);
  in[1].density = 0;
  EXPECT_TESSEL_ERROR(task_arithmetic(base, in, o), "E4001", "density = 0");
  in[1].density = 1.5;
  EXPECT_TESSEL_ERROR(task_arithmetic(base, in, o), "E4001", "outside (0, 1]");
}

TEST(MergeBreadcrumbs, DropsOutliersAndSmallest) {
  const Tensor base = vec({0, 0, 0, 0});
  std::vector<TaskInput> in(1);
  in[0].tensor = vec({1, -2, 3, 0});
  in[0].density = 0.5;  // keep 2
  in[0].gamma = 0.25;   // drop the 1 largest
  // Ascending |delta|: 0 (#3), 1 (#0), 2 (#1), 3 (#2); bottom = 4 - 2 - 1
  // = 1, so ranks 1 and 2 stay: elements 0 and 1.
  const TaskArithmeticOptions o =
      *task_arithmetic_defaults(Method::Breadcrumbs);
  expect_near_all(task_arithmetic(base, in, o), {1, -2, 0, 0}, kTol);
}

TEST(MergeDare, KeptFractionScaleAndDeterminism) {
  const std::int64_t n = 200000;
  std::vector<float> d(n);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (float& x : d) x = normal(rng);
  const Tensor base = zeros(Shape{n});
  std::vector<TaskInput> in(1);
  in[0].tensor = from_vector(d);
  in[0].density = 0.3;
  in[0].random = {42, 9};
  const TaskArithmeticOptions o = *task_arithmetic_defaults(Method::DareLinear);
  const Tensor out = task_arithmetic(base, in, o);
  const auto got = values<float>(out);
  std::int64_t kept = 0;
  double l1 = 0, l1_kept = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    l1 += std::abs(d[i]);
    if (got[i] != 0) {
      ++kept;
      l1_kept += std::abs(d[i]);
    }
  }
  // The merge keeps the rescale pass's draws as bits; they must be the
  // draws the mask is defined by.
  const auto mask =
      sparsification_mask(in[0].tensor, Sparsification::Random, in[0]);
  std::int64_t mismatched = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    mismatched += (mask[std::size_t(i)] != 0) != (got[std::size_t(i)] != 0);
  }
  EXPECT_EQ(mismatched, 0);
  // Binomial(n, 0.3): within 5 standard deviations.
  const double sigma = std::sqrt(n * 0.3 * 0.7);
  EXPECT_NEAR(double(kept), 0.3 * n, 5 * sigma);
  // Every kept value is its delta times the one L1 rescale factor.
  const float scale = static_cast<float>(l1 / l1_kept);
  for (std::int64_t i = 0; i < n; i += 37) {
    if (got[i] != 0) {
      EXPECT_FLOAT_EQ(got[i], d[i] * scale) << i;
    }
  }
  // The same seed and stream give the same bytes on one thread; another
  // stream gives another mask.
  const int threads = get_num_threads();
  set_num_threads(1);
  const auto again = values<float>(task_arithmetic(base, in, o));
  set_num_threads(threads);
  EXPECT_EQ(again, got);
  in[0].random.stream = 10;
  EXPECT_NE(values<float>(task_arithmetic(base, in, o)), got);
}

TEST(MergeDella, KeepProbabilityRisesWithMagnitude) {
  const std::int64_t cols = 100000;
  std::vector<float> d(cols);
  for (std::int64_t i = 0; i < cols; ++i) d[i] = float(i + 1);  // rank = i
  TaskInput in;
  in.tensor = from_vector(d, Shape{1, cols});
  in.density = 0.5;
  in.epsilon = 0.1;
  in.random = {3, 1};
  const auto mask =
      sparsification_mask(in.tensor, Sparsification::DellaMagprune, in);
  // The smallest tenth keeps with p from 0.40 to 0.42, the largest tenth
  // from 0.58 to 0.60.
  const std::int64_t tenth = cols / 10;
  const auto kept = [&](std::int64_t from) {
    return std::accumulate(mask.begin() + from, mask.begin() + from + tenth, 0);
  };
  const double sigma = std::sqrt(tenth * 0.25);
  EXPECT_NEAR(kept(0), 0.41 * tenth, 5 * sigma);
  EXPECT_NEAR(kept(cols - tenth), 0.59 * tenth, 5 * sigma);
  in.density = 0.95;  // 0.95 + 0.1 leaves (0, 1)
  EXPECT_TESSEL_ERROR(
      sparsification_mask(in.tensor, Sparsification::DellaMagprune, in),
      "E4001", "epsilon");
}

TEST(MergeModelStock, InterpolatesByMeanCosine) {
  const Tensor base = vec({0, 0});
  // Deltas [1, 1] and [1, 0]: cos 1/sqrt 2, t = 2c / (1 + c) = 0.828427;
  // the average is [1, 0.5].
  const double c = kHalfRoot2;
  const double t = 2 * c / (1 + c);
  const std::vector<Tensor> others{vec({1, 1}), vec({1, 0})};
  expect_near_all(model_stock(base, others, false), {t, t * 0.5}, kTol);
  // Orthogonal deltas: t = 0, the base.
  const std::vector<Tensor> orthogonal{vec({1, 0}), vec({0, 1})};
  expect_near_all(model_stock(base, orthogonal, false), {0, 0}, kTol);
}

TEST(MergeModelStock, SingularDenominatorKeepsBase) {
  // Opposite deltas with two models: 1 + (2 - 1) * (-1) = 0.
  const std::vector<Tensor> others{vec({6, 5}), vec({4, 5})};
  expect_near_all(model_stock(vec({5, 5}), others, false), {5, 5}, kTol);
  EXPECT_TESSEL_ERROR(model_stock(vec({5, 5}), {&others[0], 1}, false), "E4001",
                      "at least two");
}

TEST(MergeModelStock, FilterWisePerRow) {
  const Tensor base = mat({0, 0, 0, 0}, 2, 2);
  const std::vector<Tensor> others{mat({1, 0, 1, 1}, 2, 2),
                                   mat({0, 1, 1, 0}, 2, 2)};
  // Row 0: orthogonal deltas, the base. Row 1: the first test's case.
  const double c = kHalfRoot2;
  const double t = 2 * c / (1 + c);
  expect_near_all(model_stock(base, others, true), {0, 0, t, t * 0.5}, kTol);
}

TEST(MergePassthrough, ScalesWhenAsked) {
  expect_near_all(passthrough(vec({1, 2}), 0.5), {0.5, 1}, kTol);
  expect_near_all(passthrough(vec({1, 2}), std::nullopt), {1, 2}, kTol);
}

TEST(MergeDare, MaskIsThePhiloxDrawOfEachElement) {
  // The mask is redrawn block by block by a vector Philox; each element
  // must be the scalar generator's draw: word i % 4 of block (i / 4,
  // stream), kept when its top 24 bits / 2^24 < density. A length that is
  // no multiple of 4 or of any vector, and a stream above 2^32.
  const std::int64_t n = 100003;
  std::vector<TaskInput> in(1);
  in[0].tensor = ones(Shape{n});
  in[0].density = 0.37;
  in[0].random = {0x123456789abcull, (std::uint64_t{5} << 32) + 11};
  const auto mask =
      sparsification_mask(in[0].tensor, Sparsification::Random, in[0]);
  ASSERT_EQ(std::int64_t(mask.size()), n);
  const std::array<std::uint32_t, 2> key{
      static_cast<std::uint32_t>(in[0].random.seed),
      static_cast<std::uint32_t>(in[0].random.seed >> 32)};
  std::int64_t differ = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto block = static_cast<std::uint64_t>(i / 4);
    const auto w =
        philox4x32_10({static_cast<std::uint32_t>(block),
                       static_cast<std::uint32_t>(block >> 32),
                       static_cast<std::uint32_t>(in[0].random.stream),
                       static_cast<std::uint32_t>(in[0].random.stream >> 32)},
                      key);
    const double u = double(w[std::size_t(i % 4)] >> 8) * 0x1p-24;
    differ += mask[std::size_t(i)] != (u < in[0].density ? 1 : 0);
  }
  EXPECT_EQ(differ, 0);
  // density 1 keeps everything, and a density that is an exact multiple
  // of 2^-24 keeps u < density only (not <=).
  in[0].density = 0.5;
  std::int64_t kept = 0;
  for (const auto m :
       sparsification_mask(in[0].tensor, Sparsification::Random, in[0])) {
    kept += m;
  }
  EXPECT_NEAR(double(kept), 0.5 * n, 5 * std::sqrt(n * 0.25));
}

// bf16 and f16 inputs are read in place and widened block by block: the
// result must be the bits of merging their (exact) f32 widening.
TEST(MergeInputs, HalfInputsMergeAsTheirF32Values) {
  const std::int64_t rows = 37, cols = 1001;  // blocks end mid-row
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  const auto random = [&](float offset) {
    std::vector<float> v(std::size_t(rows * cols));
    for (float& x : v) x = offset + normal(rng);
    return from_vector(v, Shape{rows, cols});
  };
  const Tensor base = random(0.0f);
  const Tensor a = base + random(0.0f) * 0.1;
  const Tensor b = base + random(0.0f) * 0.1;
  for (const DType half : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(dtype_name(half));
    const Tensor hb = base.to(half), ha = a.to(half), hbb = b.to(half);
    const Tensor fb = hb.to(DType::F32), fa = ha.to(DType::F32),
                 fbb = hbb.to(DType::F32);
    EXPECT_EQ(values<float>(slerp(hb, ha, 0.3)),
              values<float>(slerp(fb, fa, 0.3)));
    const std::vector<Tensor> lin_h{hb, ha}, lin_f{fb, fa};
    EXPECT_EQ(values<float>(linear(lin_h, std::vector<double>{1, 2}, true)),
              values<float>(linear(lin_f, std::vector<double>{1, 2}, true)));
    for (const Method m : {Method::Ties, Method::DareTies, Method::Della}) {
      SCOPED_TRACE(std::string(method_name(m)));
      TaskArithmeticOptions o = *task_arithmetic_defaults(m);
      o.rescale = m != Method::Ties;
      std::vector<TaskInput> th(2), tf(2);
      for (int k = 0; k < 2; ++k) {
        th[k].tensor = k == 0 ? ha : hbb;
        tf[k].tensor = k == 0 ? fa : fbb;
        th[k].density = tf[k].density = 0.5;
        th[k].weight = tf[k].weight = 0.5 + k;
        th[k].random = tf[k].random = {1, std::uint64_t(k)};
      }
      EXPECT_EQ(values<float>(task_arithmetic(hb, th, o)),
                values<float>(task_arithmetic(fb, tf, o)));
    }
  }
}

TEST(MergeInputs, RefusesMismatchedShapesAndDtypes) {
  const std::vector<Tensor> in{vec({1, 2}), vec({1, 2, 3})};
  EXPECT_TESSEL_ERROR(linear(in, std::vector<double>{1, 1}, true), "E2102");
  const std::vector<Tensor> f64{vec({1, 2}).to(DType::F64), vec({1, 2})};
  EXPECT_TESSEL_ERROR(linear(f64, std::vector<double>{1, 1}, true), "E2201");
}

}  // namespace
}  // namespace tessel

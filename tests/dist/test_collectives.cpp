// The collectives of tessel::dist, run as one process and, by ctest, as
// `mpirun -np 2` (and 3): every expected value is computed by hand from
// the rank and the world size, so the same test holds for any size.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tessel/dist/data_parallel.hpp"
#include "tessel/dist/process_group.hpp"
#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

using dist::ReduceOp;

dist::ProcessGroup& group() { return dist::world(); }

// The world size the launcher asked for (1 when run alone).
int launched_size() {
  const char* n = std::getenv("OMPI_COMM_WORLD_SIZE");
  return n == nullptr ? 1 : std::atoi(n);
}

TEST(Collectives, TheGroupIsTheLaunchersJob) {
  EXPECT_EQ(group().world_size(), launched_size());
  EXPECT_GE(group().rank(), 0);
  EXPECT_LT(group().rank(), group().world_size());
  EXPECT_EQ(group().backend(), dist::launched_distributed() ? "mpi" : "single");
  if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK")) {
    EXPECT_EQ(group().rank(), std::atoi(r));
  }
}

// Rank r holds (r + 1) * [1, 2, 3, 4]; over n ranks the sum is
// n (n + 1) / 2 * base, the mean (n + 1) / 2 * base, the max n * base.
TEST(Collectives, AllReduceSumMeanMaxByHand) {
  const int n = group().world_size();
  const double r1 = group().rank() + 1;
  const double tri = n * (n + 1) / 2.0;
  for (const DType d : {DType::F32, DType::F64, DType::F16, DType::BF16,
                        DType::I32, DType::I64, DType::U8}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const Tensor base = from_vector<double>({1, 2, 3, 4});
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
      if (op == ReduceOp::Mean && !is_floating_point(d)) continue;
      Tensor t = mul(base, r1).to(d);
      group().all_reduce(t, op);
      const double factor = op == ReduceOp::Sum    ? tri
                            : op == ReduceOp::Mean ? tri / n
                                                   : n;
      EXPECT_TRUE(equal(t, mul(base, factor).to(d)))
          << "op " << static_cast<int>(op);
    }
  }
}

// bf16 sums in f32 and rounds once: 256 + 1 + 1 (ranks 0..2 holding 256,
// 1, 1) is 258 in f32, while bf16 additions in order would round 257 to
// 256 and give 256. With two ranks: 256 + 1 = 257 rounds to 256 either way.
TEST(Collectives, SixteenBitFloatsReduceInF32AndRoundOnce) {
  const int n = group().world_size();
  Tensor t = full({1}, group().rank() == 0 ? 256.0 : 1.0, DType::BF16);
  group().all_reduce(t, ReduceOp::Sum);
  const double f32_sum = 256.0 + (n - 1);
  EXPECT_EQ(t.item<double>(), full({1}, f32_sum, DType::BF16).item<double>());
}

TEST(Collectives, BroadcastFromEveryRoot) {
  for (int root = 0; root < group().world_size(); ++root) {
    Tensor t = full({2, 3}, group().rank() * 10 + 1, DType::F64);
    group().broadcast(t, root);
    EXPECT_TRUE(equal(t, full({2, 3}, root * 10 + 1, DType::F64)));
    Tensor h = full({5}, group().rank(), DType::BF16);
    group().broadcast(h, root);
    EXPECT_TRUE(equal(h, full({5}, root, DType::BF16)));
  }
  Tensor t = zeros({2});
  EXPECT_TESSEL_ERROR(group().broadcast(t, group().world_size()), "E2302",
                      "root");
  EXPECT_TESSEL_ERROR(group().broadcast(t, -1), "E2302");
}

TEST(Collectives, AllGatherStacksRanksInOrder) {
  const int n = group().world_size();
  const Tensor mine = full({2, 2}, group().rank(), DType::I16);
  const Tensor all = group().all_gather(mine);
  EXPECT_EQ(all.shape(), (Shape{n, 2, 2}));
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(equal(all.select(0, r), full({2, 2}, r, DType::I16)));
  }
  EXPECT_EQ(group().all_gather(zeros({0, 3})).shape(), (Shape{n, 0, 3}));
}

TEST(Collectives, BarrierReturnsOnEveryRank) {
  group().barrier();
  group().barrier();
}

// Refusals are the same on every rank and before any engine call, so no
// rank is left waiting in a collective the others skipped.
TEST(Collectives, RefusesWhatItCannotReduce) {
  EXPECT_TESSEL_ERROR(
      group().all_reduce(zeros({2, 3}).transpose(0, 1), ReduceOp::Sum), "E2301",
      "contiguous");
  EXPECT_TESSEL_ERROR(
      group().all_reduce(zeros({4}, DType::F32, Device::meta()), ReduceOp::Sum),
      "E2501", "meta");
  EXPECT_TESSEL_ERROR(
      group().all_reduce(zeros({4}, DType::I32), ReduceOp::Mean), "E2201",
      "mean");
  EXPECT_TESSEL_ERROR(
      group().all_reduce(zeros({4}, DType::Bool), ReduceOp::Sum), "E2201");
  EXPECT_TESSEL_ERROR(group().all_reduce(zeros({4}, DType::C64), ReduceOp::Max),
                      "E2201");
  EXPECT_TESSEL_ERROR(group().all_gather(empty({32}, DType::Q8_0)), "E2201",
                      "dequantise");
  EXPECT_TESSEL_ERROR(group().all_reduce(Tensor(), ReduceOp::Sum), "E2102");
}

TEST(Collectives, AgreementIsCheckedOnEveryRank) {
  group().check_agreement("the model config", "{\"hidden\": 64}");
  if (group().world_size() == 1) return;
  // Rank 1 alone disagrees: every rank raises E4001 naming the split.
  const std::string value =
      group().rank() == 1 ? "{\"hidden\": 65}" : "{\"hidden\": 64}";
  EXPECT_TESSEL_ERROR(group().check_agreement("the model config", value),
                      "E4001", "the model config differs", "ranks 1");
  // ... and the group still works afterwards: nobody hung.
  Tensor t = ones({1});
  group().all_reduce(t, ReduceOp::Sum);
  EXPECT_EQ(t.item<float>(), static_cast<float>(group().world_size()));
}

// The data-parallel pair, by hand: rank r's gradient of parameter k is
// (r + 1) * (k + 1) everywhere, so the mean is (n + 1) / 2 * (k + 1); a
// missing gradient counts as zeros. Tiny buckets force one collective per
// parameter, mixed dtypes force a bucket per dtype run.
TEST(DataParallel, GradientsAverageInBucketsByHand) {
  const int n = group().world_size();
  const double r1 = group().rank() + 1;
  std::vector<Variable> params;
  const std::vector<std::pair<Shape, DType>> specs = {
      {{3, 2}, DType::F32}, {{4}, DType::F32},    {{2, 2}, DType::BF16},
      {{5}, DType::F32},    {{1, 3}, DType::F64}, {{2}, DType::F32}};
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const auto& [shape, dtype] = specs[k];
    Variable p(zeros(shape, dtype), true);
    if (k != 3) p.set_grad(full(shape, r1 * static_cast<double>(k + 1), dtype));
    params.push_back(p);
  }
  for (const std::size_t bucket : {std::size_t{8}, std::size_t{1} << 20}) {
    for (std::size_t k = 0; k < specs.size(); ++k) {
      if (k != 3) {
        params[k].set_grad(full(specs[k].first, r1 * static_cast<double>(k + 1),
                                specs[k].second));
      } else {
        params[k].zero_grad();
      }
    }
    const double seconds = dist::all_reduce_gradients(group(), params, bucket);
    EXPECT_GE(seconds, 0.0);
    for (std::size_t k = 0; k < specs.size(); ++k) {
      SCOPED_TRACE("parameter " + std::to_string(k) + ", bucket " +
                   std::to_string(bucket));
      const double want =
          k == 3 ? 0.0
                 : (n == 1 ? r1 : (n + 1) / 2.0) * static_cast<double>(k + 1);
      if (n == 1 && k == 3) {
        EXPECT_FALSE(params[k].grad().defined());  // alone: untouched
        continue;
      }
      ASSERT_TRUE(params[k].grad().defined());
      EXPECT_EQ(params[k].grad().dtype(), specs[k].second);
      EXPECT_EQ(params[k].grad().shape(), specs[k].first);
      EXPECT_TRUE(
          equal(params[k].grad(), full(specs[k].first, want, specs[k].second)));
    }
  }
}

TEST(DataParallel, ParametersStartAsRankZeros) {
  std::vector<Variable> params = {
      Variable(full({3}, group().rank() + 5, DType::F32), true),
      Variable(full({2, 2}, group().rank() + 7, DType::BF16), true)};
  dist::broadcast_parameters(group(), params, 4);
  EXPECT_TRUE(equal(params[0].value(), full({3}, 5, DType::F32)));
  EXPECT_TRUE(equal(params[1].value(), full({2, 2}, 7, DType::BF16)));
}

}  // namespace
}  // namespace tessel

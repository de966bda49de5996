// Throughput of the core's memory-bound kernels, with memcpy as the
// bandwidth ceiling measured in the same run. bench/compare_numpy.py runs
// this and NumPy side by side and prints the ratios (BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "tessel/tessel.hpp"

namespace {

using tessel::DType;
using tessel::Tensor;

constexpr std::int64_t kElements = std::int64_t{1} << 24;  // 64 MiB of f32

void report_bytes(benchmark::State& state, std::int64_t bytes_per_iter) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iter);
}

// The ceiling: read + write of the same byte count as an f32 -> f32 copy.
void BM_Memcpy(benchmark::State& state) {
  std::vector<char> src(kElements * 4, 1);
  std::vector<char> dst(kElements * 4);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::ClobberMemory();
  }
  report_bytes(state, 2 * kElements * 4);
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Cast(benchmark::State& state, DType from, DType to) {
  const Tensor src = tessel::ones({kElements}, from);
  Tensor dst = tessel::empty({kElements}, to);
  for (auto _ : state) {
    dst.copy_(src);
    benchmark::ClobberMemory();
  }
  report_bytes(state, kElements * (tessel::element_size(from) +
                                   tessel::element_size(to)));
}
BENCHMARK_CAPTURE(BM_Cast, f32_to_bf16, DType::F32, DType::BF16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, f32_to_f16, DType::F32, DType::F16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, f16_to_f32, DType::F16, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, bf16_to_f32, DType::BF16, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, f32_to_f8_e4m3fn, DType::F32, DType::F8E4M3FN)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, i32_to_f32, DType::I32, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Cast, f32_to_f32, DType::F32, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Materialising a transposed 4096 x 4096 f32 view.
void BM_ContiguousOfTranspose(benchmark::State& state) {
  const Tensor src = tessel::ones({4096, 4096}).transpose(0, 1);
  for (auto _ : state) {
    Tensor out = src.contiguous();
    benchmark::DoNotOptimize(out.raw_data());
  }
  report_bytes(state, 2 * kElements * 4);
}
BENCHMARK(BM_ContiguousOfTranspose)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Fill(benchmark::State& state) {
  Tensor t = tessel::empty({kElements});
  for (auto _ : state) {
    t.fill_(1.5f);
    benchmark::ClobberMemory();
  }
  report_bytes(state, kElements * 4);
}
BENCHMARK(BM_Fill)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Randn(benchmark::State& state) {
  tessel::Generator gen(0);
  for (auto _ : state) {
    Tensor t = tessel::randn({kElements / 4}, gen);
    benchmark::DoNotOptimize(t.raw_data());
  }
  report_bytes(state, kElements);  // f32 output bytes
}
BENCHMARK(BM_Randn)->Unit(benchmark::kMillisecond)->UseRealTime();

// The cost of a parallel pass itself: one empty chunk per thread, on the
// free team (OpenMP starts and joins a team each time) and on a held one
// (with_team_held: a post and a join), what a decode step pays per pass.
void parallel_passes(benchmark::State& state) {
  const int threads = tessel::get_num_threads();
  for (auto _ : state) {
    tessel::parallel_for(0, threads, 1, [](std::int64_t lo, std::int64_t) {
      benchmark::DoNotOptimize(lo);
    });
  }
}
void BM_ParallelPass(benchmark::State& state) { parallel_passes(state); }
void BM_ParallelPassHeld(benchmark::State& state) {
  tessel::with_team_held([&] { parallel_passes(state); });
}
BENCHMARK(BM_ParallelPass)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_ParallelPassHeld)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

// Element-wise, reduction, softmax and layout kernels, beside the STREAM-like
// copy/add/read ceilings of ceilings.cpp. bench/compare_ops.py runs this next
// to NumPy and PyTorch and prints every ratio (BENCHMARKS.md).
#include <benchmark/benchmark.h>

#include <cstring>

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

constexpr std::int64_t kN = std::int64_t{1} << 24;  // 16M elements
constexpr std::int64_t kSide = 4096;

void bytes(benchmark::State& state, std::int64_t per_iteration) {
  state.SetBytesProcessed(state.iterations() * per_iteration);
}

// The STREAM-like ceilings (BM_Stream*) come from ceilings.cpp.

// ---- element-wise ----

void BM_AddOut(benchmark::State& state, DType dtype) {
  const Tensor a = randn({kN}, dtype);
  const Tensor b = randn({kN}, dtype);
  Tensor c = empty({kN}, dtype);
  for (auto _ : state) add_out(c, a, b);
  bytes(state, 3 * kN * element_size(dtype));
  state.SetItemsProcessed(state.iterations() * kN);
}
BENCHMARK_CAPTURE(BM_AddOut, f32, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AddOut, bf16, DType::BF16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AddOut, f16, DType::F16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_AddAlloc(benchmark::State& state) {
  const Tensor a = randn({kN});
  const Tensor b = randn({kN});
  for (auto _ : state) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.raw_data());
  }
  bytes(state, 3 * kN * 4);
}
BENCHMARK(BM_AddAlloc)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AddRowBroadcast(benchmark::State& state) {
  const Tensor a = randn({kSide, kSide});
  const Tensor b = randn({kSide});
  Tensor c = empty({kSide, kSide});
  for (auto _ : state) add_out(c, a, b);
  bytes(state, 2 * kSide * kSide * 4);
}
BENCHMARK(BM_AddRowBroadcast)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AddColBroadcast(benchmark::State& state) {
  const Tensor a = randn({kSide, kSide});
  const Tensor b = randn({kSide, 1});
  Tensor c = empty({kSide, kSide});
  for (auto _ : state) add_out(c, a, b);
  bytes(state, 2 * kSide * kSide * 4);
}
BENCHMARK(BM_AddColBroadcast)->Unit(benchmark::kMillisecond)->UseRealTime();

// Unary ops, allocating (what PyTorch's functional forms do) and, where
// tessel has one, into a given output.
void BM_UnaryAlloc(benchmark::State& state, Tensor (*op)(const Tensor&),
                   DType dtype) {
  const Tensor x = randn({kN}, dtype);
  for (auto _ : state) {
    Tensor y = op(x);
    benchmark::DoNotOptimize(y.raw_data());
  }
  bytes(state, 2 * kN * element_size(dtype));
  state.SetItemsProcessed(state.iterations() * kN);
}
Tensor gelu_erf(const Tensor& x) { return gelu(x); }
BENCHMARK_CAPTURE(BM_UnaryAlloc, exp, exp, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_UnaryAlloc, tanh, tanh, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_UnaryAlloc, gelu, gelu_erf, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_UnaryAlloc, gelu_tanh, gelu_tanh, DType::F32)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_UnaryAlloc, exp_bf16, exp, DType::BF16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_UnaryAlloc, exp_f16, exp, DType::F16)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_UnaryOut(benchmark::State& state,
                 Tensor (*op)(const Tensor&, const Tensor&), DType dtype) {
  const Tensor x = randn({kN}, dtype);
  Tensor y = empty({kN}, dtype);
  for (auto _ : state) op(y, x);
  bytes(state, 2 * kN * element_size(dtype));
  state.SetItemsProcessed(state.iterations() * kN);
}
#define TESSEL_UNARY_OUT(name, op, dtype)                \
  BENCHMARK_CAPTURE(BM_UnaryOut, name, op, DType::dtype) \
      ->Unit(benchmark::kMillisecond)                    \
      ->UseRealTime()
TESSEL_UNARY_OUT(exp, exp_out, F32);
TESSEL_UNARY_OUT(tanh, tanh_out, F32);
TESSEL_UNARY_OUT(exp_bf16, exp_out, BF16);
TESSEL_UNARY_OUT(exp_f16, exp_out, F16);
TESSEL_UNARY_OUT(tanh_bf16, tanh_out, BF16);
TESSEL_UNARY_OUT(tanh_f16, tanh_out, F16);

// ---- reductions ----

void BM_SumAll(benchmark::State& state) {
  const Tensor x = randn({kN});
  for (auto _ : state) benchmark::DoNotOptimize(sum(x).raw_data());
  bytes(state, kN * 4);
}
BENCHMARK(BM_SumAll)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SumAxis(benchmark::State& state, std::int64_t axis) {
  const Tensor x = randn({kSide, kSide});
  for (auto _ : state) benchmark::DoNotOptimize(sum(x, {axis}).raw_data());
  bytes(state, kSide * kSide * 4);
}
BENCHMARK_CAPTURE(BM_SumAxis, axis0, 0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_SumAxis, axis1, 1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_ArgmaxLast(benchmark::State& state) {
  const Tensor x = randn({kSide, kSide});
  for (auto _ : state) benchmark::DoNotOptimize(argmax(x, -1).raw_data());
  bytes(state, kSide * kSide * 4);
}
BENCHMARK(BM_ArgmaxLast)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SoftmaxLast(benchmark::State& state) {
  const Tensor x = randn({kSide, kSide});
  for (auto _ : state) benchmark::DoNotOptimize(softmax(x, -1).raw_data());
  bytes(state, 2 * kSide * kSide * 4);
}
BENCHMARK(BM_SoftmaxLast)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- transforms ----

// 16 Mi f32 values in runs of 128: a quantised KV cache's key rotation
// (Qwen3's head_dim), over more rows than the caches hold.
void BM_HadamardTransform(benchmark::State& state) {
  const Tensor x = randn({kN / 128, 128});
  for (auto _ : state) {
    benchmark::DoNotOptimize(hadamard_transform(x).raw_data());
  }
  bytes(state, 2 * kN * 4);
}
BENCHMARK(BM_HadamardTransform)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- layout ----

void BM_ContiguousTranspose(benchmark::State& state) {
  const Tensor x = randn({kSide, kSide}).transpose(0, 1);
  for (auto _ : state) benchmark::DoNotOptimize(x.contiguous().raw_data());
  bytes(state, 2 * kSide * kSide * 4);
}
BENCHMARK(BM_ContiguousTranspose)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

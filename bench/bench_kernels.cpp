// The compute-bound kernels (GEMM in f32/bf16/int8, decoder-shaped x W^T
// with cold weights, f32 x bf16 prompt products, conv2d in both layouts, causal
// attention) beside the peers that run in this process: oneDNN called directly
// and OpenBLAS's sgemm (loaded at run time with the core type the environment
// names). bench/compare_kernels.py adds PyTorch and the ceilings (ceilings.cpp)
// and prints the table of BENCHMARKS.md.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <vector>

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

void flops(benchmark::State& state, double per_iteration) {
  state.SetItemsProcessed(static_cast<std::int64_t>(
      static_cast<double>(state.iterations()) * per_iteration));
}

// ---- oneDNN, called directly: one primitive, created once ----

struct OneDnnMatmul {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c;

  // (m, k) x (k, n) -> (m, n); b_transposed reads b from (n, k) memory.
  OneDnnMatmul(std::int64_t m, std::int64_t n, std::int64_t k,
               dnnl::memory::data_type in_a, dnnl::memory::data_type in_b,
               dnnl::memory::data_type out, bool b_transposed) {
    using tag = dnnl::memory::format_tag;
    a = dnnl::memory::desc({m, k}, in_a, tag::ab);
    b = dnnl::memory::desc({k, n}, in_b, b_transposed ? tag::ba : tag::ab);
    c = dnnl::memory::desc({m, n}, out, tag::ab);
    prim = dnnl::matmul(
        dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), engine));
  }
  void run(const void* pa, const void* pb, void* pc) {
    prim.execute(
        stream,
        {{DNNL_ARG_SRC, dnnl::memory(a, engine, const_cast<void*>(pa))},
         {DNNL_ARG_WEIGHTS, dnnl::memory(b, engine, const_cast<void*>(pb))},
         {DNNL_ARG_DST, dnnl::memory(c, engine, pc)}});
    stream.wait();
  }
};

// ---- OpenBLAS, loaded at run time (it reads OPENBLAS_CORETYPE then) ----

struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int,
                         const float*, int, float, float*, int);
  Sgemm sgemm = nullptr;
  const char* core = "";
  OpenBlas() {
    void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
    auto threads =
        reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads"));
    if (threads) threads(get_num_threads());
    auto name =
        reinterpret_cast<char* (*)()>(dlsym(lib, "openblas_get_corename"));
    if (name) core = name();
  }
  static OpenBlas& get() {
    static OpenBlas instance;
    return instance;
  }
};
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

// ---- square GEMM ----

void BM_Matmul(benchmark::State& state, DType in_a, DType in_b) {
  const std::int64_t n = state.range(0);
  Generator g(1);
  const Tensor a = in_a == DType::U8   ? randint(0, 256, {n, n}, g, DType::U8)
                   : is_integral(in_a) ? randint(-128, 128, {n, n}, g, in_a)
                                       : randn({n, n}, g, in_a);
  const Tensor b = is_integral(in_b) ? randint(-128, 128, {n, n}, g, in_b)
                                     : randn({n, n}, g, in_b);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
  flops(state, 2.0 * n * n * n);
}
BENCHMARK_CAPTURE(BM_Matmul, f32, DType::F32, DType::F32)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, bf16, DType::BF16, DType::BF16)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, u8s8, DType::U8, DType::I8)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OneDnn(benchmark::State& state, dnnl::memory::data_type ta,
               dnnl::memory::data_type tb, dnnl::memory::data_type tc) {
  const std::int64_t n = state.range(0);
  const auto size = [&](dnnl::memory::data_type t) {
    return static_cast<std::size_t>(n * n) * dnnl::memory::data_type_size(t);
  };
  std::vector<char> a(size(ta)), b(size(tb)), c(size(tc));
  // Small random bytes: valid finite values in every type.
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = static_cast<char>((i * 7919) % 61);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<char>((i * 104729) % 59);
  std::optional<OneDnnMatmul> mm;
  try {
    mm.emplace(n, n, n, ta, tb, tc, false);
  } catch (const dnnl::error&) {
    // No kernel for these types on this CPU (bf16 needs AVX-512 here).
    state.SkipWithError("oneDNN has no matmul for these types on this CPU");
    return;
  }
  for (auto _ : state) mm->run(a.data(), b.data(), c.data());
  flops(state, 2.0 * n * n * n);
}
using dt = dnnl::memory::data_type;
BENCHMARK_CAPTURE(BM_OneDnn, f32, dt::f32, dt::f32, dt::f32)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_OneDnn, bf16, dt::bf16, dt::bf16, dt::bf16)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_OneDnn, u8s8, dt::u8, dt::s8, dt::s32)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// oneDNN's BLAS-like sgemm (what the issue calls "oneDNN sgemm").
void BM_OneDnnSgemm(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const Tensor a = randn({n, n}), b = randn({n, n});
  Tensor c = empty({n, n});
  for (auto _ : state) {
    dnnl::sgemm('N', 'N', n, n, n, 1.0f, a.const_data<float>(), n,
                b.const_data<float>(), n, 0.0f, c.data<float>(), n);
  }
  flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_OneDnnSgemm)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OpenBlas(benchmark::State& state) {
  const OpenBlas& blas = OpenBlas::get();
  if (blas.sgemm == nullptr) {
    state.SkipWithError("libopenblas.so.0 not found");
    return;
  }
  const auto n = static_cast<int>(state.range(0));
  const Tensor a = randn({n, n}), b = randn({n, n});
  Tensor c = empty({n, n});
  for (auto _ : state) {
    blas.sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f,
               a.const_data<float>(), n, b.const_data<float>(), n, 0.0f,
               c.data<float>(), n);
  }
  state.SetLabel(blas.core);
  flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_OpenBlas)
    ->Arg(512)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- decoder shapes: x (M, 4096) @ W (4096, 4096)^T, weights cold ----

constexpr std::int64_t kHidden = 4096;
// Enough weight copies to exceed the last-level cache 8 times over (32 MiB
// here): each call reads a matrix that is not cached.
constexpr std::int64_t kColdBytes = std::int64_t{256} << 20;

std::vector<Tensor> cold_weights(DType dtype) {
  const std::int64_t one = kHidden * kHidden * element_size(dtype);
  std::vector<Tensor> w;
  Generator g(3);
  for (std::int64_t i = 0; i < std::max<std::int64_t>(2, kColdBytes / one);
       ++i) {
    w.push_back(randn({kHidden, kHidden}, g, dtype));
  }
  return w;
}

void report_linear(benchmark::State& state, std::int64_t m, DType dtype) {
  flops(state, 2.0 * m * kHidden * kHidden);
  state.SetBytesProcessed(state.iterations() * kHidden * kHidden *
                          element_size(dtype));
  state.counters["tokens_per_second"] = benchmark::Counter(
      static_cast<double>(state.iterations() * m), benchmark::Counter::kIsRate);
}

void BM_LinearCold(benchmark::State& state, DType dtype) {
  const std::int64_t m = state.range(0);
  const std::vector<Tensor> w = cold_weights(dtype);
  const Tensor x = randn({m, kHidden}, DType::F32).to(dtype);
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(linear(x, w[i++ % w.size()]));
  report_linear(state, m, dtype);
}
BENCHMARK_CAPTURE(BM_LinearCold, f32, DType::F32)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_LinearCold, bf16, DType::BF16)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A prompt of a bf16 checkpoint: f32 activations against bf16 weights of
// Qwen3-0.6B's FFN up projection, under each MatmulPrecision (F32 widens
// the weights exactly, BF16 rounds the activations to bf16).
void BM_LinearBf16Weights(benchmark::State& state, MatmulPrecision precision) {
  const std::int64_t m = state.range(0), n = 3072, k = 1024;
  Generator g(5);
  const Tensor w = randn({n, k}, g, DType::BF16);
  const Tensor x = randn({m, k}, g);
  const MatmulPrecisionGuard guard(precision);
  for (auto _ : state) benchmark::DoNotOptimize(linear(x, w));
  flops(state, 2.0 * static_cast<double>(m * n * k));
}
BENCHMARK_CAPTURE(BM_LinearBf16Weights, f32, MatmulPrecision::F32)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_LinearBf16Weights, bf16, MatmulPrecision::BF16)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OneDnnLinearCold(benchmark::State& state) {
  const std::int64_t m = state.range(0);
  const std::vector<Tensor> w = cold_weights(DType::F32);
  const Tensor x = randn({m, kHidden});
  Tensor y = empty({m, kHidden});
  OneDnnMatmul mm(m, kHidden, kHidden, dt::f32, dt::f32, dt::f32, true);
  std::size_t i = 0;
  for (auto _ : state)
    mm.run(x.raw_data(), w[i++ % w.size()].raw_data(), y.data<float>());
  report_linear(state, m, DType::F32);
}
BENCHMARK(BM_OneDnnLinearCold)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_OpenBlasLinearCold(benchmark::State& state) {
  const OpenBlas& blas = OpenBlas::get();
  if (blas.sgemm == nullptr) {
    state.SkipWithError("libopenblas.so.0 not found");
    return;
  }
  const auto m = static_cast<int>(state.range(0));
  const auto k = static_cast<int>(kHidden);
  const std::vector<Tensor> w = cold_weights(DType::F32);
  const Tensor x = randn({m, kHidden});
  Tensor y = empty({m, kHidden});
  std::size_t i = 0;
  for (auto _ : state) {
    blas.sgemm(kRowMajor, kNoTrans, kTrans, m, k, k, 1.0f,
               x.const_data<float>(), k, w[i++ % w.size()].const_data<float>(),
               k, 0.0f, y.data<float>(), k);
  }
  state.SetLabel(blas.core);
  report_linear(state, m, DType::F32);
}
BENCHMARK(BM_OpenBlasLinearCold)
    ->Arg(1)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- conv2d [8, 64, 56, 56] with 64 3x3 filters, padding 1 ----

void BM_Conv2d(benchmark::State& state, DataLayout layout) {
  Generator g(4);
  const bool last = layout == DataLayout::ChannelsLast;
  const Tensor x = last ? randn({8, 56, 56, 64}, g) : randn({8, 64, 56, 56}, g);
  const Tensor w = last ? randn({3, 3, 64, 64}, g) : randn({64, 64, 3, 3}, g);
  ConvOptions o;
  o.padding = {1};
  o.layout = layout;
  for (auto _ : state) benchmark::DoNotOptimize(conv2d(x, w, {}, o));
  flops(state, 2.0 * 8 * 64 * 56 * 56 * 64 * 9);
}
BENCHMARK_CAPTURE(BM_Conv2d, nchw, DataLayout::ChannelsFirst)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv2d, nhwc, DataLayout::ChannelsLast)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- causal attention [1, 32, 2048, 128] ----

void BM_AttentionCausal(benchmark::State& state) {
  Generator g(5);
  const Tensor q = randn({1, 32, 2048, 128}, g),
               k = randn({1, 32, 2048, 128}, g),
               v = randn({1, 32, 2048, 128}, g);
  AttentionOptions o;
  o.causal = true;
  for (auto _ : state)
    benchmark::DoNotOptimize(scaled_dot_product_attention(q, k, v, o));
  // The products a causal kernel must do: half of QK^T and of PV.
  flops(state, 2.0 * 2 * 32 * 2048.0 * 2048 * 128 / 2);
}
BENCHMARK(BM_AttentionCausal)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- one decode step's attention: Qwen3-0.6B's heads (16 query heads of
// 128 sharing 8 key/value heads) against a cache of L positions, as
// CausalLM's KV cache holds it (a prefix of a longer buffer). Rated in
// bytes of keys and values read.

void BM_AttentionDecode(benchmark::State& state) {
  const std::int64_t len = state.range(0);
  Generator g(6);
  const Tensor q = randn({1, 16, 1, 128}, g);
  const Tensor k = randn({1, 8, 2 * len, 128}, g).slice(2, 0, len);
  const Tensor v = randn({1, 8, 2 * len, 128}, g).slice(2, 0, len);
  AttentionOptions o;
  o.causal = true;
  for (auto _ : state)
    benchmark::DoNotOptimize(scaled_dot_product_attention(q, k, v, o));
  state.SetBytesProcessed(state.iterations() * 2 * 8 * len * 128 * 4);
}
BENCHMARK(BM_AttentionDecode)
    ->Arg(128)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
BENCHMARK_MAIN();

// Issue 13's speed targets, tessel and ggml (the ggml of llama-cpp-python,
// bench/ggml_peer.hpp) in one binary on the same 4096 x 4096 weights:
//   BM_Dequantize/T/{tessel,ggml}/threads: blocks -> f32, GB/s of bytes
//     read + written, to hold against BM_StreamCopy (same units);
//   BM_Quantize/T/{tessel,ggml}/threads: f32 -> blocks;
//   BM_Linear/T/M/{tessel,ggml}: y = x W^T, M = 1 over cold weights (both
//     cycle through distinct copies spanning four times the last-level cache
//     (256 MiB at least), bench::cold_copies), M = 16 and 512 warm;
//   BM_DequantizeAgainstCopy/T: both dequantisations alternated with
//     passes of the copy ceiling in one process, medians of per-round
//     ratios, then with passes of the write ceiling;
//   BM_LinearAgainstRead/T: the cold M = 1 of both, alternated with passes
//     of the read ceiling in one process, as medians of per-round ratios;
//   BM_LinearInCache/T/{tessel,ggml}/1: M = 1 over one copy, which stays in
//     the last-level cache: how fast the kernels run when DRAM is not what
//     they wait on, to set against the cold M = 1;
//   BM_LinearInCacheOfWidth/T/{tessel,ggml}/K: the same weights as rows
//     of K = 1024 or 2816 (a small model's projections), where what each
//     row costs beyond its blocks shows.
// bench/compare_quant.py turns the JSON into the ratio table.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "ceilings.hpp"
#include "ggml_peer.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

constexpr std::int64_t kN = 4096, kK = 4096;

struct Type {
  const char* name;
  DType dtype;
  ggml_type ggml;
};
constexpr Type kTypes[] = {
    {"q4_0", DType::Q4_0, GGML_TYPE_Q4_0},
    {"q8_0", DType::Q8_0, GGML_TYPE_Q8_0},
    {"q4_k", DType::Q4_K, GGML_TYPE_Q4_K},
    {"q5_k", DType::Q5_K, GGML_TYPE_Q5_K},
    {"q6_k", DType::Q6_K, GGML_TYPE_Q6_K},
    {"iq4_xs", DType::IQ4_XS, GGML_TYPE_IQ4_XS},
};

const Tensor& weights_f32() {
  static const Tensor w = [] {
    Generator gen(13);
    return mul(randn({kN, kK}, gen), 0.02);
  }();
  return w;
}

void report_bytes(benchmark::State& state, std::int64_t per_iteration) {
  state.SetBytesProcessed(state.iterations() * per_iteration);
}

// Runs the benchmark body with the pool at `threads`, restoring it after.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(get_num_threads()) {
    set_num_threads(threads);
  }
  ~ThreadScope() { set_num_threads(saved_); }

 private:
  int saved_;
};

void BM_DequantizeTessel(benchmark::State& state, Type t) {
  ThreadScope scope(static_cast<int>(state.range(0)));
  const Tensor q = weights_f32().to(t.dtype);
  Tensor out = empty({kN, kK});
  for (auto _ : state) {
    out.copy_(q);
    benchmark::ClobberMemory();
  }
  report_bytes(state, q.nbytes() + out.nbytes());
}

void BM_DequantizeGgml(benchmark::State& state, Type t) {
  const auto w = bench::GgmlWeights::quantize(
      t.ggml, kN, kK, weights_f32().const_data<float>(), 2);
  std::vector<float> out(static_cast<std::size_t>(kN * kK));
  for (auto _ : state) {
    bench::ggml_dequantize(t.ggml, w.bytes.data(), out.data(), kN, kK,
                           static_cast<int>(state.range(0)));
    benchmark::ClobberMemory();
  }
  report_bytes(state, static_cast<std::int64_t>(w.bytes.size()) + kN * kK * 4);
}

void BM_QuantizeTessel(benchmark::State& state, Type t) {
  ThreadScope scope(static_cast<int>(state.range(0)));
  Tensor q = empty({kN, kK}, t.dtype);
  // Made before the timing: the first benchmark to ask makes the weights.
  const Tensor& w = weights_f32();
  for (auto _ : state) {
    q.copy_(w);
    benchmark::ClobberMemory();
  }
  report_bytes(state, kN * kK * 4);
}

void BM_QuantizeGgml(benchmark::State& state, Type t) {
  const float* f32 = weights_f32().const_data<float>();
  for (auto _ : state) {
    auto w = bench::GgmlWeights::quantize(t.ggml, kN, kK, f32,
                                          static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(w.bytes.data());
  }
  report_bytes(state, kN * kK * 4);
}

// Counters of a tessel / ggml pair alternated with `ceiling`'s loop
// (bench::alternate): `ceiling`_GBps, tessel_GBps, ggml_GBps,
// tessel_of_`ceiling`, ggml_of_`ceiling`, tessel_over_ggml.
void report_alternated(benchmark::State& state, const bench::Alternated& r,
                       const std::string& ceiling) {
  state.counters[ceiling + "_GBps"] = r.ceiling;
  state.counters["tessel_GBps"] = r.first;
  state.counters["ggml_GBps"] = r.second;
  state.counters["tessel_of_" + ceiling] = r.first_of_ceiling;
  state.counters["ggml_of_" + ceiling] = r.second_of_ceiling;
  state.counters["tessel_over_ggml"] = r.first_over_second;
}

// Both dequantisations against the copy rate beside them (bench::alternate,
// 16 rounds), in GB/s of bytes read + written; then against the write rate
// beside them, in GB/s of bytes written (write_GBps, tessel_of_write,
// ggml_of_write), the bound of a kernel that writes 3.8-7.5 bytes for each one
// it reads (docs/quantisation.md).
void BM_DequantizeAgainstCopy(benchmark::State& state, Type t) {
  const int threads = get_num_threads();
  const Tensor q = weights_f32().to(t.dtype);
  Tensor out = empty({kN, kK});
  const auto w = bench::GgmlWeights::quantize(
      t.ggml, kN, kK, weights_f32().const_data<float>(), 2);
  std::vector<float> ggml_out(static_cast<std::size_t>(kN * kK));
  const auto written = static_cast<double>(out.nbytes());
  // Each dequantisation's GB/s, crediting `read` bytes read besides the
  // output written.
  const auto pair = [&](double tessel_read, double ggml_read,
                        const std::function<double()>& ceiling) {
    return bench::alternate(
        16, ceiling,
        [&] {
          return bench::timed_gbps(tessel_read + written, [&] {
            out.copy_(q);
            benchmark::ClobberMemory();
          });
        },
        [&] {
          return bench::timed_gbps(ggml_read + written, [&] {
            bench::ggml_dequantize(t.ggml, w.bytes.data(), ggml_out.data(), kN,
                                   kK, threads);
            benchmark::ClobberMemory();
          });
        });
  };
  for (auto _ : state) {
    {
      bench::CopyCeiling copy;
      report_alternated(state,
                        pair(static_cast<double>(q.nbytes()),
                             static_cast<double>(w.bytes.size()),
                             [&] { return copy.gbps(); }),
                        "copy");
    }
    bench::WriteCeiling write;
    const bench::Alternated r = pair(0, 0, [&] { return write.gbps(); });
    state.counters["write_GBps"] = r.ceiling;
    state.counters["tessel_of_write"] = r.first_of_ceiling;
    state.counters["ggml_of_write"] = r.second_of_ceiling;
  }
}

// The 4096 x 4096 weights' first n x k values as rows of k (n = 4096 x
// 4096 / k rounded down).
std::int64_t rows_of_width(std::int64_t k) { return kN * kK / k; }
Tensor weights_of_width(std::int64_t k) {
  const std::int64_t n = rows_of_width(k);
  return weights_f32().reshape({kN * kK}).slice(0, 0, n * k).reshape({n, k});
}

// The weights of width k in t, with distinct copies spanning what the
// STREAM arrays do when `cold` (bench::cold_copies), else one.
std::vector<Tensor> weight_copies(Type t, bool cold, std::int64_t k = kK) {
  const std::int64_t n = rows_of_width(k);
  const Tensor first = weights_of_width(k).to(t.dtype);
  const auto bytes = static_cast<std::size_t>(first.nbytes());
  const int copies = cold ? bench::cold_copies(bytes) : 1;
  std::vector<Tensor> w{first};
  for (int c = 1; c < copies; ++c) {
    Tensor copy = empty({n, k}, t.dtype);
    bench::distinct_copy(
        static_cast<const std::uint8_t*>(first.raw_data()), n, bytes / n,
        static_cast<std::size_t>(dtype_traits(t.dtype).block_bytes), c,
        static_cast<std::uint8_t*>(copy.mutable_raw_data()));
    w.push_back(std::move(copy));
  }
  return w;
}

void linear_tessel(benchmark::State& state, Type t, bool cold, std::int64_t m,
                   std::int64_t k = kK) {
  const std::vector<Tensor> w = weight_copies(t, cold, k);
  const auto copies = w.size();
  Generator gen(1);
  const Tensor x = randn({m, k}, gen);
  std::size_t next = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(linear(x, w[next]).raw_data());
    next = (next + 1) % copies;
  }
  report_bytes(state, w[0].nbytes());
}

// ggml's y = x W^T for x of k columns, W the weights of width k in t, in
// distinct copies when `cold` (as weight_copies). x and W are copied in.
std::unique_ptr<bench::GgmlMatmul> ggml_matmul(Type t, bool cold,
                                               const Tensor& x) {
  const std::int64_t k = x.size(1);
  const Tensor f32 = weights_of_width(k).contiguous();
  const auto w = bench::GgmlWeights::quantize(t.ggml, rows_of_width(k), k,
                                              f32.const_data<float>(), 2);
  bench::GgmlMatmulOptions options;
  options.copies = cold ? bench::cold_copies(w.bytes.size()) : 1;
  // llama.cpp's default path repacks the types it has layouts for.
  options.repack = true;
  return std::make_unique<bench::GgmlMatmul>(
      w, x.const_data<float>(), x.size(0), get_num_threads(), options);
}

void linear_ggml(benchmark::State& state, Type t, bool cold, std::int64_t m,
                 std::int64_t k = kK) {
  Generator gen(1);
  const auto mm = ggml_matmul(t, cold, randn({m, k}, gen));
  for (auto _ : state) mm->run();
  report_bytes(state, static_cast<std::int64_t>(mm->weight_bytes()));
}

void BM_LinearTessel(benchmark::State& state, Type t) {
  linear_tessel(state, t, state.range(0) == 1, state.range(0));
}
void BM_LinearGgml(benchmark::State& state, Type t) {
  linear_ggml(state, t, state.range(0) == 1, state.range(0));
}
void BM_LinearInCacheTessel(benchmark::State& state, Type t) {
  linear_tessel(state, t, false, state.range(0));
}
void BM_LinearInCacheGgml(benchmark::State& state, Type t) {
  linear_ggml(state, t, false, state.range(0));
}
void BM_LinearInCacheOfWidthTessel(benchmark::State& state, Type t) {
  linear_tessel(state, t, false, 1, state.range(0));
}
void BM_LinearInCacheOfWidthGgml(benchmark::State& state, Type t) {
  linear_ggml(state, t, false, 1, state.range(0));
}

// M = 1 over cold weights, a pass over every copy for each, against the
// read rate beside them (bench::alternate, 24 rounds).
void BM_LinearAgainstRead(benchmark::State& state, Type t) {
  const std::vector<Tensor> w = weight_copies(t, true);
  Generator gen(1);
  const Tensor x = randn({1, kK}, gen);
  const auto mm = ggml_matmul(t, true, x);
  const bench::ReadCeiling read;
  const double tessel_bytes =
      static_cast<double>(w[0].nbytes()) * static_cast<double>(w.size());
  const double ggml_bytes = static_cast<double>(mm->weight_bytes()) *
                            static_cast<double>(mm->copies());
  for (auto _ : state) {
    report_alternated(
        state,
        bench::alternate(
            24, [&] { return read.gbps(); },
            [&] {
              return bench::timed_gbps(tessel_bytes, [&] {
                for (const Tensor& copy : w) {
                  benchmark::DoNotOptimize(linear(x, copy).raw_data());
                }
              });
            },
            [&] {
              return bench::timed_gbps(ggml_bytes, [&] {
                for (int c = 0; c < mm->copies(); ++c) mm->run();
              });
            }),
        "read");
  }
}

void register_all() {
  const int all = get_num_threads();
  for (const Type& t : kTypes) {
    const std::string n = t.name;
    for (auto [label, fn] : {std::pair{"tessel", &BM_DequantizeTessel},
                             {"ggml", &BM_DequantizeGgml}}) {
      benchmark::RegisterBenchmark(("BM_Dequantize/" + n + "/" + label).c_str(),
                                   fn, t)
          ->Arg(all)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    for (auto [label, fn] : {std::pair{"tessel", &BM_QuantizeTessel},
                             {"ggml", &BM_QuantizeGgml}}) {
      benchmark::RegisterBenchmark(("BM_Quantize/" + n + "/" + label).c_str(),
                                   fn, t)
          ->Arg(1)
          ->Arg(all)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    for (auto [label, fn] :
         {std::pair{"tessel", &BM_LinearTessel}, {"ggml", &BM_LinearGgml}}) {
      benchmark::RegisterBenchmark(("BM_Linear/" + n + "/" + label).c_str(), fn,
                                   t)
          ->Arg(1)
          ->Arg(16)
          ->Arg(512)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark(("BM_DequantizeAgainstCopy/" + n).c_str(),
                                 &BM_DequantizeAgainstCopy, t)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("BM_LinearAgainstRead/" + n).c_str(),
                                 &BM_LinearAgainstRead, t)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    for (auto [label, fn] : {std::pair{"tessel", &BM_LinearInCacheTessel},
                             {"ggml", &BM_LinearInCacheGgml}}) {
      benchmark::RegisterBenchmark(
          ("BM_LinearInCache/" + n + "/" + label).c_str(), fn, t)
          ->Arg(1)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    for (auto [label, fn] :
         {std::pair{"tessel", &BM_LinearInCacheOfWidthTessel},
          {"ggml", &BM_LinearInCacheOfWidthGgml}}) {
      benchmark::RegisterBenchmark(
          ("BM_LinearInCacheOfWidth/" + n + "/" + label).c_str(), fn, t)
          ->Arg(1024)
          ->Arg(2816)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

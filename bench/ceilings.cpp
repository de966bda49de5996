// See ceilings.hpp. Every input is random: pages of identical values can be
// merged by the hypervisor and then read from cache, which inflates
// bandwidth.
#include "ceilings.hpp"

#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "tessel/tessel.hpp"

namespace bench {

namespace {

// 32 MiB when the system does not say.
std::int64_t last_level_cache_bytes() {
  const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? l3 : std::int64_t{32} << 20;
}

}  // namespace

// Bytes a working set needs to stream from DRAM: four times the last-level
// cache the system reports, and at least 256 MiB. The Zen 4 VM reports 32
// MiB, yet two threads read 64 MiB at 45 GB/s and 96 MiB or more at 31
// (flat to 1 GiB): twice the reported cache was partly served from cache,
// which inflated the read ceiling and part-warmed the "cold" copies.
namespace {
std::int64_t dram_span_bytes() {
  return std::max<std::int64_t>(std::int64_t{256} << 20,
                                4 * last_level_cache_bytes());
}
}  // namespace

std::int64_t stream_elements() { return dram_span_bytes() / 4; }

int cold_copies(std::size_t bytes, int minimum) {
  const std::int64_t span = dram_span_bytes();
  const auto each = static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1));
  return static_cast<int>(
      std::max<std::int64_t>(minimum, (span + each - 1) / each));
}

void distinct_copy(const std::uint8_t* src, std::int64_t rows,
                   std::size_t row_bytes, std::size_t block_bytes, int c,
                   std::uint8_t* dst) {
  const std::size_t blocks = row_bytes / block_bytes;
  const std::size_t split =
      (static_cast<std::size_t>(c) / 16 % blocks) * block_bytes;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* in =
        src + static_cast<std::size_t>((r + c) % rows) * row_bytes;
    std::uint8_t* out = dst + static_cast<std::size_t>(r) * row_bytes;
    std::memcpy(out, in + split, row_bytes - split);
    std::memcpy(out + row_bytes - split, in, split);
  }
}

namespace {

// A read-only stream is bound by how many cache misses each core keeps in
// flight, not by the DRAM: loads alone (glibc's memchr: 22-24 GB/s on the
// Sapphire Rapids VM here) leave it to the hardware prefetchers, while
// asking for the lines 2 KiB ahead into L1 reads 26-30 GB/s. The ceiling is the
// best of the loops the kernels run: 256-bit loads folded by xor with each way
// of prefetching (ReadAhead) where the CPU has AVX2, memchr elsewhere. Inline
// assembly for the prefetches, as in the kernels (GCC 12 dropped _mm_prefetch
// from some functions with target attributes). kL1 or kL2 of 0: no such
// prefetch.
template <std::size_t kL1, std::size_t kL2>
__attribute__((target("avx2"))) std::uint64_t read_prefetched(
    const std::uint8_t* p, std::size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    if constexpr (kL2 > 0) {
      asm volatile("prefetcht1 %0" : : "m"(*(p + i + kL2)));
    }
    if constexpr (kL1 > 0) {
      asm volatile("prefetcht0 %0" : : "m"(*(p + i + kL1)));
    }
    a0 = _mm256_xor_si256(
        a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_xor_si256(
        a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_xor_si256(a0, a1));
  std::uint64_t h = lanes[0] ^ lanes[1] ^ lanes[2] ^ lanes[3];
  for (; i < n; ++i) h ^= p[i];
  return h;
}

}  // namespace

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double timed_gbps(double bytes, const std::function<void()>& pass) {
  const auto start = std::chrono::steady_clock::now();
  pass();
  const std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return bytes / elapsed.count() / 1e9;
}

// Random bytes below 255, which the memchr fallback scans for.
ReadCeiling::ReadCeiling()
    : bytes_(tessel::randint(0, 255, {stream_elements() * 4},
                             tessel::DType::U8)) {}

std::size_t ReadCeiling::bytes() const {
  return static_cast<std::size_t>(bytes_.nbytes());
}

std::uint64_t ReadCeiling::pass(ReadAhead how) const {
  const auto* p = static_cast<const std::uint8_t*>(bytes_.raw_data());
  const bool avx2 = __builtin_cpu_supports("avx2");
  std::atomic<std::uint64_t> folded{0};
  tessel::parallel_for(
      0, static_cast<std::int64_t>(bytes()), 1 << 22,
      [&](std::int64_t lo, std::int64_t hi) {
        const std::uint8_t* q = p + lo;
        const auto len = static_cast<std::size_t>(hi - lo);
        std::uint64_t h = 0;
        if (!avx2) {
          h = reinterpret_cast<std::uintptr_t>(std::memchr(q, 255, len));
        } else if (how == ReadAhead::kL1) {
          h = read_prefetched<2048, 0>(q, len);
        } else if (how == ReadAhead::kL2) {
          h = read_prefetched<0, 12288>(q, len);
        } else {
          h = read_prefetched<1536, 4096>(q, len);
        }
        folded.fetch_xor(h, std::memory_order_relaxed);
      });
  return folded.load();
}

double ReadCeiling::gbps(ReadAhead how) const {
  return timed_gbps(static_cast<double>(bytes()),
                    [&] { benchmark::DoNotOptimize(pass(how)); });
}

ReadCeiling::Fastest ReadCeiling::fastest_of(int passes_each) const {
  Fastest best{ReadAhead::kL1, 0.0};
  for (const ReadAhead how : kReadAheads) {
    for (int i = 0; i < passes_each; ++i) {
      if (const double g = gbps(how); g > best.gbps) best = {how, g};
    }
  }
  return best;
}

double ReadCeiling::gbps() const { return fastest_of(1).gbps; }

ReadAhead ReadCeiling::fastest() const { return fastest_of(2).how; }

// The destination written once here: no page faults in the timing.
CopyCeiling::CopyCeiling()
    : from_(tessel::randn({stream_elements()})),
      to_(tessel::zeros({stream_elements()})) {}

std::size_t CopyCeiling::bytes() const {
  return 2 * static_cast<std::size_t>(from_.nbytes());
}

void CopyCeiling::pass() {
  const float* x = from_.const_data<float>();
  float* y = to_.data<float>();
  tessel::parallel_for(
      0, from_.numel(), 1 << 16, [&](std::int64_t lo, std::int64_t hi) {
        std::memcpy(y + lo, x + lo,
                    static_cast<std::size_t>(hi - lo) * sizeof(float));
      });
  benchmark::ClobberMemory();
}

double CopyCeiling::gbps() {
  return timed_gbps(static_cast<double>(bytes()), [&] { pass(); });
}

WriteCeiling::WriteCeiling() : to_(tessel::zeros({stream_elements()})) {}

std::size_t WriteCeiling::bytes() const {
  return static_cast<std::size_t>(to_.nbytes());
}

// A new nonzero byte each pass: zeros written over zeros measured twice
// the rate of any other bytes on the Zen 4 VM.
void WriteCeiling::pass() {
  auto* y = static_cast<unsigned char*>(to_.mutable_raw_data());
  const auto n = static_cast<std::int64_t>(bytes());
  fill_ = fill_ % 255 + 1;
  tessel::parallel_for(0, n, 1 << 18, [&](std::int64_t lo, std::int64_t hi) {
    std::memset(y + lo, fill_, static_cast<std::size_t>(hi - lo));
  });
  benchmark::ClobberMemory();
}

double WriteCeiling::gbps() {
  return timed_gbps(static_cast<double>(bytes()), [&] { pass(); });
}

Alternated alternate(int rounds, const std::function<double()>& ceiling,
                     const std::function<double()>& first,
                     const std::function<double()>& second) {
  first();
  if (second) second();
  std::vector<double> ceilings, firsts, seconds, first_of, second_of, ratio;
  double before = ceiling();
  for (int round = 0; round < rounds; ++round) {
    const double a = first();
    const double middle = ceiling();
    ceilings.push_back(middle);
    firsts.push_back(a);
    first_of.push_back(a / ((before + middle) / 2));
    before = middle;
    if (second) {
      const double b = second();
      const double after = ceiling();
      ceilings.push_back(after);
      seconds.push_back(b);
      second_of.push_back(b / ((middle + after) / 2));
      ratio.push_back(a / b);
      before = after;
    }
  }
  return {median(ceilings), median(firsts),    median(seconds),
          median(first_of), median(second_of), median(ratio)};
}

}  // namespace bench

namespace {

using namespace tessel;
const std::int64_t kStreamN = bench::stream_elements();

void bytes(benchmark::State& state, std::int64_t per_iteration) {
  state.SetBytesProcessed(state.iterations() * per_iteration);
}

// ---- bandwidth: plain loops, split over the same pool ----

void BM_StreamCopy(benchmark::State& state) {
  bench::CopyCeiling copy;
  for (auto _ : state) copy.pass();
  bytes(state, static_cast<std::int64_t>(copy.bytes()));
}
BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamWrite(benchmark::State& state) {
  bench::WriteCeiling write;
  for (auto _ : state) write.pass();
  bytes(state, static_cast<std::int64_t>(write.bytes()));
}
BENCHMARK(BM_StreamWrite)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamAdd(benchmark::State& state) {
  const Tensor a = randn({kStreamN});
  const Tensor b = randn({kStreamN});
  Tensor c = zeros({kStreamN});
  const float* x = a.const_data<float>();
  const float* y = b.const_data<float>();
  float* z = c.data<float>();
  for (auto _ : state) {
    parallel_for(0, kStreamN, 1 << 16, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i) z[i] = x[i] + y[i];
    });
    benchmark::ClobberMemory();
  }
  bytes(state, 3 * kStreamN * 4);
}
BENCHMARK(BM_StreamAdd)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamRead(benchmark::State& state) {
  const bench::ReadCeiling read;
  const bench::ReadAhead how = read.fastest();
  for (auto _ : state) benchmark::DoNotOptimize(read.pass(how));
  state.SetLabel(read_ahead_name(how));
  bytes(state, static_cast<std::int64_t>(read.bytes()));
}
BENCHMARK(BM_StreamRead)->Unit(benchmark::kMillisecond)->UseRealTime();

// Each way of asking for the lines on its own (the ceiling is the best).
void BM_StreamReadEachWay(benchmark::State& state, bench::ReadAhead how) {
  const bench::ReadCeiling read;
  for (auto _ : state) benchmark::DoNotOptimize(read.pass(how));
  bytes(state, static_cast<std::int64_t>(read.bytes()));
}
BENCHMARK_CAPTURE(BM_StreamReadEachWay, l1, bench::ReadAhead::kL1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_StreamReadEachWay, l2, bench::ReadAhead::kL2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_StreamReadEachWay, l2_and_l1, bench::ReadAhead::kL2AndL1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- arithmetic: independent dependency chains, enough to cover the
// latency of every pipe (16 chains x 4-6 cycles over 2 pipes) ----

constexpr int kChains = 16;
constexpr std::int64_t kSteps = 1 << 20;

__attribute__((target("avx512f"))) float fma_avx512(std::int64_t steps) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (std::int64_t i = 0; i < steps; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, acc[j]);
  float out[16];  // (GCC 12 warns falsely inside _mm512_reduce_add_ps)
  _mm512_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx2,fma"))) float fma_avx2(std::int64_t steps) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm256_set1_ps(static_cast<float>(j));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (std::int64_t i = 0; i < steps; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  }
  float out[8];
  __m256 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_ps(s, acc[j]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f,avx512bf16"))) float dpbf16(std::int64_t steps) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j)
    acc[j] = _mm512_set1_ps(static_cast<float>(j));
  const __m512bh a =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
  const __m512bh b =
      _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
  for (std::int64_t i = 0; i < steps; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
  }
  __m512 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_ps(s, acc[j]);
  float out[16];  // (GCC 12 warns falsely inside _mm512_reduce_add_ps)
  _mm512_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f,avx512vnni"))) int dpbusd(std::int64_t steps) {
  __m512i acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_epi32(j);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (std::int64_t i = 0; i < steps; ++i) {
    for (int j = 0; j < kChains; ++j)
      acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
  }
  __m512i s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm512_add_epi32(s, acc[j]);
  int out[16];
  _mm512_storeu_si512(out, s);
  return out[0];
}

// Runs `kernel` on every pool thread; operations per kernel step and lane
// count give the rate.
template <class Kernel>
void peak(benchmark::State& state, Kernel kernel, double ops_per_step) {
  const int threads = get_num_threads();
  for (auto _ : state) {
    float sink = 0;
    parallel_for(0, threads, 1, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t t = lo; t < hi; ++t)
        benchmark::DoNotOptimize(kernel(kSteps));
    });
    benchmark::DoNotOptimize(sink);
  }
  state.SetItemsProcessed(
      static_cast<std::int64_t>(static_cast<double>(state.iterations()) *
                                threads * kSteps * kChains * ops_per_step));
}

void BM_PeakFmaF32(benchmark::State& state) {
  if (__builtin_cpu_supports("avx512f")) {
    peak(state, fma_avx512, 2.0 * 16);  // 16 lanes, 2 flops per FMA
    state.SetLabel("avx512 vfmadd");
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    peak(state, fma_avx2, 2.0 * 8);
    state.SetLabel("avx2 vfmadd");
  } else {
    state.SkipWithError("no FMA instructions on this CPU");
  }
}
BENCHMARK(BM_PeakFmaF32)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PeakDpBf16(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512bf16")) {
    state.SkipWithError("no AVX512-BF16 on this CPU");
    return;
  }
  peak(state, dpbf16, 2.0 * 32);  // 32 bf16 pairs per instruction
  state.SetLabel("vdpbf16ps");
}
BENCHMARK(BM_PeakDpBf16)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PeakVnniU8S8(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512vnni")) {
    state.SkipWithError("no AVX512-VNNI on this CPU");
    return;
  }
  peak(state, dpbusd, 2.0 * 64);  // 64 u8 x s8 products per instruction
  state.SetLabel("vpdpbusd");
}
BENCHMARK(BM_PeakVnniU8S8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

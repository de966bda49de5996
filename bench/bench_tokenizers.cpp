// Tokeniser encoding speed, one thread (bench/compare_tokenizers.py runs
// it beside the `tokenizers` package): a whole document in one call, and
// the same text line by line. The tokenizer.json and the text come from
// TESSEL_BENCH_TOKENIZER and TESSEL_BENCH_CORPUS.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "tessel/tessel.hpp"

namespace {

struct Fixture {
  std::optional<tessel::Tokenizer> tokenizer;
  std::string document;
  std::vector<std::string> lines;
};

const Fixture* fixture() {
  static const Fixture* f = [] {
    const char* tok = std::getenv("TESSEL_BENCH_TOKENIZER");
    const char* text = std::getenv("TESSEL_BENCH_CORPUS");
    if (tok == nullptr || text == nullptr)
      return static_cast<Fixture*>(nullptr);
    auto* out = new Fixture;
    out->tokenizer.emplace(tessel::load_hf_tokenizer(tok));
    std::ifstream in(text, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    out->document = buffer.str();
    // Lines as compare_tokenizers.py cuts them: at every '\n', each with
    // a '\n' after it (so a final newline gives one line "\n").
    std::size_t start = 0;
    for (std::size_t nl;
         (nl = out->document.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      out->lines.push_back(out->document.substr(start, nl - start) + "\n");
    }
    out->lines.push_back(out->document.substr(start) + "\n");
    return out;
  }();
  return f;
}

void BM_EncodeDocument(benchmark::State& state) {
  const Fixture* f = fixture();
  if (f == nullptr) {
    state.SkipWithError("set TESSEL_BENCH_TOKENIZER and TESSEL_BENCH_CORPUS");
    return;
  }
  std::size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = f->tokenizer->encode(f->document, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * f->document.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_EncodeDocument)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EncodeLines(benchmark::State& state) {
  const Fixture* f = fixture();
  if (f == nullptr) {
    state.SkipWithError("set TESSEL_BENCH_TOKENIZER and TESSEL_BENCH_CORPUS");
    return;
  }
  std::size_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const std::string& line : f->lines) {
      const auto ids = f->tokenizer->encode(line, false);
      tokens += ids.size();
      benchmark::DoNotOptimize(ids.data());
    }
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * f->document.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_EncodeLines)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

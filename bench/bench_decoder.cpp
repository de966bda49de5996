// Whole-model speed (issue 14): prompt processing and decode tokens per
// second of a GGUF or HF checkpoint named by TESSEL_BENCH_MODEL, as
// bench/compare_models.py runs it beside llama.cpp on the same file.
//   BM_Prompt/N   a fresh KV cache, then N prompt tokens in one forward
//                 (the next token's logits only, as llama.cpp computes)
//   BM_Decode/N   N single-token steps after a 16-token prompt (or
//                 TESSEL_BENCH_DECODE_AFTER tokens: decode at a long
//                 context, where the KV cache is read as much as weights)
//   BM_DecodeAgainstRead  decode steps alternated with passes of the DRAM
//                 read ceiling in one process: weight GB/s a token as a
//                 fraction of the read rate beside it (the binary also
//                 carries ceilings.cpp's BM_Stream* and BM_Peak*)
//   BM_DecodeProducts/N  N steps of a decode step's weight products
//                 alone, over the model's own (mapped) weights: the q/k/v,
//                 o, gate/up and down products of every layer and the
//                 head, on a fixed one-token activation. Against
//                 BM_Decode, what the rest of a step costs
//   BM_Load       CausalLM::load of the file (its pages cached): the
//                 header, the configuration and the module tree, no weight
//   BM_Header     load_gguf alone (what `tessel inspect` reads), for scale
//   BM_LoadAndFirstToken  load, then one token: mapping every weight page
//                 (the file in the page cache), what llama.cpp's load does;
//                 its counters give the process's resident memory added by
//                 the load and by the first token, in % of the model's
//                 tensor bytes (issue 14: weights are the file)
// items_per_second is tokens per second. TESSEL_BENCH_NO_MMAP=1 loads the
// weights with MapMode::Resident (read into 2 MiB pages) instead of mapping
// the file; TESSEL_BENCH_MATMUL_PRECISION=bf16 runs with
// MatmulPrecision::BF16 (`--matmul-precision bf16`);
// TESSEL_BENCH_CACHE_TYPE=f16|bf16|q8_0|... keeps the KV cache in 16 bits
// or a block type (`--cache-type`).
//
// `bench_decoder --write-random-qwen3 PATH SHAPE` writes the random Qwen3
// f32 GGUF the comparison starts from (SHAPE 160m: hidden 1024, 8 layers,
// 16/8 heads, FFN 2816, vocab 32000; 0.6b: Qwen3-0.6B's shape), with
// llama.cpp's "no_vocab" tokenizer so that llama.cpp loads it too.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "ceilings.hpp"

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

Tensor token_ids(std::int64_t n, std::int64_t vocab) {
  Generator g(7);
  return randint(0, vocab, {1, n}, g, DType::I64);
}

// One single-token forward: what first touches every weight page.
void first_token(const CausalLM& lm) {
  KVCache cache(lm.config(), 1, 1);
  benchmark::DoNotOptimize(
      lm.next_token_logits(token_ids(1, lm.config().vocab_size), &cache));
}

// The model, loaded once and run once untimed. Loading maps the file and
// reads no weight, so the first forward pays a page fault for each page of
// weights (llama.cpp maps the file with MAP_POPULATE while loading), and
// the first touch of its buffers and oneDNN's generation of its kernels:
// the first 128-token prompt of a 2.4 GB f32 file took 572 ms against 376
// after it. BM_Prompt and BM_Decode time both runtimes past that;
// BM_LoadAndFirstToken times what tessel pays instead, set beside
// llama.cpp's load by compare_models.py.
MapMode load_mode() {
  const char* no_mmap = std::getenv("TESSEL_BENCH_NO_MMAP");
  return no_mmap != nullptr && std::string(no_mmap) == "1" ? MapMode::Resident
                                                           : MapMode::ReadOnly;
}

DType cache_dtype() {
  const char* type = std::getenv("TESSEL_BENCH_CACHE_TYPE");
  return type != nullptr ? parse_dtype(type) : DType::F32;
}

const CausalLM* model() {
  static const CausalLM* lm = []() -> const CausalLM* {
    const char* path = std::getenv("TESSEL_BENCH_MODEL");
    if (path == nullptr) return nullptr;
    const CausalLM* loaded = CausalLM::load(path, load_mode()).release();
    first_token(*loaded);
    return loaded;
  }();
  return lm;
}

// model(), or null with `state` skipped when TESSEL_BENCH_MODEL is unset.
const CausalLM* model_or_skip(benchmark::State& state) {
  const CausalLM* lm = model();
  if (lm == nullptr) state.SkipWithError("set TESSEL_BENCH_MODEL");
  return lm;
}

void BM_Prompt(benchmark::State& state) {
  const CausalLM* lm = model_or_skip(state);
  if (lm == nullptr) return;
  const std::int64_t n = state.range(0);
  const Tensor ids = token_ids(n, lm->config().vocab_size);
  for (auto _ : state) {
    KVCache cache(lm->config(), 1, n, cache_dtype());
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(lm->next_token_logits(ids, &cache));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// Prompt tokens before the timed steps: TESSEL_BENCH_DECODE_AFTER, else 16.
std::int64_t decode_prompt() {
  const char* after = std::getenv("TESSEL_BENCH_DECODE_AFTER");
  return after != nullptr ? std::atoll(after) : 16;
}

// Seconds of the single-token steps over ids' tokens past `prompt`, after
// a prefill of the first `prompt` (untimed) into a fresh cache.
double decode_seconds(const CausalLM& lm, const Tensor& ids,
                      std::int64_t prompt) {
  const std::int64_t end = ids.size(1);
  KVCache cache(lm.config(), 1, end, cache_dtype());
  lm.next_token_logits(ids.slice(1, 0, prompt), &cache);
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = prompt; i < end; ++i) {
    benchmark::DoNotOptimize(
        lm.next_token_logits(ids.slice(1, i, i + 1), &cache));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void BM_Decode(benchmark::State& state) {
  const CausalLM* lm = model_or_skip(state);
  if (lm == nullptr) return;
  const std::int64_t n = state.range(0), prompt = decode_prompt();
  const Tensor ids = token_ids(prompt + n, lm->config().vocab_size);
  for (auto _ : state) {
    state.SetIterationTime(decode_seconds(*lm, ids, prompt));
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// Bytes of every weight a decode step streams: all but the embedding
// table, unless the head is tied to it (an untied head leaves the table to
// one row a token).
double streamed_weight_bytes(const CausalLM& lm) {
  double bytes = 0;
  for (const Tensor& t : lm.state_tensors()) {
    if (lm.config().tie_word_embeddings ||
        t.name() != "model.embed_tokens.weight") {
      bytes += static_cast<double>(t.nbytes());
    }
  }
  return bytes;
}

// Decode in weight bytes a token against the read rate beside it
// (bench::alternate, 12 rounds of 32 steps after BM_Decode's prompt, whose
// prefill falls between a round's first read and its steps). Counters:
// medians of tokens/s, of weight GB/s, of the read rate and of the
// fraction.
void BM_DecodeAgainstRead(benchmark::State& state) {
  const CausalLM* lm = model_or_skip(state);
  if (lm == nullptr) return;
  constexpr std::int64_t kSteps = 32;
  const std::int64_t prompt = decode_prompt();
  const double weight_bytes = streamed_weight_bytes(*lm);
  const bench::ReadCeiling read;
  const Tensor ids = token_ids(prompt + kSteps, lm->config().vocab_size);
  for (auto _ : state) {
    const bench::Alternated r = bench::alternate(
        12, [&] { return read.gbps(); },
        [&] {
          return kSteps * weight_bytes / decode_seconds(*lm, ids, prompt) / 1e9;
        });
    state.counters["weight_GBps"] = r.first;
    state.counters["tokens_per_s"] = r.first * 1e9 / weight_bytes;
    state.counters["read_GBps"] = r.ceiling;
    state.counters["of_read"] = r.first_of_ceiling;
  }
}

// The weight products of one decode step and nothing else, in the order
// the decoder runs them, with the thread team held: as the decoder holds
// it when every product runs on tessel's own kernels
// (Backend::run_decode_step), which is so for every type the comparison's
// files hold. The activations are the same row each time (values do not
// change a product's cost).
void decode_products(const CausalLM& lm, const Tensor& row) {
  with_team_held([&] {
    for (const auto& layer : lm.model.layers) {
      const nn::Attention& a = layer->self_attn;
      const nn::Linear* qkv[] = {&a.q_proj, &a.k_proj, &a.v_proj};
      const std::vector<Tensor> h = nn::forward_shared(qkv, row);
      benchmark::DoNotOptimize(
          a.o_proj.forward(h[0].reshape({1, 1, a.heads * a.head_dim})));
      const nn::SwiGLUMLP& mlp = layer->mlp;
      const nn::Linear* gate_up[] = {&mlp.gate_proj, &mlp.up_proj};
      const std::vector<Tensor> g = nn::forward_shared(gate_up, row);
      benchmark::DoNotOptimize(mlp.down_proj.forward(g[0]));
    }
    benchmark::DoNotOptimize(linear(row, lm.lm_head.value()));
  });
}

void BM_DecodeProducts(benchmark::State& state) {
  const CausalLM* lm = model_or_skip(state);
  if (lm == nullptr) return;
  const std::int64_t n = state.range(0);
  const Tensor row = randn({1, 1, lm->config().hidden_size});
  decode_products(*lm, row);
  // Over the timed steps' own seconds: a rate counter divides CPU time.
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < n; ++i) decode_products(*lm, row);
    const double step_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    state.SetIterationTime(step_seconds);
    seconds += step_seconds;
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["weight_GBps"] = static_cast<double>(state.iterations() * n) *
                                  streamed_weight_bytes(*lm) / seconds / 1e9;
}

void BM_Load(benchmark::State& state) {
  const char* path = std::getenv("TESSEL_BENCH_MODEL");
  if (path == nullptr) {
    state.SkipWithError("set TESSEL_BENCH_MODEL");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(CausalLM::load(path, load_mode()));
  }
}

void BM_Header(benchmark::State& state) {
  const char* path = std::getenv("TESSEL_BENCH_MODEL");
  if (path == nullptr) {
    state.SkipWithError("set TESSEL_BENCH_MODEL");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(load_gguf(path));
}

// Resident bytes of this process (/proc/self/statm's second field).
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

// A fresh load and one token, each iteration in a new mapping of the file
// (its pages in the page cache, as after any earlier run). The resident
// memory counters are the last iteration's, past the first one's one-time
// costs (oneDNN's kernels, the pool's stacks).
void BM_LoadAndFirstToken(benchmark::State& state) {
  const char* path = std::getenv("TESSEL_BENCH_MODEL");
  if (path == nullptr) {
    state.SkipWithError("set TESSEL_BENCH_MODEL");
    return;
  }
  double tensor_bytes = 0, load_added = 0, both_added = 0;
  for (auto _ : state) {
    const std::int64_t before = resident_bytes();
    const auto start = std::chrono::steady_clock::now();
    const std::unique_ptr<CausalLM> lm = CausalLM::load(path, load_mode());
    const std::int64_t loaded = resident_bytes();  // microseconds of 10s of ms
    first_token(*lm);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    load_added = static_cast<double>(loaded - before);
    both_added = static_cast<double>(resident_bytes() - before);
    if (tensor_bytes == 0) {
      for (const Tensor& t : lm->state_tensors()) {
        tensor_bytes += static_cast<double>(t.nbytes());
      }
    }
  }
  if (tensor_bytes > 0) {
    state.counters["tensor_MB"] = tensor_bytes / 1e6;
    state.counters["resident_load_pct"] = 100 * load_added / tensor_bytes;
    state.counters["resident_load_and_token_pct"] =
        100 * both_added / tensor_bytes;
  }
}

BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadAndFirstToken)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Header)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Prompt)->Arg(128)->Arg(512)->UseManualTime()->Unit(
    benchmark::kMillisecond);
BENCHMARK(BM_Decode)->Arg(64)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeProducts)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeAgainstRead)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int write_random_qwen3(const char* path, const std::string& shape) {
  DecoderConfig c;
  c.model_type = "qwen3";
  c.hidden_size = 1024;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 8;
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-6;
  c.rope_theta = 1e6;
  if (shape == "160m") {
    c.num_hidden_layers = 8;
    c.intermediate_size = 2816;
    c.head_dim = 64;
    c.vocab_size = 32000;
    c.tie_word_embeddings = false;
  } else if (shape == "0.6b") {
    c.num_hidden_layers = 28;
    c.intermediate_size = 3072;
    c.head_dim = 128;
    c.vocab_size = 151936;
    c.tie_word_embeddings = true;
  } else {
    std::fprintf(stderr, "unknown shape %s (160m, 0.6b)\n", shape.c_str());
    return 2;
  }
  const CausalLM lm(c, 1);
  std::vector<Tensor> tensors;
  for (Tensor t : lm.state_tensors()) {
    Tensor view(t.storage(), t.shape(), t.strides(), t.storage_offset(),
                t.dtype());
    view.set_name(*gguf_tensor_name(t.name()));
    tensors.push_back(view);
  }
  auto metadata = gguf_decoder_metadata(c);
  metadata.emplace_back("qwen3.vocab_size",
                        GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                                  static_cast<std::uint64_t>(c.vocab_size)});
  metadata.emplace_back("tokenizer.ggml.model",
                        GgufValue{GgufValue::Type::String, GgufValue::Type::U8,
                                  std::string("no_vocab")});
  save_gguf(path, metadata, tensors);
  std::printf("%s: %lld parameters\n", path,
              static_cast<long long>(lm.num_parameters()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-random-qwen3") == 0) {
    return write_random_qwen3(argv[2], argv[3]);
  }
  if (const char* p = std::getenv("TESSEL_BENCH_MATMUL_PRECISION")) {
    set_matmul_precision(parse_matmul_precision(p));
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

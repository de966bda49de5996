// One training step of the decoder `tessel train` uses (forward,
// cross-entropy, backward, gradient clipping, AdamW), in tokens per second.
// bench/compare_train.py runs the same step in PyTorch eager and prints
// the ratio.
#include <benchmark/benchmark.h>

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

// The default model of `tessel train` and the addition task's batch.
void BM_TrainStep(benchmark::State& st) {
  DecoderConfig c;
  c.num_hidden_layers = st.range(0);
  c.max_position_embeddings = 13;
  c.rope_theta = 10.0;
  CausalLM lm(c, 0);
  AdamW optimizer(lm.parameters(), {.lr = 1e-3, .beta2 = 0.95});
  const std::int64_t batch = st.range(1), seq = 12;
  Generator g(1);
  const Tensor ids = randint(0, c.vocab_size, {batch, seq}, g);
  const Tensor targets = randint(0, c.vocab_size, {batch, seq}, g);
  for (auto _ : st) {
    const Variable loss = cross_entropy(lm.forward(ids), targets);
    loss.backward();
    clip_grad_norm(lm.parameters(), 1.0);
    optimizer.step();
    optimizer.zero_grad();
    benchmark::DoNotOptimize(loss.value().raw_data());
  }
  st.counters["tokens_per_second"] =
      benchmark::Counter(static_cast<double>(batch * seq),
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TrainStep)
    ->Args({3, 128})
    ->Args({3, 32})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

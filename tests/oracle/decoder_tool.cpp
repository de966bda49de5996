// Runs a decoder training step for the PyTorch comparison
// (test_torch_decoder.py): builds a CausalLM from a config.json with
// random weights, runs forward, cross-entropy, backward and one AdamW
// step, and writes everything as safetensors:
//   DIR/config.json, DIR/model.safetensors   the initial model
//   DIR/step.safetensors   ids, targets, logits, loss, grad.<name>,
//                          after.<name> (the weights after AdamW)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  using namespace tessel;
  if (argc != 4) {
    std::fprintf(stderr, "usage: decoder_tool CONFIG.json OUT_DIR SEED\n");
    return 2;
  }
  const DecoderConfig config = DecoderConfig::load(argv[1]);
  const std::filesystem::path dir = argv[2];
  const std::uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  // Larger than the default initialisation, so that attention weights are
  // far from uniform and every path carries signal.
  DecoderConfig c = config;
  c.initializer_range = 0.2;
  CausalLM lm(c, seed);
  lm.save(dir);

  Generator g(seed + 1);
  const std::int64_t batch = 3, seq = 7;
  Tensor ids = randint(0, c.vocab_size, {batch, seq}, g, DType::I64);
  Tensor targets = randint(0, c.vocab_size, {batch, seq}, g, DType::I64);
  targets.at<std::int64_t>({0, 0}) = -100;  // ignored
  ids.set_name("ids");
  targets.set_name("targets");

  Variable logits = lm.forward(ids);
  Variable loss = cross_entropy(logits, targets);
  loss.backward();
  std::vector<Tensor> out{ids, targets};
  Tensor l = logits.value();
  l.set_name("logits");
  Tensor lv = loss.value();
  lv.set_name("loss");
  out.push_back(l);
  out.push_back(lv);
  for (const auto& [name, p] : lm.named_parameters()) {
    Tensor grad = p.grad();
    grad.set_name("grad." + name);
    out.push_back(grad);
  }
  AdamW optimizer(lm.parameters(), {.lr = 1e-2,
                                    .beta1 = 0.8,
                                    .beta2 = 0.95,
                                    .eps = 1e-6,
                                    .weight_decay = 0.1});
  optimizer.step();
  for (const auto& [name, p] : lm.named_parameters()) {
    Tensor after = p.value().clone();
    after.set_name("after." + name);
    out.push_back(after);
  }
  save_safetensors(dir / "step.safetensors", out);
  return 0;
}

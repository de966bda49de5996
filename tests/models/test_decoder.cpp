#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

DecoderConfig tiny(const std::string& type = "qwen3", bool tied = true) {
  DecoderConfig c;
  c.model_type = type;
  c.vocab_size = 20;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 4;
  c.max_position_embeddings = 12;
  c.tie_word_embeddings = tied;
  c.initializer_range = 0.3;
  return c;
}

fs::path temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() /
                     ("tessel_models_" + std::to_string(::getpid()) + name);
  fs::create_directories(p);
  return p;
}

TEST(Decoder, ParametersCarryCanonicalNames) {
  const CausalLM lm(tiny());
  std::set<std::string> names;
  for (const auto& [name, p] : lm.named_parameters()) names.insert(name);
  for (const char* expected : {
           "model.embed_tokens.weight",
           "model.layers.0.input_layernorm.weight",
           "model.layers.0.self_attn.q_proj.weight",
           "model.layers.0.self_attn.k_proj.weight",
           "model.layers.0.self_attn.v_proj.weight",
           "model.layers.0.self_attn.o_proj.weight",
           "model.layers.0.self_attn.q_norm.weight",
           "model.layers.0.self_attn.k_norm.weight",
           "model.layers.0.post_attention_layernorm.weight",
           "model.layers.1.mlp.gate_proj.weight",
           "model.layers.1.mlp.up_proj.weight",
           "model.layers.1.mlp.down_proj.weight",
           "model.norm.weight",
       }) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }
  EXPECT_EQ(names.size(), 1u + 2u * 11u + 1u);  // tied: no lm_head.weight
  EXPECT_EQ(lm.named_parameters().back().first, "model.norm.weight");

  const CausalLM llama(tiny("llama", /*tied=*/false));
  const auto named = llama.named_parameters();
  EXPECT_EQ(named.back().first, "lm_head.weight");  // last, as in HF files
  for (const auto& [name, p] : named) {
    EXPECT_EQ(name.find("q_norm"), std::string::npos);
  }
  EXPECT_EQ(llama.lm_head.shape(), (Shape{20, 16}));
}

TEST(Decoder, KVCacheDecodingMatchesTheFullForward) {
  for (const char* type : {"qwen3", "llama"}) {
    const CausalLM lm(tiny(type, false), 3);
    Generator g(5);
    const Tensor ids = randint(0, 20, {2, 7}, g);
    NoGradGuard no_grad;
    const Tensor full = lm.forward(ids).value();
    KVCache cache(lm.config(), 2, 12);
    // A prefill of 3 positions, then one at a time.
    Tensor parts = lm.forward(ids.slice(1, 0, 3), &cache).value();
    for (std::int64_t i = 3; i < 7; ++i) {
      parts = concat(
          {parts, lm.forward(ids.slice(1, i, i + 1), &cache).value()}, 1);
    }
    EXPECT_EQ(cache.length(), 7);
    EXPECT_TRUE(allclose(parts, full, 1e-5, 1e-5)) << type;
  }
}

// A random model's matrices in `dtype` (the embedding too, as GGUF files
// keep it).
class MatricesIn final : public WeightSource {
 public:
  MatricesIn(std::unique_ptr<WeightSource> inner, DType dtype)
      : inner_(std::move(inner)), dtype_(dtype) {}
  Tensor take(const std::string& name, const Shape& shape,
              WeightInit init) override {
    const Tensor t = inner_->take(name, shape, init);
    return t.rank() == 2 ? t.to(dtype_) : t;
  }
  bool contains(const std::string& name) const override {
    return inner_->contains(name);
  }
  std::vector<std::string> untaken() const override {
    return inner_->untaken();
  }

 private:
  std::unique_ptr<WeightSource> inner_;
  DType dtype_;
};

// Single-token steps on two threads hold the team (Backend::run_decode_step),
// which may not change a bit of what one thread computes (Q4_1 takes the
// free team). Products this size split over both threads.
TEST(Decoder, SingleTokenStepsGiveOneThreadsLogitsWithTheTeamHeld) {
  DecoderConfig c = tiny();
  c.vocab_size = 600;
  c.hidden_size = 256;
  c.intermediate_size = 512;
  c.head_dim = 64;
  c.max_position_embeddings = 16;
  c.initializer_range = 0.05;
  for (const DType dtype : {DType::F32, DType::BF16, DType::Q4_0, DType::Q4_K,
                            DType::Q6_K, DType::Q4_1}) {
    MatricesIn source(random_weights(11, c.initializer_range), dtype);
    const CausalLM lm(c, source);
    const auto steps = [&](int threads) {
      set_num_threads(threads);
      KVCache cache(lm.config(), 1, 8);
      Tensor logits = lm.next_token_logits(
          from_vector(std::vector<std::int64_t>{3, 1, 4}, {1, 3}), &cache);
      std::vector<Tensor> out{logits};
      for (std::int64_t t = 0; t < 5; ++t) {
        out.push_back(lm.next_token_logits(
            full({1, 1}, (t * 7 + 2) % 600, DType::I64), &cache));
      }
      return concat(out, 0);
    };
    const Tensor one = steps(1);
    const Tensor two = steps(2);
    ASSERT_EQ(one.shape(), (Shape{6, 600}));
    EXPECT_EQ(std::memcmp(one.contiguous().raw_data(),
                          two.contiguous().raw_data(), one.nbytes()),
              0)
        << dtype_name(dtype);
    EXPECT_GT(max(abs(one)).item<float>(), 0.0f) << dtype_name(dtype);
  }
}

TEST(Decoder, KVCacheIn16Bits) {
  // Kept in f16 or bf16, the cache stores each key and value rounded once
  // (to nearest even) and attention computes in f32 on those values: the
  // logits move by about that rounding (2^-11 relative for f16, 2^-8 for
  // bf16; measured here 3.3e-4 and 3.1e-3 of the largest |logit|), and
  // they do move.
  const CausalLM lm(tiny("qwen3", false), 3);
  Generator g(5);
  const Tensor ids = randint(0, 20, {2, 7}, g);
  NoGradGuard no_grad;
  KVCache exact(lm.config(), 2, 12);
  const Tensor want = lm.forward(ids, &exact).value();
  for (const auto& [dtype, bound] :
       {std::pair{DType::F16, 4e-3}, std::pair{DType::BF16, 3e-2}}) {
    KVCache cache(lm.config(), 2, 12, dtype);
    EXPECT_EQ(cache.dtype(), dtype);
    Tensor got = lm.forward(ids.slice(1, 0, 3), &cache).value();
    for (std::int64_t i = 3; i < 7; ++i) {
      got =
          concat({got, lm.forward(ids.slice(1, i, i + 1), &cache).value()}, 1);
    }
    EXPECT_EQ(got.dtype(), DType::F32);
    const double scale = max(abs(want)).item<float>();
    const double err = max(abs(sub(got, want))).item<float>() / scale;
    EXPECT_LT(err, bound) << dtype_name(dtype);
    EXPECT_GT(err, 0.0) << dtype_name(dtype) << ": nothing was rounded";
  }
  // What append stores and returns: the values rounded to the cache's
  // dtype, and every position so far.
  KVCache cache(lm.config(), 1, 4, DType::F16);
  const Tensor k = randn({1, 2, 3, 4}, g), v = randn({1, 2, 3, 4}, g);
  const auto [keys, values] = cache.append(0, k, v);
  EXPECT_EQ(keys.dtype(), DType::F16);
  EXPECT_EQ(keys.shape(), (Shape{1, 2, 3, 4}));
  EXPECT_TRUE(equal(keys, k.to(DType::F16)));
  EXPECT_TRUE(equal(values, v.to(DType::F16)));
  EXPECT_TESSEL_ERROR(KVCache(lm.config(), 1, 4, DType::I8), "E2201");
  EXPECT_TESSEL_ERROR(KVCache(lm.config(), 1, 4, DType::F64), "E2201");
}

TEST(Decoder, KVCacheInBlockTypes) {
  // A quantised cache stores each head's keys and values rotated by
  // orthonormal Walsh-Hadamard blocks and quantised in 32-element blocks;
  // attention computes on their dequantised values and rotates its output
  // back. The logits move by about the quantisation, amplified by this
  // random model (Q8_0 keeps 8 bits of a block's largest value, Q4_0 4;
  // head_dim 64 measured 1.2e-2 and 1.3e-1 of the largest |logit|, about
  // the same without the rotation on these Gaussian values): an output not
  // rotated back measured 1.4. head_dim 128 (Q8_0: 6.1e-3) rotates keys in
  // blocks of 128 and values in blocks of 64, so a swapped matrix shows
  // too. The stored keys and values measured within half of Q8_0's step
  // of the rotated f32 ones, and 200 steps from the unrotated ones.
  DecoderConfig c = tiny("qwen3", false);
  c.hidden_size = 128;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  Generator g(5);
  const Tensor ids = randint(0, 20, {2, 7}, g);
  NoGradGuard no_grad;
  // The rotation by Sylvester's Hadamard matrix, entry (i, j)
  // (-1)^popcount(i & j) / sqrt(n), as a product in f64.
  const auto rotate = [](const Tensor& x, std::int64_t n) {
    Shape runs = x.shape();
    runs.back() /= n;
    runs.push_back(n);
    return matmul(x.to(DType::F64).reshape(runs),
                  testing::sylvester_hadamard(n))
        .reshape(x.shape())
        .to(DType::F32);
  };
  for (const std::int64_t head_dim : {64, 128}) {
    c.head_dim = head_dim;
    const CausalLM lm(c, 3);
    KVCache exact(lm.config(), 2, 12);
    const Tensor want = lm.forward(ids, &exact).value();
    EXPECT_EQ(exact.key_rotation_block(), 0);
    for (const auto& [dtype, bound] :
         {std::pair{DType::Q8_0, 3e-2}, std::pair{DType::Q4_0, 3e-1}}) {
      KVCache cache(lm.config(), 2, 12, dtype);
      ASSERT_EQ(cache.key_rotation_block(), head_dim);
      ASSERT_EQ(cache.value_rotation_block(), 64);
      Tensor got = lm.forward(ids.slice(1, 0, 3), &cache).value();
      for (std::int64_t i = 3; i < 7; ++i) {
        got = concat({got, lm.forward(ids.slice(1, i, i + 1), &cache).value()},
                     1);
      }
      const double scale = max(abs(want)).item<float>();
      const double err = max(abs(sub(got, want))).item<float>() / scale;
      EXPECT_LT(err, bound) << dtype_name(dtype) << " head_dim " << head_dim;
      EXPECT_GT(err, 0.0) << dtype_name(dtype) << ": nothing was quantised";
      if (dtype != DType::Q8_0) continue;
      // What layer 0 stored (its inputs are the same embeddings in both
      // runs): the f32 cache's keys and values rotated, then quantised, so
      // within Q8_0's step of them (1/127 of a block's largest value), and
      // far from the values unrotated.
      const Shape none{2, c.num_key_value_heads, 0, head_dim};
      const auto [keys, values] =
          cache.append(0, empty(none, DType::F32), empty(none, DType::F32));
      const auto [f32_keys, f32_values] =
          exact.append(0, empty(none, DType::F32), empty(none, DType::F32));
      for (const auto& [stored, plain, block] :
           {std::tuple{keys, f32_keys, head_dim},
            std::tuple{values, f32_values, std::int64_t{64}}}) {
        const Tensor rotated = rotate(plain, block);
        const float step = max(abs(rotated)).item<float>() / 127;
        const Tensor dequantised = stored.to(DType::F32);
        EXPECT_LT(max(abs(sub(dequantised, rotated))).item<float>(), step)
            << "head_dim " << head_dim;
        EXPECT_GT(max(abs(sub(dequantised, plain))).item<float>(), 10 * step)
            << "head_dim " << head_dim;
      }
    }
  }
  c.head_dim = 64;
  // The rotations' sizes: keys in blocks of the largest power of two from
  // 64 dividing head_dim, values in blocks of 64; none for head sizes that
  // are not a multiple of 64, nor for unquantised caches.
  for (const auto& [head_dim, key_n] :
       {std::pair{64, 64}, std::pair{128, 128}, std::pair{192, 64},
        std::pair{256, 256}, std::pair{96, 0}}) {
    DecoderConfig d = c;
    d.head_dim = head_dim;
    const KVCache cache(d, 1, 2, DType::Q8_0);
    EXPECT_EQ(cache.key_rotation_block(), key_n) << head_dim;
    EXPECT_EQ(cache.value_rotation_block(), key_n ? 64 : 0) << head_dim;
  }
  EXPECT_EQ(KVCache(c, 1, 2, DType::F16).key_rotation_block(), 0);
  // What append stores: the values quantised as ggml's CPU backend
  // quantises at run time, as llama.cpp's cache stores them (the same as
  // to(dtype) for Q4_0; IQ4_NL without the scale search).
  const Tensor k = randn({1, 2, 3, 64}, g), v = randn({1, 2, 3, 64}, g);
  CastOptions runtime;
  runtime.runtime_quantizer = true;
  for (const DType dtype : {DType::Q4_0, DType::IQ4_NL}) {
    KVCache cache(c, 1, 4, dtype);
    const auto [keys, values] = cache.append(0, k, v);
    EXPECT_EQ(keys.dtype(), dtype);
    const auto stored = [&](const Tensor& x) {
      return x.to(dtype, runtime).to(DType::F32);
    };
    EXPECT_TRUE(equal(keys.to(DType::F32), stored(k))) << dtype_name(dtype);
    EXPECT_TRUE(equal(values.to(DType::F32), stored(v))) << dtype_name(dtype);
  }
  EXPECT_FALSE(equal(k.to(DType::IQ4_NL, runtime).to(DType::F32),
                     k.to(DType::IQ4_NL).to(DType::F32)));
  // Head sizes that are not whole blocks, and block types llama.cpp does
  // not keep a cache in.
  EXPECT_TESSEL_ERROR(KVCache(tiny(), 1, 4, DType::Q8_0), "E2102");
  for (const DType refused : {DType::Q4_K, DType::IQ4_XS, DType::IQ2_XXS})
    EXPECT_TESSEL_ERROR(KVCache(c, 1, 4, refused), "E2201");
}

TEST(Decoder, RefusesBadInputs) {
  const CausalLM lm(tiny());
  EXPECT_TESSEL_ERROR(lm.forward(zeros({5}, DType::I64)), "E2102");
  EXPECT_TESSEL_ERROR(lm.forward(zeros({1, 13}, DType::I64)), "E2302");
  EXPECT_TESSEL_ERROR(lm.forward(full({1, 2}, 20, DType::I64)), "E2302");
  KVCache cache(lm.config(), 1, 4);
  lm.forward(zeros({1, 3}, DType::I64), &cache);
  EXPECT_TESSEL_ERROR(lm.forward(zeros({1, 2}, DType::I64), &cache), "E2302");
  KVCache other(lm.config(), 2, 4);
  EXPECT_TESSEL_ERROR(lm.forward(zeros({1, 2}, DType::I64), &other), "E2102");
}

TEST(Decoder, SavesAndLoadsCheckpoints) {
  const fs::path dir = temp_dir("save");
  const CausalLM lm(tiny("llama", false), 9);
  lm.save(dir);
  const auto loaded = CausalLM::load(dir);
  const Tensor ids = from_vector<std::int64_t>({1, 2, 3, 4}, {1, 4});
  NoGradGuard no_grad;
  EXPECT_TRUE(
      allclose(loaded->forward(ids).value(), lm.forward(ids).value(), 0, 0));
  EXPECT_EQ(loaded->config().to_json(), lm.config().to_json());

  // A sharded checkpoint (HF's save_pretrained layout) loads the same.
  fs::remove(dir / "model.safetensors");
  const auto files = save_safetensors_sharded(dir, lm.state_tensors(), 4000);
  EXPECT_GT(files.size(), 2u);
  EXPECT_TRUE(allclose(CausalLM::load(dir)->forward(ids).value(),
                       lm.forward(ids).value(), 0, 0));
  for (const auto& f : files) fs::remove(f);

  // A file that does not fit the config is refused, naming the tensor.
  std::vector<Tensor> tensors = lm.state_tensors();
  Tensor extra = zeros({2});
  extra.set_name("model.layers.7.mlp.up_proj.weight");
  tensors.push_back(extra);
  save_safetensors(dir / "model.safetensors", tensors);
  EXPECT_TESSEL_ERROR(CausalLM::load(dir), "E4001", "layers.7");
  tensors.pop_back();
  tensors.pop_back();  // lm_head.weight
  save_safetensors(dir / "model.safetensors", tensors);
  EXPECT_TESSEL_ERROR(CausalLM::load(dir), "E4001", "lm_head.weight");
  tensors = lm.state_tensors();
  tensors[0] = zeros({20, 15});
  tensors[0].set_name("model.embed_tokens.weight");
  save_safetensors(dir / "model.safetensors", tensors);
  EXPECT_TESSEL_ERROR(CausalLM::load(dir), "E4001", "shape");
  fs::remove_all(dir);
}

TEST(DecoderConfig, ReadsHuggingFaceConfigs) {
  // Qwen3-0.6B's config.json (abridged).
  const DecoderConfig q = DecoderConfig::from_json(R"({
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128,
    "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 3072,
    "max_position_embeddings": 40960, "model_type": "qwen3",
    "num_attention_heads": 16, "num_hidden_layers": 28,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": null,
    "rope_theta": 1000000, "tie_word_embeddings": true,
    "torch_dtype": "bfloat16", "vocab_size": 151936})");
  EXPECT_EQ(q.head_dim, 128);
  EXPECT_EQ(q.num_key_value_heads, 8);
  EXPECT_TRUE(q.tie_word_embeddings);
  EXPECT_TRUE(q.qk_norm());
  EXPECT_EQ(q.rope_theta, 1e6);
  EXPECT_EQ(q.eos_token_id, 151645);

  // Llama without head_dim or num_key_value_heads derives them.
  const DecoderConfig l = DecoderConfig::from_json(R"({
    "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100,
    "eos_token_id": [2, 3]})");
  EXPECT_EQ(l.head_dim, 16);
  EXPECT_EQ(l.num_key_value_heads, 4);
  EXPECT_FALSE(l.qk_norm());
  EXPECT_EQ(l.eos_token_id, 2);
  EXPECT_EQ(DecoderConfig::from_json(l.to_json()).to_json(), l.to_json());

  EXPECT_TESSEL_ERROR(DecoderConfig::from_json("{"), "E4001");
  EXPECT_TESSEL_ERROR(DecoderConfig::from_json(R"({"model_type": "gpt2"})"),
                      "E4001", "gpt2");
  EXPECT_TESSEL_ERROR(DecoderConfig::from_json(
                          R"({"model_type": "llama", "hidden_size": "big"})"),
                      "E4001", "hidden_size");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(
          R"({"model_type": "llama", "num_attention_heads": 6, "num_key_value_heads": 4, "hidden_size": 48})"),
      "E4001", "multiple");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(
          R"({"model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4}})"),
      "E4001", "yarn");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(R"({"model_type": "llama", "mlp_bias": true})"),
      "E4001", "mlp_bias");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(
          R"({"model_type": "qwen2", "use_sliding_window": true})"),
      "E4001", "use_sliding_window");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(R"({"model_type": "llama", "hidden_size": 0})"),
      "E4001");
}

TEST(DecoderConfig, ReadsQwen2AndLlama3RopeScaling) {
  // Qwen2.5-0.5B's config.json (abridged): no attention_bias key, yet q/k/v
  // have biases; head_dim derived.
  const DecoderConfig q2 = DecoderConfig::from_json(R"({
    "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "rope_theta": 1000000.0,
    "tie_word_embeddings": true, "use_sliding_window": false,
    "vocab_size": 151936})");
  EXPECT_TRUE(q2.attention_bias);
  EXPECT_FALSE(q2.qk_norm());
  EXPECT_EQ(q2.head_dim, 64);
  EXPECT_EQ(q2.max_position_embeddings, 32768);

  // Llama-3.2-1B's rope_scaling (transformers 4), then the same under
  // transformers 5's rope_parameters, which also carries rope_theta.
  const DecoderConfig l3 = DecoderConfig::from_json(R"({
    "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100,
    "rope_theta": 500000.0,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
                     "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192,
                     "rope_type": "llama3"}})");
  ASSERT_TRUE(l3.rope_scaling.has_value());
  EXPECT_EQ(l3.rope_scaling->factor, 32.0);
  EXPECT_EQ(l3.rope_scaling->original_max_position_embeddings, 8192);
  const DecoderConfig l5 = DecoderConfig::from_json(R"({
    "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100,
    "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0,
                        "factor": 32.0, "high_freq_factor": 4.0,
                        "low_freq_factor": 1.0,
                        "original_max_position_embeddings": 8192}})");
  EXPECT_EQ(l5.rope_theta, 500000.0);
  EXPECT_EQ(l5.to_json(), l3.to_json());
  EXPECT_EQ(DecoderConfig::from_json(l3.to_json()).to_json(), l3.to_json());
  EXPECT_TESSEL_ERROR(DecoderConfig::from_json(R"({"model_type": "llama",
        "rope_scaling": {"rope_type": "llama3", "low_freq_factor": 4.0,
                         "high_freq_factor": 1.0}})"),
                      "E4001", "rope_scaling");
  EXPECT_TESSEL_ERROR(DecoderConfig::from_json(R"({"model_type": "mistral"})"),
                      "E4001", "llama, qwen2, qwen3");
}

TEST(Sampler, GreedyTopKTopPAndSeeds) {
  const Tensor logits = from_vector<float>({0.5f, 2.0f, -1.0f, 2.0f}, {4});
  Sampler greedy({.temperature = 0});
  EXPECT_EQ(greedy.sample(logits), 1);  // ties go to the lower id
  Sampler top1({.temperature = 5, .top_k = 1, .seed = 3});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(top1.sample(logits), 1);

  // p = (0.25, 0.75): the frequency of token 1 over 4000 draws is within
  // 5 standard deviations (0.034) of 0.75.
  const Tensor two =
      from_vector<float>({0.0f, static_cast<float>(std::log(3.0))}, {2});
  Sampler s({.temperature = 1, .seed = 11});
  int ones = 0;
  for (int i = 0; i < 4000; ++i) ones += s.sample(two) == 1;
  EXPECT_NEAR(ones / 4000.0, 0.75, 0.034);

  // top_p 0.5 of (0.6, 0.3, 0.1) keeps the first token only.
  const Tensor three =
      from_vector<double>({std::log(0.6), std::log(0.3), std::log(0.1)}, {3});
  Sampler nucleus({.temperature = 1, .top_p = 0.5, .seed = 1});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(nucleus.sample(three), 0);

  Sampler a({.temperature = 1, .seed = 42}), b({.temperature = 1, .seed = 42});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.sample(logits), b.sample(logits));

  EXPECT_TESSEL_ERROR(Sampler({.temperature = -1}), "E4001");
  EXPECT_TESSEL_ERROR(Sampler({.top_k = -2}), "E4001");
  EXPECT_TESSEL_ERROR(Sampler({.top_p = 0}), "E4001");
  EXPECT_TESSEL_ERROR(greedy.sample(zeros({2, 2})), "E2102");
}

TEST(Generate, GreedyContinuationStopsAtTheStopToken) {
  const CausalLM lm(tiny(), 4);
  GenerateOptions options;
  options.max_new_tokens = 6;
  options.sampling.temperature = 0;
  const Tensor prompt = from_vector<std::int64_t>({3, 1, 4, 1, 5, 9}, {2, 3});
  const auto rows = generate(lm, prompt, options);
  ASSERT_EQ(rows.size(), 2u);
  // Greedy generation equals the argmax of the full forward, step by step.
  std::vector<std::int64_t> seq{3, 1, 4};
  NoGradGuard no_grad;
  for (int i = 0; i < 6; ++i) {
    const Tensor logits =
        lm.forward(from_vector(seq, {1, static_cast<std::int64_t>(seq.size())}))
            .value();
    const std::int64_t next =
        argmax(logits.select(0, 0).select(0, -1), 0).item<std::int64_t>();
    EXPECT_EQ(rows[0][static_cast<std::size_t>(i)], next) << i;
    seq.push_back(next);
  }
  options.stop_token = rows[0][1];
  const auto stopped = generate(lm, prompt, options);
  EXPECT_EQ(stopped[0].size(), 2u);
  EXPECT_EQ(stopped[0].back(), rows[0][1]);
  // Generation ends when the positions (12) run out: the logits of the
  // last position give a 10th token that needs no position of its own.
  options.stop_token.reset();
  options.max_new_tokens = 50;
  EXPECT_EQ(generate(lm, prompt, options)[0].size(), 10u);
}

TEST(ByteTokenizer, RoundTripsBytes) {
  const ByteTokenizer t;
  const std::string text = std::string("a\0\xff+1", 5);
  const auto ids = t.encode(text);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{97, 0, 255, 43, 49}));
  EXPECT_EQ(t.decode(ids), text);
  EXPECT_TESSEL_ERROR(t.decode({256}), "E2302");
}

}  // namespace
}  // namespace tessel

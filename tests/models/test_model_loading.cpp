// Checkpoints to decoders: HF directories and GGUF files give the same
// model, parameters are the files' own tensors, and a configuration that
// contradicts the tensors is refused before any weight is read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <numbers>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

DecoderConfig small(const std::string& type, bool tied) {
  DecoderConfig c;
  c.model_type = type;
  c.vocab_size = 40;
  c.hidden_size = 64;  // whole Q8_0 blocks
  c.intermediate_size = 96;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.num_key_value_heads = 2;
  c.head_dim = 16;
  c.max_position_embeddings = 32;
  c.tie_word_embeddings = tied;
  c.attention_bias = type != "qwen3";  // llama with biases: permuted too
  c.initializer_range = 0.3;
  c.rms_norm_eps = 1e-5;
  return c;
}

fs::path temp_path(const std::string& name) {
  const fs::path p = fs::temp_directory_path() /
                     ("tessel_loading_" + std::to_string(::getpid()) + name);
  return p;
}

// What llama.cpp's converter writes for `lm`: GGUF names, the decoder's
// metadata, q/k rows interleaved for llama, each 2-D weight in `dtype`.
void save_as_gguf(const CausalLM& lm, const fs::path& path,
                  DType dtype = DType::F32, std::vector<Tensor> extra = {}) {
  const DecoderConfig& c = lm.config();
  std::vector<Tensor> tensors;
  for (Tensor t : lm.state_tensors()) {
    const std::string hf = t.name();
    if (const auto heads = rope_interleave_heads(c, hf)) {
      t = interleave_rope_rows(t, *heads);
    }
    if (t.rank() == 2 && dtype != DType::F32) t = t.to(dtype);
    t.set_name(*gguf_tensor_name(hf));
    tensors.push_back(t);
  }
  for (const Tensor& t : extra) tensors.push_back(t);
  save_gguf(path, gguf_decoder_metadata(c), tensors);
}

Tensor logits_of(const CausalLM& lm) {
  const Tensor ids = from_vector<std::int64_t>(
      {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4}, {1, 20});
  return lm.logits(ids);
}

TEST(GgufNames, MapBothWays) {
  EXPECT_EQ(gguf_tensor_name("model.layers.12.self_attn.q_proj.weight"),
            "blk.12.attn_q.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.0.self_attn.k_proj.bias"),
            "blk.0.attn_k.bias");
  EXPECT_EQ(gguf_tensor_name("model.layers.3.self_attn.q_norm.weight"),
            "blk.3.attn_q_norm.weight");
  EXPECT_EQ(gguf_tensor_name("model.layers.1.post_attention_layernorm.weight"),
            "blk.1.ffn_norm.weight");
  EXPECT_EQ(gguf_tensor_name("model.embed_tokens.weight"), "token_embd.weight");
  EXPECT_EQ(gguf_tensor_name("lm_head.weight"), "output.weight");
  EXPECT_EQ(hf_tensor_name("output_norm.weight"), "model.norm.weight");
  EXPECT_EQ(hf_tensor_name("blk.7.ffn_down.weight"),
            "model.layers.7.mlp.down_proj.weight");
  EXPECT_EQ(hf_tensor_name("blk.7.attn_output.weight"),
            "model.layers.7.self_attn.o_proj.weight");
  for (const char* odd : {"blk.07.ffn_down.weight", "blk.x.ffn_down.weight",
                          "blk.1.ffn_sideways.weight", "rope_freqs.weight",
                          "blk..ffn_up.weight"}) {
    EXPECT_FALSE(hf_tensor_name(odd).has_value()) << odd;
  }
  EXPECT_FALSE(gguf_tensor_name("model.layers.1.mlp.experts.weight"));
}

TEST(GgufNames, RopeRowsInterleaveAsLlamaCppsConverter) {
  // Two heads of four rows: HF's halves (0 1 | 2 3) become pairs (0 2 1 3).
  const Tensor w = arange(0, 16, 1, DType::F32).reshape({8, 2});
  const Tensor inter = interleave_rope_rows(w, 2);
  const std::vector<float> rows{0, 2, 1, 3, 4, 6, 5, 7};
  for (std::int64_t r = 0; r < 8; ++r) {
    EXPECT_EQ(inter.at<float>({r, 0}), 2 * rows[static_cast<std::size_t>(r)]);
  }
  EXPECT_TRUE(allclose(deinterleave_rope_rows(inter, 2), w, 0, 0));
  // A bias (1-D) and quantised rows move the same way.
  const Tensor b = arange(0, 8, 1, DType::F32);
  EXPECT_EQ(interleave_rope_rows(b, 2).at<float>({1}), 2.0f);
  Generator g(1);
  const Tensor q = randn({8, 32}, g).to(DType::Q8_0);
  EXPECT_TRUE(allclose(
      deinterleave_rope_rows(interleave_rope_rows(q, 2), 2).to(DType::F32),
      q.to(DType::F32), 0, 0));
  EXPECT_TESSEL_ERROR(interleave_rope_rows(w, 3), "E2102");
  // Which tensors move, by how many heads: llama's q and k, nothing else.
  DecoderConfig c = small("llama", false);
  EXPECT_EQ(rope_interleave_heads(c, "model.layers.1.self_attn.q_proj.weight"),
            4);
  EXPECT_EQ(rope_interleave_heads(c, "model.layers.0.self_attn.q_proj.bias"),
            4);
  EXPECT_EQ(rope_interleave_heads(c, "model.layers.12.self_attn.k_proj.bias"),
            2);
  for (const char* other :
       {"model.layers.0.self_attn.v_proj.weight",
        "model.layers.0.self_attn.q_proj.weight.extra", "q_proj.weight",
        "model.layers.x.self_attn.k_proj.weight",
        "model.layers.0.self_attn.q_proj_lora.weight"}) {
    EXPECT_FALSE(rope_interleave_heads(c, other)) << other;
  }
  c.model_type = "qwen2";
  EXPECT_FALSE(
      rope_interleave_heads(c, "model.layers.1.self_attn.q_proj.weight"));
}

TEST(ModelLoading, GgufFilesGiveTheSameModelAsHfDirectories) {
  for (const auto& [type, tied] :
       {std::pair{"llama", false}, std::pair{"qwen2", true},
        std::pair{"qwen3", false}}) {
    const CausalLM lm(small(type, tied), 4);
    const fs::path dir = temp_path(std::string("hf_") + type);
    const fs::path gguf = temp_path(std::string(type) + ".gguf");
    fs::create_directories(dir);
    lm.save(dir);
    save_as_gguf(lm, gguf);
    const auto from_dir = CausalLM::load(dir);
    const auto from_gguf = CausalLM::load(gguf);
    EXPECT_EQ(from_gguf->config().tie_word_embeddings, tied) << type;
    EXPECT_EQ(from_gguf->config().rope_interleaved,
              std::string(type) == "llama");
    const Tensor expected = logits_of(lm);
    EXPECT_TRUE(allclose(logits_of(*from_dir), expected, 0, 0)) << type;
    EXPECT_TRUE(allclose(logits_of(*from_gguf), expected, 1e-5, 1e-5)) << type;
    // Read into memory instead of mapped: the same parameters, bit for bit.
    const auto resident = CausalLM::load(gguf, MapMode::Resident);
    EXPECT_EQ(resident->model.embed_tokens.weight.value().storage().origin(),
              StorageOrigin::Owned);
    EXPECT_TRUE(allclose(logits_of(*resident), logits_of(*from_gguf), 0, 0))
        << type;
    EXPECT_TRUE(allclose(logits_of(*CausalLM::load(dir, MapMode::Resident)),
                         expected, 0, 0))
        << type;
    fs::remove_all(dir);
    fs::remove(gguf);
  }
}

TEST(ModelLoading, ParametersAreTheMappedTensorsInTheirDtype) {
  const CausalLM lm(small("qwen3", true), 2);
  const fs::path dir = temp_path("bf16");
  fs::create_directories(dir);
  lm.save(dir);
  // The same weights rounded to bf16, stored as bf16 and as f32.
  std::vector<Tensor> half;
  std::vector<Tensor> rounded;
  for (const Tensor& t : lm.state_tensors()) {
    half.push_back(t.to(DType::BF16).set_name(t.name()));
    rounded.push_back(half.back().to(DType::F32).set_name(t.name()));
  }
  save_safetensors(dir / "model.safetensors", half);
  const auto bf16 = CausalLM::load(dir);
  for (const auto& [name, p] : bf16->named_parameters()) {
    EXPECT_EQ(p.dtype(), DType::BF16) << name;
    EXPECT_NE(p.value().storage().origin(), StorageOrigin::Owned) << name;
  }
  save_safetensors(dir / "model.safetensors", rounded);
  const auto f32 = CausalLM::load(dir);
  EXPECT_TRUE(allclose(logits_of(*bf16), logits_of(*f32), 1e-5, 1e-5));

  // GGUF blocks stay blocks and multiply through the quantised matmul;
  // the expected logits use the same weights dequantised. The difference
  // left is the 8-bit activations of the integer kernels, compounded over
  // two layers of weights drawn large (std 0.3): 2.4% of the logits' scale
  // measured, against O(1) for a misplaced row or block. llama.cpp's
  // logits on its own files are the oracle (tests/oracle).
  const fs::path gguf = temp_path("q8.gguf");
  save_as_gguf(lm, gguf, DType::Q8_0);
  const auto q8 = CausalLM::load(gguf);
  EXPECT_EQ(q8->model.layers[0]->mlp.up_proj.weight.dtype(), DType::Q8_0);
  EXPECT_EQ(q8->model.embed_tokens.weight.dtype(), DType::Q8_0);
  std::vector<Tensor> dequantised;
  for (const Tensor& t : lm.state_tensors()) {
    Tensor d = t.rank() == 2 ? t.to(DType::Q8_0).to(DType::F32) : t;
    dequantised.push_back(d.set_name(t.name()));
  }
  save_safetensors(dir / "model.safetensors", dequantised);
  const Tensor expected = logits_of(*CausalLM::load(dir));
  const Tensor got = logits_of(*q8);
  const double scale = max(abs(expected)).item<float>();
  EXPECT_LT(max(abs(sub(got, expected))).item<float>(), 0.04 * scale);
  EXPECT_GT(scale, 1.0);  // logits far from zero: the bound means something
  fs::remove_all(dir);
  fs::remove(gguf);
}

TEST(ModelLoading, Llama3RopeScalingFromConfigOrRopeFreqs) {
  DecoderConfig c = small("llama", false);
  c.head_dim = 8;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 4;
  c.rope_theta = 10000.0;
  // Wavelengths 6.3, 63, 628, 6283 against 16 / 4 and 16 / 1: one smoothed,
  // three divided.
  c.rope_scaling = Llama3RopeScaling{2.0, 1.0, 4.0, 16};
  const CausalLM lm(c, 8);
  DecoderConfig plain = c;
  plain.rope_scaling.reset();
  const fs::path dir = temp_path("llama3");
  fs::create_directories(dir);
  lm.save(dir);
  const Tensor scaled = logits_of(*CausalLM::load(dir));
  // The converter's rope_freqs: 1 / the factor each inverse frequency was
  // scaled by, and no scaling in the metadata.
  std::vector<float> factors;
  for (int i = 0; i < 4; ++i) {
    const double f = std::pow(10000.0, -2.0 * i / 8);
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen < 4) {
      factors.push_back(1);
    } else if (wavelen > 16) {
      factors.push_back(2);
    } else {
      const double smooth = (16 / wavelen - 1) / (4 - 1);
      factors.push_back(static_cast<float>(1 / ((1 - smooth) / 2 + smooth)));
    }
  }
  Tensor rope_freqs = from_vector(factors, {4});
  rope_freqs.set_name(kRopeFreqsTensor);
  const fs::path gguf = temp_path("llama3.gguf");
  {
    CausalLM unscaled(plain, 8);  // the same weights, config without scaling
    save_as_gguf(unscaled, gguf, DType::F32, {rope_freqs});
    EXPECT_GT(max(abs(sub(logits_of(unscaled), scaled))).item<float>(), 1e-3)
        << "the scaling must matter at these positions";
  }
  EXPECT_TRUE(allclose(logits_of(*CausalLM::load(gguf)), scaled, 1e-5, 1e-5));
  fs::remove_all(dir);
  fs::remove(gguf);
}

TEST(ModelLoading, SavesALlamaGgufAsAnHfDirectory) {
  // llama.cpp's llama files hold q/k rows interleaved: save() writes them
  // back in HF's order, so the directory is the same model.
  const CausalLM lm(small("llama", false), 5);
  const fs::path gguf = temp_path("save_llama.gguf");
  const fs::path dir = temp_path("save_llama");
  fs::create_directories(dir);
  save_as_gguf(lm, gguf);
  {
    const auto from_gguf = CausalLM::load(gguf);
    ASSERT_TRUE(from_gguf->config().rope_interleaved);
    from_gguf->save(dir);
    const auto back = CausalLM::load(dir);
    EXPECT_FALSE(back->config().rope_interleaved);
    EXPECT_TRUE(allclose(logits_of(*back), logits_of(*from_gguf), 1e-5, 1e-5));
    EXPECT_TRUE(allclose(logits_of(*back), logits_of(lm), 0, 0));
  }
  // Block-quantised parameters and rope_freqs factors have no place in a
  // checkpoint directory: refused, pointing at `tessel convert`.
  save_as_gguf(lm, gguf, DType::Q8_0);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf)->save(dir), "E4001", "q8_0",
                      "tessel convert");
  Tensor rope_freqs = from_vector<float>({1, 1, 2, 4, 8, 8, 8, 8}, {8});
  rope_freqs.set_name(kRopeFreqsTensor);
  save_as_gguf(lm, gguf, DType::F32, {rope_freqs});
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf)->save(dir), "E4001",
                      "rope_freqs.weight", "tessel convert");
  // Factors of 1 change nothing: saved.
  rope_freqs = ones({8});
  rope_freqs.set_name(kRopeFreqsTensor);
  save_as_gguf(lm, gguf, DType::F32, {rope_freqs});
  EXPECT_NO_THROW(CausalLM::load(gguf)->save(dir));
  fs::remove_all(dir);
  fs::remove(gguf);
}

TEST(ModelLoading, RopeFreqsMustBePositiveFloatsPerFrequency) {
  const CausalLM lm(small("llama", false), 6);
  const fs::path gguf = temp_path("rope_freqs.gguf");
  const auto load_with = [&](Tensor rope_freqs) {
    rope_freqs.set_name(kRopeFreqsTensor);
    save_as_gguf(lm, gguf, DType::F32, {rope_freqs});
    return CausalLM::load(gguf);
  };
  EXPECT_NO_THROW(load_with(full({8}, 2.0, DType::F16)));
  EXPECT_TESSEL_ERROR(load_with(zeros({8})), "E4001", "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(load_with(full({8}, -1.0)), "E4001", "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(
      load_with(from_vector<float>({1, 1, 1, NAN, 1, 1, 1, 1}, {8})), "E4001",
      "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(
      load_with(from_vector<float>({1, 1, 1, INFINITY, 1, 1, 1, 1}, {8})),
      "E4001", "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(load_with(ones({8}, DType::I32)), "E4001",
                      "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(load_with(ones({7})), "E4001", "rope_freqs.weight");
  fs::remove(gguf);
}

TEST(ModelLoading, RefusesWeightDtypesTheDecoderCannotUse) {
  // Any float dtype for any parameter; GGUF blocks for matrices only;
  // nothing else. Refused at load, naming the tensor.
  const CausalLM lm(small("qwen3", true), 3);
  const fs::path dir = temp_path("dtypes");
  fs::create_directories(dir);
  lm.save(dir);
  const auto save_with = [&](const std::string& name, DType dtype) {
    std::vector<Tensor> tensors;
    for (const Tensor& t : lm.state_tensors()) {
      tensors.push_back(
          (t.name() == name ? t.to(dtype) : t).contiguous().set_name(t.name()));
    }
    save_safetensors(dir / "model.safetensors", tensors);
  };
  save_with("model.layers.0.self_attn.q_proj.weight", DType::F64);
  EXPECT_NO_THROW(CausalLM::load(dir));
  save_with("model.norm.weight", DType::I32);
  EXPECT_TESSEL_ERROR(CausalLM::load(dir), "E2201", "model.norm.weight", "i32");
  save_with("model.layers.1.mlp.up_proj.weight", DType::F8E4M3FN);
  EXPECT_TESSEL_ERROR(CausalLM::load(dir), "E2201",
                      "model.layers.1.mlp.up_proj.weight", "f8_e4m3fn");
  const fs::path gguf = temp_path("dtypes.gguf");
  std::vector<Tensor> tensors;
  for (const Tensor& t : lm.state_tensors()) {
    const bool norm = t.name() == "model.layers.0.input_layernorm.weight";
    Tensor stored = t.rank() == 2 || norm ? t.to(DType::Q8_0) : t;
    tensors.push_back(stored.set_name(*gguf_tensor_name(t.name())));
  }
  save_gguf(gguf, gguf_decoder_metadata(lm.config()), tensors);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E2201",
                      "model.layers.0.input_layernorm.weight", "q8_0");
  fs::remove_all(dir);
  fs::remove(gguf);
}

TEST(ModelLoading, SizesStayFarFromOverflow) {
  // config.json: one size past 2^31, or a product of two past 2^48.
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(
          R"({"model_type": "llama", "hidden_size": 1099511627776})"),
      "E4001", "hidden_size");
  EXPECT_TESSEL_ERROR(DecoderConfig::from_json(
                          R"({"model_type": "qwen3", "vocab_size": 1073741824,
              "hidden_size": 1073741824})"),
                      "E4001", "vocab_size", "hidden_size");
  EXPECT_TESSEL_ERROR(
      DecoderConfig::from_json(
          R"({"model_type": "qwen3", "num_attention_heads": 1048576,
              "num_key_value_heads": 1, "head_dim": 1073741824})"),
      "E4001", "num_attention_heads", "head_dim");
  // GGUF metadata: the key named as the file spells it.
  const CausalLM lm(small("llama", false), 1);
  GgufFile file;
  file.metadata = gguf_decoder_metadata(lm.config());
  for (auto& [key, value] : file.metadata) {
    if (key == "llama.embedding_length") {
      value = GgufValue{GgufValue::Type::U64, GgufValue::Type::U8,
                        std::uint64_t{1} << 40};
    }
  }
  EXPECT_TESSEL_ERROR(decoder_config_from_gguf(file), "E4001",
                      "llama.embedding_length");
  file.metadata = gguf_decoder_metadata(lm.config());
  for (auto& [key, value] : file.metadata) {
    if (key == "llama.vocab_size") {
      value = GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                        std::uint64_t{1} << 31};
    }
    if (key == "llama.embedding_length") {
      value = GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                        std::uint64_t{1} << 30};
    }
    if (key == "llama.rope.dimension_count") {  // 2^30 / 4 heads
      value = GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                        std::uint64_t{1} << 28};
    }
  }
  EXPECT_TESSEL_ERROR(decoder_config_from_gguf(file), "E4001", "vocab_size");
}

TEST(ModelLoading, UnreadableFileIsAnIoFailure) {
  // It exists, but reading it fails (EIO): not a format question.
  EXPECT_TESSEL_ERROR(CausalLM::load("/proc/self/mem"), "E3002");
}

TEST(ModelLoading, RefusesFilesThatContradictTheirConfiguration) {
  const CausalLM lm(small("qwen3", true), 1);
  const fs::path gguf = temp_path("bad.gguf");
  const auto with = [&](auto edit_metadata, std::vector<Tensor> tensors) {
    auto metadata = gguf_decoder_metadata(lm.config());
    edit_metadata(metadata);
    save_gguf(gguf, metadata, tensors);
  };
  std::vector<Tensor> good;
  for (Tensor t : lm.state_tensors()) {
    const std::string name = *gguf_tensor_name(t.name());
    good.push_back(Tensor(t.storage(), t.shape(), t.strides(),
                          t.storage_offset(), t.dtype())
                       .set_name(name));
  }
  using Metadata = std::vector<std::pair<std::string, GgufValue>>;
  const auto keep = [](Metadata&) {};
  const auto set = [](const std::string& key, GgufValue v) {
    return [key, v](Metadata& m) {
      for (auto& [k, value] : m) {
        if (k == key) value = v;
      }
    };
  };
  const GgufValue u32_3{GgufValue::Type::U32, GgufValue::Type::U8,
                        std::uint64_t{3}};

  with(keep, good);
  EXPECT_NO_THROW(CausalLM::load(gguf));
  with(set("qwen3.attention.head_count_kv", u32_3), good);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "num_key_value_heads");
  with(set("general.architecture",
           {GgufValue::Type::String, GgufValue::Type::U8, std::string("gpt2")}),
       good);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "llama, qwen2, qwen3");
  with([](Metadata& m) { m.pop_back(); }, good);  // value_length
  EXPECT_NO_THROW(CausalLM::load(gguf));
  with(
      [](Metadata& m) {
        std::erase_if(m,
                      [](auto& kv) { return kv.first == "qwen3.block_count"; });
      },
      good);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "qwen3.block_count");
  with(set("qwen3.feed_forward_length",
           {GgufValue::Type::String, GgufValue::Type::U8, std::string("96")}),
       good);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "must be an integer");

  // A missing tensor, a mis-shaped one, one the configuration has no place
  // for: each named.
  std::vector<Tensor> fewer(good.begin() + 1, good.end());
  with(keep, fewer);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "vocab_size");
  fewer = good;
  std::erase_if(fewer, [](const Tensor& t) {
    return t.name() == "blk.1.attn_k_norm.weight";
  });
  with(keep, fewer);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001",
                      "model.layers.1.self_attn.k_norm.weight");
  std::vector<Tensor> misshaped = good;
  for (Tensor& t : misshaped) {
    if (t.name() == "blk.0.ffn_up.weight") {
      t = zeros({95, 64}).set_name("blk.0.ffn_up.weight");
    }
  }
  with(keep, misshaped);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "(95, 64)");
  std::vector<Tensor> more = good;
  more.push_back(zeros({4}).set_name("blk.2.attn_norm.weight"));
  with(keep, more);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001",
                      "model.layers.2.input_layernorm.weight");
  // Vocab size in the metadata against the embedding's rows.
  with(
      [](Metadata& m) {
        m.emplace_back("qwen3.vocab_size",
                       GgufValue{GgufValue::Type::U32, GgufValue::Type::U8,
                                 std::uint64_t{41}});
      },
      good);
  EXPECT_TESSEL_ERROR(CausalLM::load(gguf), "E4001", "token_embd");
  EXPECT_TESSEL_ERROR(CausalLM::load(temp_path("missing.gguf")), "E3002");
  fs::remove(gguf);
}

}  // namespace
}  // namespace tessel

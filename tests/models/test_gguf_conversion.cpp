// The rules `tessel convert` shares with llama.cpp's HF -> GGUF converter,
// on hand-made inputs: output dtypes, file type, names and size labels,
// metadata keys in the converter's order, Llama 3's rope_freqs and their
// inverse, the tokenizer keys (gguf-py's SpecialVocab) and the tokenizer
// files rebuilt from them. tests/oracle/test_convert_model.py compares
// whole conversions with the converter's files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tessel/tessel.hpp"
#include "test_util.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

TEST(GgufConversion, DtypeRules) {
  // Matrices take --outtype; 1-D tensors, norms and biases stay f32.
  EXPECT_EQ(gguf_converted_dtype("blk.0.attn_q.weight", 2, DType::F16),
            DType::F16);
  EXPECT_EQ(gguf_converted_dtype("token_embd.weight", 2, DType::BF16),
            DType::BF16);
  EXPECT_EQ(gguf_converted_dtype("blk.0.attn_norm.weight", 1, DType::F16),
            DType::F32);
  EXPECT_EQ(gguf_converted_dtype("blk.0.attn_q.bias", 1, DType::BF16),
            DType::F32);
  EXPECT_EQ(gguf_converted_dtype("rope_freqs.weight", 1, DType::F16),
            DType::F32);
  // A 2-D norm or a non-".weight" matrix is f32 too, as in the converter.
  EXPECT_EQ(gguf_converted_dtype("blk.0.attn_q_norm.weight", 2, DType::F16),
            DType::F32);
  EXPECT_EQ(gguf_converted_dtype("blk.0.attn_q.scale", 2, DType::F16),
            DType::F32);
  EXPECT_EQ(gguf_converted_dtype("output.weight", 2, DType::F32), DType::F32);
  EXPECT_TESSEL_ERROR(gguf_converted_dtype("x.weight", 2, DType::Q8_0), "E2201",
                      "q8_0");
  EXPECT_EQ(gguf_file_type(DType::F32), 0u);
  EXPECT_EQ(gguf_file_type(DType::F16), 1u);
  EXPECT_EQ(gguf_file_type(DType::BF16), 32u);
  EXPECT_TESSEL_ERROR(gguf_file_type(DType::F64), "E2201", "f64");
}

TEST(GgufConversion, SizeLabelAndName) {
  // gguf-py's model_weight_count_rounded_notation, values it gives.
  EXPECT_EQ(gguf_size_label(1692960), "1.7M");
  EXPECT_EQ(gguf_size_label(494032768), "494M");
  EXPECT_EQ(gguf_size_label(7241732096), "7.2B");
  EXPECT_EQ(gguf_size_label(70553706496), "71B");
  EXPECT_EQ(gguf_size_label(999), "1.0K");
  EXPECT_EQ(gguf_size_label(500), "0.50K");  // round(0.5) is 0: two decimals
  EXPECT_EQ(gguf_size_label(1000000), "1000K");  // "> 1e6" for millions
  // gguf-py's Metadata.id_to_title of the model id's name part.
  EXPECT_EQ(gguf_model_name("llama"), "Llama");
  EXPECT_EQ(gguf_model_name("qwen3-sharded"), "Qwen3 Sharded");
  EXPECT_EQ(gguf_model_name("qwen3-bf16"), "Qwen3 Bf16");
  EXPECT_EQ(gguf_model_name("meta-llama/Llama-3.2-1B-Instruct"),
            "Llama 3.2 1B Instruct");
  EXPECT_EQ(gguf_model_name("Qwen2.5-0.5B-instruct"), "Qwen2.5 0.5B Instruct");
  EXPECT_EQ(gguf_model_name("my model v2"), "My Model v2");
  EXPECT_EQ(gguf_model_name("a1b-x_y"), "A1B X_Y");
}

DecoderConfig llama(std::int64_t head_dim, double theta) {
  DecoderConfig c;
  c.model_type = "llama";
  c.vocab_size = 16;
  c.hidden_size = 2 * head_dim;
  c.num_attention_heads = 2;
  c.num_key_value_heads = 1;
  c.head_dim = head_dim;
  c.max_position_embeddings = 256;
  c.rope_theta = theta;
  return c;
}

Llama3RopeScaling scaling(double factor, double high, std::int64_t old) {
  Llama3RopeScaling s;
  s.factor = factor;
  s.low_freq_factor = 1;
  s.high_freq_factor = high;
  s.original_max_position_embeddings = old;
  return s;
}

std::vector<float> values(const Tensor& t) {
  return {t.data<float>(), t.data<float>() + t.numel()};
}

TEST(GgufConversion, RopeFreqs) {
  // theta 10000, head_dim 8: wavelengths 2pi, 20pi, 200pi, 2000pi against
  // bounds 64 / 4 = 16 and 64: kept, blended, divided by 8 twice. The
  // blend, s = (64 / 62.83 - 1) / 3 = 0.00619, gives 1 / ((1 - s) / 8 + s)
  // = 7.667; its f32 bits are what torch computes in the converter.
  DecoderConfig c = llama(8, 10000);
  EXPECT_FALSE(gguf_rope_freqs(c).defined());
  c.rope_scaling = scaling(8, 4, 64);
  const Tensor f = gguf_rope_freqs(c);
  EXPECT_EQ(f.name(), "rope_freqs.weight");
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(values(f), (std::vector<float>{1.0f, 0x1.eab67p+2f, 8.0f, 8.0f}));
  // Llama 3.2's shape of curve: theta 500000, factor 32, context 8192.
  DecoderConfig d = llama(16, 500000);
  d.rope_scaling = scaling(32, 4, 8192);
  EXPECT_EQ(values(gguf_rope_freqs(d)),
            (std::vector<float>{1, 1, 1, 1, 0x1.a568dep+1f, 32, 32, 32}));
}

TEST(GgufConversion, RopeScalingFromFreqs) {
  // Each curve gives back parameters that make it again, here the
  // originals themselves (low_freq_factor 1, as Llama 3's).
  for (const auto& [dim, theta, s] :
       {std::tuple{64, 500000.0, scaling(8, 4, 64)},
        std::tuple{128, 500000.0, scaling(8, 4, 8192)},
        std::tuple{64, 500000.0, scaling(32, 4, 8192)},
        std::tuple{128, 10000.0, scaling(4, 2, 4096)},
        std::tuple{8, 10000.0, scaling(8, 4, 64)}}) {
    DecoderConfig c = llama(dim, theta);
    c.rope_scaling = s;
    const auto got = llama3_scaling_from_rope_freqs(c, gguf_rope_freqs(c));
    ASSERT_TRUE(got.has_value())
        << dim << " " << s.original_max_position_embeddings;
    EXPECT_EQ(got->factor, s.factor);
    EXPECT_EQ(got->low_freq_factor, 1.0);
    EXPECT_EQ(got->high_freq_factor, s.high_freq_factor);
    EXPECT_EQ(got->original_max_position_embeddings,
              s.original_max_position_embeddings);
  }
  const DecoderConfig c = llama(8, 10000);
  EXPECT_FALSE(
      llama3_scaling_from_rope_freqs(c, ones({4}, DType::F32)).has_value());
  EXPECT_TESSEL_ERROR(
      llama3_scaling_from_rope_freqs(c, from_vector<float>({3, 1, 2, 5}, {4})),
      "E4001", "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(llama3_scaling_from_rope_freqs(
                          c, from_vector<float>({1, 0.5f, 0, 1}, {4})),
                      "E4001", "rope_freqs.weight");
  EXPECT_TESSEL_ERROR(llama3_scaling_from_rope_freqs(c, ones({3}, DType::F32)),
                      "E4001", "rope_freqs.weight", "4 floats");
}

std::vector<std::string> keys_of(
    const std::vector<std::pair<std::string, GgufValue>>& kv) {
  std::vector<std::string> out;
  for (const auto& [k, v] : kv) out.push_back(k);
  return out;
}

TEST(GgufConversion, DecoderMetadataInConverterOrder) {
  DecoderConfig c = llama(8, 500000);
  GgufModelInfo info;
  info.name = "Tiny";
  info.size_label = "1.0K";
  info.file_type = 1;
  info.head_dim_keys = true;
  const auto kv = gguf_decoder_metadata(c, info);
  EXPECT_EQ(
      keys_of(kv),
      (std::vector<std::string>{
          "general.architecture", "general.type", "general.name",
          "general.size_label", "llama.block_count", "llama.context_length",
          "llama.embedding_length", "llama.feed_forward_length",
          "llama.attention.head_count", "llama.attention.head_count_kv",
          "llama.rope.freq_base", "llama.attention.layer_norm_rms_epsilon",
          "llama.attention.key_length", "llama.attention.value_length",
          "general.file_type", "llama.vocab_size", "llama.rope.dimension_count",
          "general.quantization_version"}));
  EXPECT_EQ(std::get<std::string>(kv[1].second.value), "model");
  EXPECT_EQ(std::get<std::uint64_t>(kv[14].second.value), 1u);
  EXPECT_EQ(kv[10].second.type, GgufValue::Type::F32);
  // Without the info: the configuration's keys alone; qwen2 has no
  // head_dim keys unless asked, qwen3 always.
  c.model_type = "qwen2";
  EXPECT_EQ(gguf_decoder_metadata(c).size(), 9u);
  c.model_type = "qwen3";
  EXPECT_EQ(gguf_decoder_metadata(c).size(), 11u);
}

TEST(GgufConversion, DecoderMetadataRefusesValuesPastU32) {
  // The sizes are u32 keys: a value that does not fit is named, never
  // truncated.
  DecoderConfig c = llama(8, 10000);
  c.hidden_size = std::int64_t{1} << 32;
  EXPECT_TESSEL_ERROR(gguf_decoder_metadata(c), "E4001",
                      "llama.embedding_length", "4294967296");
  c = llama(8, 10000);
  c.intermediate_size = -1;
  EXPECT_TESSEL_ERROR(gguf_decoder_metadata(c), "E4001",
                      "llama.feed_forward_length", "-1");
  c = llama(8, 10000);
  c.vocab_size = (std::int64_t{1} << 32) + 5;
  EXPECT_TESSEL_ERROR(gguf_decoder_metadata(c), "E4001", "llama.vocab_size");
  c.vocab_size = (std::int64_t{1} << 32) - 1;  // the largest u32
  EXPECT_NO_THROW(gguf_decoder_metadata(c));
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("tessel_gguf_conversion_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// A byte-level BPE: "ab ab" -> "ab", "Ġab"; <s> added as BOS by the
// template; <|im_start|> added but not special (it looks special: a
// control token all the same); "▁x" user-defined (its ▁ becomes a space).
constexpr const char* kTokenizer = R"({
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "<s>", "single_word": false, "lstrip": false,
     "rstrip": false, "normalized": false, "special": true},
    {"id": 6, "content": "<|im_start|>", "single_word": false,
     "lstrip": false, "rstrip": false, "normalized": false, "special": false},
    {"id": 7, "content": "\u2581x", "single_word": false, "lstrip": false,
     "rstrip": false, "normalized": false, "special": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
             {"Sequence": {"id": "A", "type_id": 0}},
             {"SpecialToken": {"id": "<s>", "type_id": 1}},
             {"Sequence": {"id": "B", "type_id": 1}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}},
  "decoder": {"type": "ByteLevel", "add_prefix_space": true,
              "trim_offsets": true, "use_regex": true},
  "model": {"type": "BPE", "dropout": null, "unk_token": null,
    "continuing_subword_prefix": null, "end_of_word_suffix": null,
    "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
    "vocab": {"<s>": 0, "a": 1, "b": 2, "\u0120": 3, "ab": 4,
              "\u0120ab": 5},
    "merges": [["a", "b"], ["\u0120", "ab"]]}
})";

const GgufValue& value_of(
    const std::vector<std::pair<std::string, GgufValue>>& kv,
    const std::string& key) {
  for (const auto& [k, v] : kv) {
    if (k == key) return v;
  }
  throw std::runtime_error("no key " + key);
}

std::vector<std::string> strings(const GgufValue& v) {
  std::vector<std::string> out;
  for (const GgufValue& e : std::get<std::vector<GgufValue>>(v.value)) {
    out.push_back(std::get<std::string>(e.value));
  }
  return out;
}

TEST(GgufConversion, TokenizerKeysAsSpecialVocab) {
  TempDir dir;
  dir.write("tokenizer.json", kTokenizer);
  // eos_token as an object, add_eos_token false, pad only in config.json.
  dir.write("tokenizer_config.json",
            R"({"bos_token": "<s>", "eos_token": {"content": "<|im_start|>"},
                "add_eos_token": false, "chat_template": "T"})");
  dir.write("config.json", R"({"bos_token_id": 0, "pad_token_id": 8})");
  const auto kv = gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""});
  // The template's <s> is the BOS: add_bos; its pair repeats <s>, which is
  // neither sep nor eos: add_sep false; then add_eos from the config.
  EXPECT_EQ(
      keys_of(kv),
      (std::vector<std::string>{
          "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.tokens",
          "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
          "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
          "tokenizer.ggml.padding_token_id", "tokenizer.ggml.add_bos_token",
          "tokenizer.ggml.add_sep_token", "tokenizer.ggml.add_eos_token",
          "tokenizer.chat_template"}));
  EXPECT_EQ(std::get<std::string>(value_of(kv, "tokenizer.ggml.pre").value),
            "gpt-2");
  EXPECT_EQ(strings(value_of(kv, "tokenizer.ggml.tokens")),
            (std::vector<std::string>{"<s>", "a", "b", "\xc4\xa0", "ab",
                                      "\xc4\xa0"
                                      "ab",
                                      "<|im_start|>", " x", "[PAD8]"}));
  std::vector<std::int64_t> types;
  for (const GgufValue& t : std::get<std::vector<GgufValue>>(
           value_of(kv, "tokenizer.ggml.token_type").value)) {
    EXPECT_EQ(t.type, GgufValue::Type::I32);
    types.push_back(std::get<std::int64_t>(t.value));
  }
  EXPECT_EQ(types, (std::vector<std::int64_t>{3, 1, 1, 1, 1, 1, 3, 4, 5}));
  EXPECT_EQ(strings(value_of(kv, "tokenizer.ggml.merges")),
            (std::vector<std::string>{"a b", "\xc4\xa0 ab"}));
  EXPECT_EQ(std::get<std::uint64_t>(
                value_of(kv, "tokenizer.ggml.eos_token_id").value),
            6u);
  EXPECT_EQ(std::get<std::uint64_t>(
                value_of(kv, "tokenizer.ggml.padding_token_id").value),
            8u);
  EXPECT_TRUE(
      std::get<bool>(value_of(kv, "tokenizer.ggml.add_bos_token").value));
  EXPECT_FALSE(
      std::get<bool>(value_of(kv, "tokenizer.ggml.add_sep_token").value));
  EXPECT_EQ(
      std::get<std::string>(value_of(kv, "tokenizer.chat_template").value),
      "T");
}

TEST(GgufConversion, SpecialTokenIdsPastTheVocabularyAreSkipped) {
  // SpecialVocab's _set_special_token with n_vocab: an id past the token
  // list is skipped (never written, never truncated to u32), a negative
  // one refused.
  TempDir dir;
  dir.write("tokenizer.json", kTokenizer);
  dir.write("config.json",
            R"({"bos_token_id": 0, "pad_token_id": 9, "eos_token_id": 8,
                "unk_token_id": 4294967296})");
  const auto kv = gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""});
  const auto keys = keys_of(kv);
  EXPECT_EQ(
      std::count(keys.begin(), keys.end(), "tokenizer.ggml.padding_token_id"),
      0);
  EXPECT_EQ(
      std::count(keys.begin(), keys.end(), "tokenizer.ggml.unknown_token_id"),
      0);
  EXPECT_EQ(std::get<std::uint64_t>(
                value_of(kv, "tokenizer.ggml.eos_token_id").value),
            8u);
  dir.write("config.json", R"({"pad_token_id": -1})");
  EXPECT_TESSEL_ERROR(gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""}),
                      "E4001", "pad", "-1");
}

TEST(GgufConversion, TokenizerRefusals) {
  TempDir dir;
  EXPECT_TRUE(gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""}).empty());
  dir.write("tokenizer.json", kTokenizer);
  EXPECT_TESSEL_ERROR(gguf_tokenizer_metadata(dir.path(), {6, "qwen2", ""}),
                      "E4001", "'<|im_start|>' has id 6", "vocab_size 6");
  std::string split = kTokenizer;
  const std::string byte_level =
      R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,)";
  split.replace(
      split.find(byte_level), byte_level.size(),
      R"("pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true,)");
  dir.write("tokenizer.json", split);
  EXPECT_TESSEL_ERROR(gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""}),
                      "E4001", "--tokenizer-pre");
  const auto kv = gguf_tokenizer_metadata(dir.path(), {9, "qwen2", "mine"});
  EXPECT_EQ(std::get<std::string>(value_of(kv, "tokenizer.ggml.pre").value),
            "mine");
  std::string wordpiece = kTokenizer;
  wordpiece.replace(wordpiece.find(R"("type": "BPE")"), 13,
                    R"("type": "WordPiece")");
  dir.write("tokenizer.json", wordpiece);
  EXPECT_TESSEL_ERROR(gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""}),
                      "E4001", "WordPiece");
}

TEST(GgufConversion, TokenizerFilesFromGguf) {
  TempDir dir;
  dir.write("tokenizer.json", kTokenizer);
  dir.write(
      "tokenizer_config.json",
      R"({"bos_token": "<s>", "eos_token": "<s>", "chat_template": "T"})");
  GgufFile file;
  file.metadata = gguf_tokenizer_metadata(dir.path(), {9, "qwen2", ""});
  const HfTokenizerFiles files = hf_tokenizer_files(file);
  EXPECT_EQ(files.note, "");
  TempDir back;
  back.write("tokenizer.json", files.tokenizer_json);
  back.write("tokenizer_config.json", files.tokenizer_config_json);
  EXPECT_NE(files.tokenizer_config_json.find(R"("chat_template": "T")"),
            std::string::npos);
  // The rebuilt tokenizer encodes as the original: BOS first, specials
  // found in the text.
  const Tokenizer original = load_hf_tokenizer(dir.path());
  const Tokenizer rebuilt = load_hf_tokenizer(back.path());
  for (const std::string text : {"ab ab", "<|im_start|>ab", "b a ab"}) {
    EXPECT_EQ(rebuilt.encode(text, true, true),
              original.encode(text, true, true))
        << text;
  }
  EXPECT_EQ(rebuilt.encode("ab ab", true, true),
            (std::vector<TokenId>{0, 4, 5}));
  EXPECT_EQ(rebuilt.bos_id(), std::optional<TokenId>(0));
  // No vocabulary, or one tessel cannot spell: notes, not files.
  EXPECT_NE(hf_tokenizer_files(GgufFile{}).note.find("no vocabulary"),
            std::string::npos);
  for (auto& [k, v] : file.metadata) {
    if (k == "tokenizer.ggml.pre") v.value = std::string("starcoder");
  }
  const HfTokenizerFiles partial = hf_tokenizer_files(file);
  EXPECT_TRUE(partial.tokenizer_json.empty());
  EXPECT_FALSE(partial.tokenizer_config_json.empty());
  EXPECT_NE(partial.note.find("starcoder"), std::string::npos);
}

}  // namespace
}  // namespace tessel

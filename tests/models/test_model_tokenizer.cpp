// A checkpoint's tokeniser found from its path: tokenizer.json with the
// end tokens of config.json / generation_config.json and the chat template
// of tokenizer_config.json; a GGUF file's vocabulary with its EOT and
// template; bytes for what `tessel train` writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessel/tessel.hpp"

namespace {

namespace fs = std::filesystem;
using tessel::GgufValue;
using tessel::ModelTokenizer;
using Ids = std::vector<std::int64_t>;
using T = GgufValue::Type;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("tessel_model_tok_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// Byte-level BPE over "a" "b" "c" "Ġ" with merge a+b, and three added
// tokens: <s> (5), </s> (6), <|eot|> (7).
constexpr const char* kTokenizerJson = R"({
  "added_tokens": [
    {"id": 5, "content": "<s>", "special": true, "normalized": false},
    {"id": 6, "content": "</s>", "special": true, "normalized": false},
    {"id": 7, "content": "<|eot|>", "special": true, "normalized": false}],
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "use_regex": true},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4},
            "merges": ["a b"]}
})";

TEST(ModelTokenizer, HuggingFaceDirectory) {
  TempDir dir;
  dir.write("tokenizer.json", kTokenizerJson);
  dir.write("tokenizer_config.json", R"({
    "bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true,
    "chat_template": [{"name": "tool_use", "template": "T"},
                      {"name": "default", "template": "{{ messages }}"}]})");
  dir.write("config.json", R"({"eos_token_id": 6, "vocab_size": 8})");
  dir.write("generation_config.json", R"({"eos_token_id": [6, 7, 99]})");
  const ModelTokenizer tok = ModelTokenizer::load(dir.path());
  EXPECT_EQ(tok.kind(), ModelTokenizer::Kind::HuggingFace);
  EXPECT_EQ(tok.vocab_size(), 8);
  EXPECT_EQ(tok.bos_id(), 5);
  EXPECT_TRUE(tok.adds_bos());
  EXPECT_EQ(tok.encode("ab c"), (Ids{5, 4, 3, 2}));
  EXPECT_EQ(tok.encode("ab c", false), (Ids{4, 3, 2}));
  EXPECT_EQ(tok.decode(Ids{5, 4, 3, 2}), "<s>ab c");
  // 99 is past the vocabulary: never generated, dropped.
  EXPECT_EQ(tok.end_ids(), (Ids{6, 7}));
  EXPECT_TRUE(tok.is_end(7));
  EXPECT_FALSE(tok.is_end(5));
  EXPECT_EQ(tok.chat_template(), "{{ messages }}");
  ASSERT_NE(tok.tokenizer(), nullptr);

  // Without add_bos_token the file's (empty) template decides; a
  // chat_template.jinja file is the template newer transformers write.
  dir.write("tokenizer_config.json", R"({"bos_token": "<s>"})");
  dir.write("chat_template.jinja", "{% for m in messages %}{% endfor %}");
  const ModelTokenizer plain = ModelTokenizer::load(dir.path());
  EXPECT_FALSE(plain.adds_bos());
  EXPECT_EQ(plain.chat_template(), "{% for m in messages %}{% endfor %}");
}

TEST(ModelTokenizer, ChatTemplateEntriesNeedStringNames) {
  TempDir dir;
  dir.write("tokenizer.json", kTokenizerJson);
  dir.write("tokenizer_config.json", R"({
    "chat_template": [{"name": 3, "template": "T"}]})");
  try {
    ModelTokenizer::load(dir.path());
    ADD_FAILURE() << "a numeric template name was accepted";
  } catch (const tessel::Error& e) {
    EXPECT_STREQ(e.code(), "E3001") << e.what();
    EXPECT_NE(std::string(e.what()).find("name"), std::string::npos)
        << e.what();
  }
}

TEST(ModelTokenizer, GgufFile) {
  TempDir dir;
  const auto str = [](std::string s) {
    return GgufValue{T::String, T::U8, std::move(s)};
  };
  std::vector<GgufValue> tokens, types;
  const std::vector<std::string> names = {
      "<unk>", "<s>", "</s>", "<eot>", "\xE2\x96\x81", "h", "\xE2\x96\x81h"};
  for (std::size_t i = 0; i < names.size(); ++i) {
    tokens.push_back(str(names[i]));
    types.push_back({T::I32, T::U8, std::int64_t{i == 0 ? 2 : i < 4 ? 3 : 1}});
  }
  std::vector<GgufValue> scores(names.size(), {T::F32, T::U8, 0.0});
  const fs::path file = dir.path() / "m.gguf";
  tessel::save_gguf(
      file,
      {{"general.architecture", str("llama")},
       {"tokenizer.ggml.model", str("llama")},
       {"tokenizer.ggml.tokens", {T::Array, T::String, tokens}},
       {"tokenizer.ggml.scores", {T::Array, T::F32, scores}},
       {"tokenizer.ggml.token_type", {T::Array, T::I32, types}},
       {"tokenizer.ggml.eot_token_id", {T::U32, T::U8, std::uint64_t{3}}},
       {"tokenizer.chat_template", str("{{ bos_token }}")}},
      std::vector<tessel::Tensor>{});
  const ModelTokenizer tok = ModelTokenizer::load(file);
  EXPECT_EQ(tok.kind(), ModelTokenizer::Kind::Gguf);
  // llama's defaults: BOS 1 added, EOS 2; EOT from the key.
  EXPECT_TRUE(tok.adds_bos());
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.encode("h"), (Ids{1, 6}));
  EXPECT_EQ(tok.end_ids(), (Ids{2, 3}));
  EXPECT_EQ(tok.chat_template(), "{{ bos_token }}");
}

TEST(ModelTokenizer, TrainedCheckpointIsBytes) {
  TempDir dir;
  tessel::DecoderConfig c;  // `tessel train`'s model: 256 tokens
  c.eos_token_id = '\n';
  dir.write("config.json", c.to_json());
  const ModelTokenizer tok = ModelTokenizer::load(dir.path());
  EXPECT_EQ(tok.kind(), ModelTokenizer::Kind::Bytes);
  EXPECT_EQ(tok.tokenizer(), nullptr);
  EXPECT_FALSE(tok.adds_bos());
  EXPECT_EQ(tok.encode("1+2="), (Ids{'1', '+', '2', '='}));
  EXPECT_EQ(tok.end_ids(), (Ids{'\n'}));
  EXPECT_FALSE(tok.chat_template());

  c.vocab_size = 1000;
  dir.write("config.json", c.to_json());
  try {
    ModelTokenizer::load(dir.path());
    FAIL() << "no error for a vocabulary without tokenizer.json";
  } catch (const tessel::Error& e) {
    EXPECT_STREQ(e.code(), "E4001");
    EXPECT_NE(e.message().find("tokenizer.json"), std::string::npos);
  }
  dir.write("generation_config.json", R"({"eos_token_id": "x"})");
  EXPECT_THROW(ModelTokenizer::load(dir.path()), tessel::FormatError);
  EXPECT_THROW(ModelTokenizer::load(dir.path() / "missing.gguf"),
               tessel::IoError);
}

}  // namespace

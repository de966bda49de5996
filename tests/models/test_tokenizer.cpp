// Tokenisers on tiny hand-made vocabularies, with the merges worked out by
// hand in the comments; the peers' agreement on real vocabularies is
// tests/oracle/test_tokenizers.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessel/tessel.hpp"

namespace {

using tessel::GgufFile;
using tessel::GgufValue;
using tessel::TokenId;
using Ids = std::vector<TokenId>;
using T = GgufValue::Type;

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("tessel_tok_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path write(const std::string& name,
                              const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path_ / name;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// A byte-level BPE: "a" "b" "c" "Ġ" (the space byte) and the merges
// a+b (rank 0), ab+c (rank 1), Ġ+a (rank 2); one special added token.
constexpr const char* kByteLevelJson = R"({
  "added_tokens": [{"id": 7, "content": "<|x|>", "special": true,
                    "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<|x|>", "type_id": 0}},
               {"Sequence": {"id": "A", "type_id": 0}}],
    "pair": [], "special_tokens": {"<|x|>": {"id": "<|x|>", "ids": [7],
                                             "tokens": ["<|x|>"]}}},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "dropout": null, "unk_token": null,
            "continuing_subword_prefix": null, "end_of_word_suffix": null,
            "fuse_unk": false, "byte_fallback": false,
            "ignore_merges": false,
            "vocab": {"a": 0, "b": 1, "c": 2, "Ġ": 3, "ab": 4, "abc": 5,
                      "Ġa": 6, "<|x|>": 7},
            "merges": ["a b", "ab c", "Ġ a"]}
})";

TEST(HfTokenizer, ByteLevelBpeHandChecked) {
  TempDir dir;
  const auto tok =
      tessel::load_hf_tokenizer(dir.write("tokenizer.json", kByteLevelJson));
  // "abc ab<|x|>ca": the special token is cut out first; GPT-2's regex
  // cuts "abc ab" into "abc" and " ab". "abc": a+b (rank 0) then ab+c ->
  // [abc]. " ab": a+b (rank 0) beats Ġ+a (rank 2), leaving [Ġ, ab].
  // "ca" has no merge: [c, a].
  EXPECT_EQ(tok.encode("abc ab<|x|>ca", false), (Ids{5, 3, 4, 7, 2, 0}));
  // The template puts <|x|> first.
  EXPECT_EQ(tok.encode("ab", true), (Ids{7, 4}));
  // Without parse_special the token's text is ordinary text: "<|x|>"
  // has no byte of the vocabulary, so nothing comes of it.
  EXPECT_EQ(tok.encode("a<|x|>", false, false), (Ids{0}));
  EXPECT_EQ(tok.decode(Ids{5, 3, 4, 7, 2, 0}), "abc ab<|x|>ca");
  EXPECT_EQ(tok.decode(Ids{5, 3, 4, 7, 2, 0}, true), "abc abca");
  EXPECT_EQ(tok.token_to_piece(3), " ");
  EXPECT_EQ(tok.token_to_id("Ġa"), TokenId{6});
  EXPECT_TRUE(tok.is_special(7));
  EXPECT_EQ(tok.vocab_size(), 8);
}

TEST(HfTokenizer, ConfigSetsBosAndTemplate) {
  TempDir dir;
  dir.write("tokenizer.json", kByteLevelJson);
  dir.write("tokenizer_config.json",
            R"({"bos_token": "<|x|>", "eos_token": {"content": "c"},
                "add_bos_token": false, "add_eos_token": true})");
  const auto tok = tessel::load_hf_tokenizer(dir.path());
  EXPECT_EQ(tok.bos_id(), TokenId{7});
  EXPECT_EQ(tok.eos_id(), TokenId{2});
  // add_bos_token false replaces the file's template; EOS goes last.
  EXPECT_EQ(tok.encode("ab"), (Ids{4, 2}));
}

TEST(HfTokenizer, NfcNormalizerComposes) {
  // "e" + U+0301 is "é" (C3 A9) after NFC: bytes Ã and © merge.
  TempDir dir;
  const auto tok = tessel::load_hf_tokenizer(dir.write("tokenizer.json", R"({
    "normalizer": {"type": "NFC"},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                      "use_regex": true},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"Ã": 0, "©": 1, "Ã©": 2, "e": 3},
              "merges": [["Ã", "©"]]}})"));
  EXPECT_EQ(tok.encode("e\xCC\x81"), (Ids{2}));
  EXPECT_EQ(tok.decode(Ids{2}), "\xC3\xA9");
  // A lone continuation byte decodes as U+FFFD, as tokenizers does.
  EXPECT_EQ(tok.decode(Ids{1}), "\xEF\xBF\xBD");
}

TEST(HfTokenizer, ErrorsNameTheField) {
  TempDir dir;
  const auto expect_e3001 = [&](const std::string& text,
                                const std::string& field) {
    try {
      tessel::load_hf_tokenizer(dir.write("tokenizer.json", text));
      ADD_FAILURE() << "no error for " << field;
    } catch (const tessel::Error& e) {
      EXPECT_STREQ(e.code(), "E3001");
      EXPECT_NE(e.message().find(field), std::string::npos) << e.message();
    }
  };
  expect_e3001(R"({"model": {"type": "WordPiece", "vocab": {}}})",
               "model.type");
  expect_e3001(R"({"model": {"type": "BPE", "vocab": {"a": 0},
                  "merges": ["a a"]}})",
               "model.merges[0]");  // "a"+"a" -> "aa" is no token
  expect_e3001(R"({"model": {"type": "BPE", "vocab": {"a": 0},
                  "merges": ["a"]}})",
               "model.merges[0]");
  expect_e3001(R"({"pre_tokenizer": {"type": "Whitespace"},
                  "model": {"type": "BPE", "vocab": {}, "merges": []}})",
               "pre_tokenizer.type");
  expect_e3001(R"({"model": {"type": "BPE", "vocab": {"a": -1},
                  "merges": []}})",
               "model.vocab.a");
  expect_e3001(R"({"model": )", "tokenizer.json");
  EXPECT_THROW(tessel::load_hf_tokenizer(dir.path() / "missing.json"),
               tessel::IoError);
}

TEST(HfTokenizer, BadTextAndIds) {
  TempDir dir;
  const auto tok =
      tessel::load_hf_tokenizer(dir.write("tokenizer.json", kByteLevelJson));
  try {
    tok.encode("ab\xC3(");
    FAIL();
  } catch (const tessel::FormatError& e) {
    EXPECT_NE(e.message().find("byte 2"), std::string::npos);
  }
  EXPECT_THROW(tok.decode(Ids{8}), tessel::IndexError);
  EXPECT_THROW(tok.token_to_piece(-1), tessel::IndexError);
}

GgufValue str(std::string s) { return {T::String, T::U8, std::move(s)}; }
GgufValue array(T element, std::vector<GgufValue> items) {
  return {T::Array, element, std::move(items)};
}

// A SentencePiece-style vocabulary: <unk> <s> </s>, "▁", "h", "i", "▁h",
// "▁hi" with scores, and one byte token.
GgufFile spm_file() {
  const std::vector<std::pair<std::string, float>> tokens = {
      {"<unk>", 0}, {"<s>", 0}, {"</s>", 0},           {"\xE2\x96\x81", -3},
      {"h", -4},    {"i", -5},  {"\xE2\x96\x81h", -2}, {"\xE2\x96\x81hi", -1},
      {"<0x21>", 0}};
  const std::vector<std::int64_t> types = {2, 3, 3, 1, 1, 1, 1, 1, 6};
  std::vector<GgufValue> names, scores, kinds;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    names.push_back(str(tokens[i].first));
    scores.push_back({T::F32, T::U8, static_cast<double>(tokens[i].second)});
    kinds.push_back({T::I32, T::U8, types[i]});
  }
  GgufFile f;
  f.metadata = {{"tokenizer.ggml.model", str("llama")},
                {"tokenizer.ggml.tokens", array(T::String, names)},
                {"tokenizer.ggml.scores", array(T::F32, scores)},
                {"tokenizer.ggml.token_type", array(T::I32, kinds)}};
  return f;
}

TEST(GgufTokenizer, SpmHandChecked) {
  const auto tok = tessel::tokenizer_from_gguf(spm_file());
  // "hi!" -> "▁hi!" (a space first, as SentencePiece adds). Bigrams in
  // the vocabulary: "▁h" (-2); "hi", "i!" are none. After it, "▁hi" (-1)
  // merges. "!" is no token: its byte token <0x21>. BOS (1) leads.
  EXPECT_EQ(tok.encode("hi!"), (Ids{1, 7, 8}));
  EXPECT_EQ(tok.encode("hi!", false), (Ids{7, 8}));
  // A control token in the text is that token with parse_special; the
  // text after it gets the leading space again.
  EXPECT_EQ(tok.encode("</s>hi", false), (Ids{2, 7}));
  // llama_detokenize: the first piece would lose one leading space, but
  // the first piece is <s>'s.
  EXPECT_EQ(tok.decode(Ids{1, 7, 8}), "<s> hi!");
  EXPECT_EQ(tok.decode(Ids{1, 7, 8}, true), " hi!");
  EXPECT_EQ(tok.decode(Ids{7, 8}), "hi!");
  EXPECT_EQ(tok.token_to_piece(8), "!");
  EXPECT_EQ(tok.bos_id(), TokenId{1});
  EXPECT_EQ(tok.eos_id(), TokenId{2});
}

TEST(GgufTokenizer, UnsupportedValuesAreNamed) {
  GgufFile f = spm_file();
  f.metadata[0].second = str("bert");
  try {
    tessel::tokenizer_from_gguf(f);
    FAIL();
  } catch (const tessel::Error& e) {
    EXPECT_STREQ(e.code(), "E3001");
    EXPECT_NE(e.message().find("tokenizer.ggml.model"), std::string::npos);
    EXPECT_NE(e.message().find("gpt2"), std::string::npos);
  }
  f.metadata[0].second = str("gpt2");
  f.metadata.push_back({"tokenizer.ggml.pre", str("no-such-pre")});
  try {
    tessel::tokenizer_from_gguf(f);
    FAIL();
  } catch (const tessel::Error& e) {
    EXPECT_NE(e.message().find("no-such-pre"), std::string::npos);
    EXPECT_NE(e.message().find("llama-bpe"), std::string::npos);
  }
  GgufFile g = spm_file();
  g.metadata[1].second = array(T::I32, {});
  EXPECT_THROW(tessel::tokenizer_from_gguf(g), tessel::FormatError);
}

TEST(ByteTokenizer, StillRoundTrips) {
  const tessel::ByteTokenizer tok;
  EXPECT_EQ(tok.decode(tok.encode("h\xC3\xA9")), "h\xC3\xA9");
}

}  // namespace

// `tessel generate` and `tessel perplexity` end to end on a tiny random
// model saved twice, as an HF directory (safetensors + tokenizer.json) and
// as a GGUF file with the same vocabulary embedded: both give the same
// tokens, the streamed text is the completion, end tokens stop generation,
// a prompt past the context is refused or truncated, and perplexity equals
// a plain loop over CausalLM::logits.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "models/tokenizer/utf8.hpp"
#include "tessel/tessel.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using tessel::GgufValue;
using T = GgufValue::Type;
using Ids = std::vector<std::int64_t>;

// GPT-2's byte alphabet: printable bytes stand for themselves, the others
// for the code points from U+0100 on.
std::string byte_token(int byte) {
  int cp = byte;
  const bool printable = (byte >= 33 && byte <= 126) ||
                         (byte >= 161 && byte <= 172) || byte >= 174;
  if (!printable) {
    int n = 0;
    for (int b = 0; b < byte; ++b) {
      n += !((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174);
    }
    cp = 256 + n;
  }
  std::string s;
  tessel::tok::utf8_append(s, static_cast<std::uint32_t>(cp));
  return s;
}

// The vocabulary: the 256 bytes, a few merges, then <|endoftext|> (BOS)
// and <|im_end|> (EOS).
struct Vocabulary {
  std::vector<std::string> tokens;
  std::vector<std::pair<std::string, std::string>> merges;
  std::int64_t bos = 0;
  std::int64_t eos = 0;
};

Vocabulary make_vocabulary() {
  Vocabulary v;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_token(b));
  const std::string space = byte_token(' ');
  v.merges = {{space, "t"}, {"h", "e"},   {space + "t", "he"},
              {"a", "t"},   {space, "c"}, {space + "c", "at"},
              {"o", "n"},   {space, "s"}};
  for (const auto& [a, b] : v.merges) v.tokens.push_back(a + b);
  v.bos = static_cast<std::int64_t>(v.tokens.size());
  v.tokens.push_back("<|endoftext|>");
  v.eos = static_cast<std::int64_t>(v.tokens.size());
  v.tokens.push_back("<|im_end|>");
  return v;
}

// Qwen2's split (tokenizer.json form; GGUF's "qwen2" pre is the same).
constexpr const char* kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

json tokenizer_json(const Vocabulary& v) {
  json vocab = json::object();
  for (std::int64_t i = 0; i < v.bos; ++i) {
    vocab[v.tokens[static_cast<std::size_t>(i)]] = i;
  }
  json merges = json::array();
  for (const auto& [a, b] : v.merges) merges.push_back(a + " " + b);
  json added = json::array();
  for (const std::int64_t id : {v.bos, v.eos}) {
    added.push_back({{"id", id},
                     {"content", v.tokens[static_cast<std::size_t>(id)]},
                     {"special", true},
                     {"normalized", false}});
  }
  return {{"added_tokens", added},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", kQwen2Split}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"},
               {"add_prefix_space", false},
               {"use_regex", false}}}}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}}};
}

std::vector<std::pair<std::string, GgufValue>> gguf_vocabulary(
    const Vocabulary& v, std::optional<std::int64_t> eot) {
  const auto str = [](std::string s) {
    return GgufValue{T::String, T::U8, std::move(s)};
  };
  const auto u32 = [](std::int64_t i) {
    return GgufValue{T::U32, T::U8, static_cast<std::uint64_t>(i)};
  };
  std::vector<GgufValue> tokens, types, merges;
  for (std::size_t i = 0; i < v.tokens.size(); ++i) {
    tokens.push_back(str(v.tokens[i]));
    types.push_back(
        {T::I32, T::U8, std::int64_t{i >= 256 + v.merges.size() ? 3 : 1}});
  }
  for (const auto& [a, b] : v.merges) merges.push_back(str(a + " " + b));
  std::vector<std::pair<std::string, GgufValue>> m = {
      {"tokenizer.ggml.model", str("gpt2")},
      {"tokenizer.ggml.pre", str("qwen2")},
      {"tokenizer.ggml.tokens", {T::Array, T::String, tokens}},
      {"tokenizer.ggml.token_type", {T::Array, T::I32, types}},
      {"tokenizer.ggml.merges", {T::Array, T::String, merges}},
      {"tokenizer.ggml.bos_token_id", u32(v.bos)},
      {"tokenizer.ggml.eos_token_id", u32(v.eos)},
      {"tokenizer.ggml.add_bos_token", {T::Bool, T::U8, true}},
      {"tokenizer.chat_template", str("{{ messages }}")}};
  if (eot) m.emplace_back("tokenizer.ggml.eot_token_id", u32(*eot));
  return m;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class RunCommands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() /
            ("tessel_run_" + std::to_string(::getpid()));
    fs::create_directories(root_ / "hf");
    vocab_ = make_vocabulary();
    tessel::DecoderConfig c;
    c.model_type = "qwen3";
    c.vocab_size = static_cast<std::int64_t>(vocab_.tokens.size());
    c.hidden_size = 32;
    c.intermediate_size = 64;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    c.max_position_embeddings = 32;
    // Large weights spread the logits, so greedy choices are not near ties.
    c.initializer_range = 0.3;
    c.bos_token_id = vocab_.bos;
    c.eos_token_id = vocab_.eos;
    lm_ = new tessel::CausalLM(c, 7);
    lm_->save(root_ / "hf");
    write_file(root_ / "hf" / "tokenizer.json", tokenizer_json(vocab_).dump());
    write_file(root_ / "hf" / "tokenizer_config.json",
               json{{"bos_token", "<|endoftext|>"},
                    {"eos_token", "<|im_end|>"},
                    {"add_bos_token", true},
                    {"chat_template", "{{ messages }}"}}
                   .dump());
    save_gguf(root_ / "model.gguf", std::nullopt);
  }
  static void TearDownTestSuite() {
    delete lm_;
    fs::remove_all(root_);
  }

  static void save_gguf(const fs::path& path, std::optional<std::int64_t> eot) {
    auto metadata = tessel::gguf_decoder_metadata(lm_->config());
    for (auto& kv : gguf_vocabulary(vocab_, eot)) metadata.push_back(kv);
    std::vector<tessel::Tensor> tensors;
    for (tessel::Tensor t : lm_->state_tensors()) {
      const std::string name = *tessel::gguf_tensor_name(t.name());
      tensors.push_back(t.set_name(name));
    }
    tessel::save_gguf(path, metadata, tensors);
  }

  static Result run(const std::vector<std::string>& args) {
    std::string cmd = quoted(TESSEL_CLI);
    for (const auto& a : args) cmd += " " + quoted(a);
    const fs::path err = root_ / "stderr.txt";
    cmd += " 2>" + quoted(err.string());
    Result r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = ::pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err, std::ios::binary);
    r.err.assign(std::istreambuf_iterator<char>(in), {});
    return r;
  }

  static json generate_json(const fs::path& model, const std::string& prompt,
                            std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"generate", "--model", model.string(),
                                     "--prompt", prompt,    "--json"};
    args.insert(args.end(), more.begin(), more.end());
    const Result r = run(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out);
  }

  static inline fs::path root_;
  static inline Vocabulary vocab_;
  static inline tessel::CausalLM* lm_ = nullptr;
};

constexpr const char* kPrompt = "the cat sat on the mat";

TEST_F(RunCommands, DirectoryAndGgufGiveTheSameGreedyText) {
  const json hf = generate_json(root_ / "hf", kPrompt, {"--max-tokens", "12"});
  const json gguf =
      generate_json(root_ / "model.gguf", kPrompt, {"--max-tokens", "12"});
  EXPECT_EQ(hf["tokens"], 12);
  EXPECT_EQ(hf["stop"], "max_tokens");
  EXPECT_EQ(hf["token_ids"], gguf["token_ids"]);
  EXPECT_EQ(hf["prompt_tokens"], gguf["prompt_tokens"]);
  // BOS, then "the" "cat" ... as both vocabularies encode them.
  const auto tok = tessel::ModelTokenizer::load(root_ / "hf");
  EXPECT_EQ(hf["prompt_tokens"], tok.encode(kPrompt).size());
  EXPECT_EQ(tok.encode(kPrompt).front(), vocab_.bos);
  EXPECT_EQ(hf["completion"], tok.decode(hf["token_ids"].get<Ids>()));

  // The streamed text is the completion: tokenizer.json text for the
  // directory, llama.cpp's raw bytes for GGUF (the same bytes, read
  // lossily as tokenizer.json's decoder reads them).
  const Result hf_text = run({"generate", "--model", (root_ / "hf").string(),
                              "--prompt", kPrompt, "--max-tokens", "12"});
  ASSERT_EQ(hf_text.rc, 0) << hf_text.err;
  std::string completion = hf["completion"];
  EXPECT_EQ(hf_text.out,
            kPrompt + completion + (completion.ends_with('\n') ? "" : "\n"));
  const Result gguf_text =
      run({"generate", "--model", (root_ / "model.gguf").string(), "--prompt",
           kPrompt, "--max-tokens", "12"});
  ASSERT_EQ(gguf_text.rc, 0) << gguf_text.err;
  const auto gguf_tok = tessel::ModelTokenizer::load(root_ / "model.gguf");
  const std::string raw = gguf_tok.decode(gguf["token_ids"].get<Ids>());
  EXPECT_EQ(gguf_text.out, kPrompt + raw + (raw.ends_with('\n') ? "" : "\n"));
  EXPECT_EQ(tessel::tok::utf8_lossy(raw), completion);
  // Weights read into memory instead of mapped: the same tokens.
  const Result no_mmap =
      run({"generate", "--model", (root_ / "model.gguf").string(), "--prompt",
           kPrompt, "--max-tokens", "12", "--no-mmap"});
  ASSERT_EQ(no_mmap.rc, 0) << no_mmap.err;
  EXPECT_EQ(no_mmap.out, gguf_text.out);
  // Speeds go to stderr, never into the text.
  EXPECT_TRUE(std::regex_search(
      hf_text.err,
      std::regex(fmt::format(R"(prompt: {} tokens, [0-9.]+ tok/s; decode: 12 )"
                             R"(tokens, [0-9.]+ tok/s)",
                             tok.encode(kPrompt).size()))))
      << hf_text.err;
}

TEST_F(RunCommands, CacheTypeReachesTheKVCache) {
  // f32 by default; f16 and bf16 keep the keys and values in 16 bits. The
  // greedy tokens of a model this small need not move, the scores do:
  // perplexity shows it (tests/oracle/test_perplexity.py compares f16
  // with llama.cpp's f16 cache).
  const json exact =
      generate_json(root_ / "model.gguf", kPrompt, {"--max-tokens", "4"});
  EXPECT_EQ(exact["cache_type"], "f32");
  for (const char* type : {"f16", "bf16"}) {
    const json j = generate_json(root_ / "model.gguf", kPrompt,
                                 {"--max-tokens", "4", "--cache-type", type});
    EXPECT_EQ(j["cache_type"], type);
    EXPECT_EQ(j["tokens"], 4);
  }
  const Result refused =
      run({"generate", "--model", (root_ / "model.gguf").string(), "--prompt",
           kPrompt, "--cache-type", "f64"});
  EXPECT_NE(refused.rc, 0);
  EXPECT_NE(refused.err.find("--cache-type"), std::string::npos) << refused.err;
  // A quantised cache needs heads of whole blocks; this model's are 8 wide.
  const Result small =
      run({"generate", "--model", (root_ / "model.gguf").string(), "--prompt",
           kPrompt, "--cache-type", "q8_0"});
  EXPECT_NE(small.rc, 0);
  EXPECT_NE(small.err.find("E2102"), std::string::npos) << small.err;
  EXPECT_NE(small.err.find("head_dim 8"), std::string::npos) << small.err;
}

TEST_F(RunCommands, EndTokensStopGeneration) {
  const json free = generate_json(root_ / "hf", kPrompt, {"--max-tokens", "8"});
  const Ids ids = free["token_ids"].get<Ids>();
  ASSERT_EQ(ids.size(), 8u);
  // The first token not seen before it, past the first, becomes an end
  // token: generation stops there, without printing it.
  std::size_t k = 1;
  while (k + 1 < ids.size() &&
         std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k),
                   ids[k]) != ids.begin() + static_cast<std::ptrdiff_t>(k)) {
    ++k;
  }
  const Ids before(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k));
  const fs::path dir = root_ / "hf_eos";
  fs::copy(root_ / "hf", dir);
  write_file(dir / "generation_config.json",
             json{{"eos_token_id", {vocab_.eos, ids[k]}}}.dump());
  const json stopped = generate_json(dir, kPrompt, {"--max-tokens", "8"});
  EXPECT_EQ(stopped["token_ids"].get<Ids>(), before);
  EXPECT_EQ(stopped["stop"], "eos");
  EXPECT_EQ(stopped["end_token_id"], ids[k]);
  EXPECT_TRUE(free["end_token_id"].is_null());
  // GGUF's end-of-turn token does the same.
  save_gguf(root_ / "eot.gguf", ids[k]);
  const json gguf =
      generate_json(root_ / "eot.gguf", kPrompt, {"--max-tokens", "8"});
  EXPECT_EQ(gguf["token_ids"].get<Ids>(), before);
  EXPECT_EQ(gguf["stop"], "eos");
}

TEST_F(RunCommands, SampledGenerationFollowsTheSeed) {
  const std::vector<std::string> sampling = {
      "--max-tokens", "10",      "--temperature", "0.9",    "--top-k",
      "20",           "--top-p", "0.95",          "--seed", "11"};
  const json a = generate_json(root_ / "hf", kPrompt, sampling);
  const json b = generate_json(root_ / "model.gguf", kPrompt, sampling);
  EXPECT_EQ(a["token_ids"], b["token_ids"]);
  EXPECT_EQ(a["tokens"], 10);
}

TEST_F(RunCommands, PromptPastTheContext) {
  std::string prompt;
  for (int i = 0; i < 8; ++i) prompt += "the cat sat on the mat. ";
  const std::string hf = (root_ / "hf").string();
  Result r = run({"generate", "--model", hf, "--prompt", prompt});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("E2302"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--truncate"), std::string::npos) << r.err;
  // --truncate keeps the last 28 tokens (BOS first), leaving room for 4.
  const json kept =
      generate_json(hf, prompt, {"--truncate", "--max-tokens", "4"});
  EXPECT_EQ(kept["prompt_tokens"], 28);
  EXPECT_EQ(kept["tokens"], 4);
  EXPECT_EQ(kept["context"], 32);
  // A context past the model's positions is refused; a short one ends
  // generation when it is full.
  r = run({"generate", "--model", hf, "--prompt", "the", "--ctx", "33"});
  EXPECT_EQ(r.rc, 4);
  EXPECT_NE(r.err.find("E4001"), std::string::npos);
  const json full =
      generate_json(hf, "the", {"--ctx", "5", "--max-tokens", "9"});
  // The cache takes 5 positions; the last token sampled needs none.
  EXPECT_EQ(full["tokens"], 5 - full["prompt_tokens"].get<int>() + 1);
  EXPECT_EQ(full["stop"], "context");
}

TEST_F(RunCommands, HugeMaxTokensStopsAtTheContext) {
  // --max-tokens is clamped before it is added to the prompt's length.
  const json j = generate_json(root_ / "hf", "the",
                               {"--max-tokens", "9223372036854775807"});
  EXPECT_EQ(j["context"], 32);
  EXPECT_TRUE(j["stop"] == "context" || j["stop"] == "eos") << j.dump();
}

TEST_F(RunCommands, PaddedEmbeddingRowsAreNeverSampled) {
  // A model with more rows than its tokenizer has tokens (Qwen2.5's
  // 151936 against 151665): ids without a token are never generated.
  tessel::DecoderConfig c = lm_->config();
  const auto tokens = static_cast<std::int64_t>(vocab_.tokens.size());
  c.vocab_size = tokens + 200;
  const fs::path dir = root_ / "padded";
  fs::create_directories(dir);
  tessel::CausalLM(c, 9).save(dir);
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
    fs::copy_file(root_ / "hf" / f, dir / f);
  }
  // Hot sampling is near-uniform over the rows: unmasked, most steps
  // would draw one of the 200 without a token.
  const json j = generate_json(
      dir, kPrompt,
      {"--max-tokens", "20", "--temperature", "100", "--seed", "3"});
  const Ids ids = j["token_ids"].get<Ids>();
  EXPECT_GE(ids.size(), 10u);
  for (const std::int64_t id : ids) EXPECT_LT(id, tokens);
}

TEST_F(RunCommands, ChatIsRefusedWithTheReason) {
  for (const fs::path& model : {root_ / "hf", root_ / "model.gguf"}) {
    const Result r = run(
        {"generate", "--model", model.string(), "--prompt", "hi", "--chat"});
    EXPECT_EQ(r.rc, 4);
    EXPECT_NE(r.err.find("E4001"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("has a chat template"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Jinja"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--prompt"), std::string::npos) << r.err;
  }
}

// llama.cpp's rule written out plainly: whole windows of `ctx` tokens,
// BOS first in each, the second half scored by log-softmax in double.
double reference_perplexity(const tessel::CausalLM& lm, const Ids& tokens,
                            std::int64_t ctx, std::int64_t bos) {
  const auto n = static_cast<std::int64_t>(tokens.size());
  double nll = 0;
  std::int64_t count = 0;
  for (std::int64_t w = 0; w < n / ctx; ++w) {
    Ids window(tokens.begin() + w * ctx, tokens.begin() + (w + 1) * ctx);
    window[0] = bos;
    const tessel::Tensor logits =
        lm.logits(tessel::from_vector(window, {1, ctx})).select(0, 0);
    for (std::int64_t j = ctx / 2; j < ctx - 1; ++j) {
      const std::int64_t target =
          tokens[static_cast<std::size_t>(w * ctx + j + 1)];
      double top = -INFINITY;
      for (std::int64_t v = 0; v < logits.size(1); ++v) {
        top = std::max(top, static_cast<double>(logits.at<float>({j, v})));
      }
      double sum = 0;
      for (std::int64_t v = 0; v < logits.size(1); ++v) {
        sum += std::exp(static_cast<double>(logits.at<float>({j, v})) - top);
      }
      nll -= static_cast<double>(logits.at<float>({j, target})) - top -
             std::log(sum);
      ++count;
    }
  }
  return std::exp(nll / static_cast<double>(count));
}

constexpr const char* kText =
    "the cat sat on the mat. on the mat the cat sat, and the cat ate.\n"
    "a rat sat on the hat; the hat sat on the cat. at last the mat sat on "
    "the rat, the cat, the hat and on the cat that sat on the mat.\n";

TEST_F(RunCommands, PerplexityIsLlamaCppsRule) {
  const fs::path text = root_ / "text.txt";
  write_file(text, kText);
  const auto tok = tessel::ModelTokenizer::load(root_ / "hf");
  // llama.cpp drops the file's last newline and puts BOS first.
  std::string body = kText;
  body.pop_back();
  Ids tokens = tok.encode(body, false, false);
  tokens.insert(tokens.begin(), vocab_.bos);
  ASSERT_GE(tokens.size(), 48u);
  const double expected = reference_perplexity(*lm_, tokens, 16, vocab_.bos);

  for (const fs::path& model : {root_ / "hf", root_ / "model.gguf"}) {
    // --no-mmap on the GGUF file: the same numbers from weights in memory.
    std::vector<std::string> args = {
        "perplexity",  "--model", model.string(), "--file",
        text.string(), "--ctx",   "16",           "--json"};
    if (model.extension() == ".gguf") args.push_back("--no-mmap");
    const Result r = run(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["tokens"], tokens.size()) << model;
    EXPECT_EQ(j["windows"], tokens.size() / 16) << model;
    EXPECT_EQ(j["scored"], tokens.size() / 16 * 7) << model;
    EXPECT_EQ(j["add_bos"], true);
    EXPECT_NEAR(j["perplexity"].get<double>(), expected, 1e-5 * expected)
        << model;
    EXPECT_GT(j["perplexity_error"].get<double>(), 0);
    EXPECT_EQ(j["running_perplexity"].size(), tokens.size() / 16);
    EXPECT_EQ(j["running_perplexity"].back(), j["perplexity"]);
  }
  // Piped, the output is llama-perplexity's and stderr stays quiet.
  const Result r = run({"perplexity", "--model", (root_ / "hf").string(),
                        "--file", text.string(), "--ctx", "16"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"((\[[0-9]+\][0-9]+\.[0-9]{4},)+)"
                        R"(\nFinal estimate: PPL = [0-9]+\.[0-9]{4} \+/- )"
                        R"([0-9]+\.[0-9]{5}\n)")))
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(RunCommands, PerplexityNeedsTwoWindows) {
  const fs::path text = root_ / "short.txt";
  write_file(text, "the cat sat on the mat");
  Result r = run({"perplexity", "--model", (root_ / "hf").string(), "--file",
                  text.string(), "--ctx", "16"});
  EXPECT_EQ(r.rc, 4);
  EXPECT_NE(r.err.find("E4001"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at least 32"), std::string::npos) << r.err;
  // The default context of 512 is past this model's 32 positions.
  write_file(text, kText);
  r = run({"perplexity", "--model", (root_ / "hf").string(), "--file",
           text.string(), "--json"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("clamped to the model's 32 positions"),
            std::string::npos);
  EXPECT_EQ(json::parse(r.out)["context"], 32);
}

TEST_F(RunCommands, TrainedCheckpointsUseBytes) {
  // What `tessel train` writes: no tokenizer.json, 256 byte tokens.
  tessel::DecoderConfig c;
  c.num_hidden_layers = 1;
  c.eos_token_id = '\n';
  const fs::path dir = root_ / "trained";
  fs::create_directories(dir);
  tessel::CausalLM(c, 3).save(dir);
  const json g = generate_json(dir, "12+34=", {"--max-tokens", "5"});
  EXPECT_EQ(g["prompt_tokens"], 6);
  const fs::path text = root_ / "bytes.txt";
  write_file(text, std::string(kText) + kText);
  const Result r = run({"perplexity", "--model", dir.string(), "--file",
                        text.string(), "--ctx", "64", "--json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["add_bos"], false);
  EXPECT_EQ(j["tokens"], 2 * std::string(kText).size() - 1);
}

}  // namespace

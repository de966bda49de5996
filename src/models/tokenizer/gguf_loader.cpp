// tokenizer_from_gguf: a GGUF file's tokenizer.ggml.* keys read as
// llama.cpp's llama_vocab::load reads them (defaults, key overrides,
// pre-tokeniser table), into the pipeline of tokenizer_impl.hpp.
#include <algorithm>
#include <array>

#include "core/check.hpp"
#include "models/tokenizer/tokenizer_impl.hpp"
#include "models/tokenizer/utf8.hpp"
#include "tessel/io/gguf.hpp"

namespace tessel {

namespace {

constexpr const char* kOp = "tokenizer_from_gguf";

// llama.cpp's pre-tokenisers that tessel reproduces: the names of
// llama-vocab.cpp mapping to one regex chain, and the flags they set.
struct PreType {
  std::vector<std::string_view> names;
  std::vector<std::string> patterns;
  bool ignore_merges = false;
  bool add_bos = false;
  bool clean_spaces = true;
};

// llama.cpp's adaptation of Llama-3's pattern (case-insensitive
// contractions spelt out); Qwen2's differs in single digits.
constexpr const char* kLlama3Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen35Pattern =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::vector<PreType>& pre_types() {
  static const std::vector<PreType> table = {
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
        "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo",
        "exaone4"},
       {tok::kGpt2Pattern}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
        "midm-2.0", "lfm2", "jina-v5-nano"},
       {kLlama3Pattern},
       true,
       true},
      {{"dbrx", "smaug-bpe"}, {kLlama3Pattern}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"},
       {kQwen2Pattern},
       false,
       false,
       false},
      {{"stablelm2"}, {kQwen2Pattern}},
      {{"qwen35"}, {kQwen35Pattern}, false, false, false},
      {{"starcoder", "refact"}, {R"(\p{N})", tok::kGpt2Pattern}},
      {{"command-r", "smollm"},
       {R"(\p{N})", tok::kGpt2Pattern},
       false,
       false,
       false},
  };
  return table;
}

std::string supported_pre_types() {
  std::string s;
  for (const PreType& p : pre_types()) {
    for (const auto name : p.names) {
      if (!s.empty()) s += ", ";
      s += name;
    }
  }
  return s;
}

const GgufValue* find(const GgufFile& f, const char* key) {
  return f.find(key);
}

std::string get_string(const GgufFile& f, const char* key) {
  const GgufValue* v = find(f, key);
  TESSEL_CHECK(v != nullptr, MalformedFile, kOp, "{} is missing", key);
  const auto* s = std::get_if<std::string>(&v->value);
  TESSEL_CHECK(s != nullptr, MalformedFile, kOp, "{} is not a string", key);
  return *s;
}

const std::vector<GgufValue>* get_array(
    const GgufFile& f, const char* key,
    std::initializer_list<GgufValue::Type> element_types) {
  const GgufValue* v = find(f, key);
  if (v == nullptr) return nullptr;
  const auto* a = std::get_if<std::vector<GgufValue>>(&v->value);
  TESSEL_CHECK(
      a != nullptr && std::find(element_types.begin(), element_types.end(),
                                v->element_type) != element_types.end(),
      MalformedFile, kOp, "{} is not an array of the expected type", key);
  return a;
}

std::optional<bool> get_bool(const GgufFile& f, const char* key) {
  const GgufValue* v = find(f, key);
  if (v == nullptr) return std::nullopt;
  const auto* b = std::get_if<bool>(&v->value);
  TESSEL_CHECK(b != nullptr, MalformedFile, kOp, "{} is not a bool", key);
  return *b;
}

std::optional<std::int64_t> get_int(const GgufFile& f, const char* key) {
  const GgufValue* v = find(f, key);
  if (v == nullptr) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&v->value)) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(*u, INT64_MAX));
  }
  const auto* i = std::get_if<std::int64_t>(&v->value);
  TESSEL_CHECK(i != nullptr, MalformedFile, kOp, "{} is not an integer", key);
  return *i;
}

}  // namespace

Tokenizer tokenizer_from_gguf(const GgufFile& file) {
  auto t = std::make_unique<Tokenizer::Impl>();
  t->flavor = Tokenizer::Impl::Flavor::LlamaCpp;
  const std::string model = get_string(file, "tokenizer.ggml.model");
  const bool spm = model == "llama";
  TESSEL_CHECK(spm || model == "gpt2", MalformedFile, kOp,
               "tokenizer.ggml.model: {:?} is not supported (supported: "
               "llama, gpt2)",
               model);

  using T = GgufValue::Type;
  const auto* tokens = get_array(file, "tokenizer.ggml.tokens", {T::String});
  TESSEL_CHECK(tokens != nullptr, MalformedFile, kOp,
               "tokenizer.ggml.tokens is missing");
  const std::size_t n = tokens->size();
  TESSEL_CHECK(n > 0 && n <= 0x7FFFFFFF, MalformedFile, kOp,
               "tokenizer.ggml.tokens holds {} tokens", n);
  const auto* scores =
      get_array(file, "tokenizer.ggml.scores", {T::F32, T::I32});
  const auto* types = get_array(file, "tokenizer.ggml.token_type", {T::I32});
  TESSEL_CHECK(!scores || scores->size() >= n, MalformedFile, kOp,
               "tokenizer.ggml.scores has {} entries for {} tokens",
               scores ? scores->size() : 0, n);
  TESSEL_CHECK(!types || types->size() >= n, MalformedFile, kOp,
               "tokenizer.ggml.token_type has {} entries for {} tokens",
               types ? types->size() : 0, n);

  std::vector<float> score(n, 0.0f);
  t->tokens.tokens.resize(n);
  t->types.assign(n, GgufTokenType::Normal);
  t->special.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    std::string word = std::get<std::string>((*tokens)[i].value);
    // llama.cpp names empty tokens so that every id has a distinct string.
    if (word.empty()) word = "[EMPTY_" + std::to_string(i) + "]";
    t->tokens.ids[word] = static_cast<TokenId>(i);  // the last id wins
    t->tokens.tokens[i] = std::move(word);
    if (scores) {
      const auto& v = (*scores)[i].value;
      score[i] = std::holds_alternative<double>(v)
                     ? static_cast<float>(std::get<double>(v))
                     : static_cast<float>(std::get<std::int64_t>(v));
    }
    if (types) {
      const std::int64_t ty = std::get<std::int64_t>((*types)[i].value);
      t->types[i] = ty >= 1 && ty <= 6 ? static_cast<GgufTokenType>(ty)
                                       : GgufTokenType::Undefined;
    }
    t->special[i] = t->types[i] == GgufTokenType::Control ||
                    t->types[i] == GgufTokenType::Unknown;
  }

  // Special tokens (llama.cpp's cache_special_tokens): split out before
  // anything else, control and unknown ones only with parse_special.
  std::vector<TokenId> special_ids;
  std::vector<bool> parse_only;
  for (std::size_t i = 0; i < n; ++i) {
    const GgufTokenType ty = t->types[i];
    // A token that is not UTF-8 could only match inside a character of a
    // (valid) text and would leave pieces that are not UTF-8, which the
    // pre-tokeniser's regexes must not see: such tokens are not split out.
    if (tok::utf8_invalid_offset(t->tokens.tokens[i]) !=
        std::string_view::npos) {
      continue;
    }
    if (ty == GgufTokenType::Control || ty == GgufTokenType::Unknown ||
        ty == GgufTokenType::UserDefined) {
      special_ids.push_back(static_cast<TokenId>(i));
      parse_only.push_back(ty != GgufTokenType::UserDefined);
    }
  }
  t->partition = tok::LongestFirstPartition(t->tokens, std::move(special_ids),
                                            std::move(parse_only));

  std::int64_t bos = -1, eos = -1;
  if (spm) {
    bos = 1;
    eos = 2;
    t->add_bos = true;
    t->add_space_prefix = true;
    t->spm = std::make_unique<tok::SpmModel>(t->tokens, std::move(score));
  } else {
    bos = 11;
    eos = 11;
    const GgufValue* pre_value = find(file, "tokenizer.ggml.pre");
    const std::string pre =
        pre_value ? get_string(file, "tokenizer.ggml.pre") : std::string();
    const PreType* found = nullptr;
    for (const PreType& p : pre_types()) {
      if (std::find(p.names.begin(), p.names.end(), pre) != p.names.end()) {
        found = &p;
      }
    }
    TESSEL_CHECK(found != nullptr, MalformedFile, kOp,
                 "tokenizer.ggml.pre: {:?} is not supported (supported: {})",
                 pre_value ? pre
                           : std::string("(missing: llama.cpp's "
                                         "\"default\")"),
                 supported_pre_types());
    t->add_bos = found->add_bos;
    t->clean_spaces = found->clean_spaces;
    t->pre =
        tok::PreTokenizer::from_patterns(found->patterns, "tokenizer.ggml.pre");

    const auto* merges = get_array(file, "tokenizer.ggml.merges", {T::String});
    TESSEL_CHECK(merges != nullptr, MalformedFile, kOp,
                 "tokenizer.ggml.merges is missing");
    std::vector<std::pair<std::string, std::string>> pairs;
    pairs.reserve(merges->size());
    for (const GgufValue& m : *merges) {
      const std::string& word = std::get<std::string>(m.value);
      const std::size_t space = word.find(' ', 1);
      if (space == std::string::npos) {
        pairs.emplace_back();
      } else {
        pairs.emplace_back(word.substr(0, space), word.substr(space + 1));
      }
    }
    tok::BpeOptions options;
    options.byte_level = true;
    options.ignore_merges = found->ignore_merges;
    options.unknown_blocks_merges = true;
    t->bpe = std::make_unique<tok::BpeModel>(t->tokens, pairs, options, false,
                                             "tokenizer.ggml.merges", kOp);
  }

  // Ids from the file replace the defaults when they lie in the
  // vocabulary; defaults outside it mean no such token.
  const auto pick = [&](const char* key,
                        std::int64_t fallback) -> std::optional<TokenId> {
    std::int64_t id = fallback;
    if (const auto v = get_int(file, key)) {
      if (*v >= 0 && *v < static_cast<std::int64_t>(n)) id = *v;
    }
    if (id < 0 || id >= static_cast<std::int64_t>(n)) return std::nullopt;
    return static_cast<TokenId>(id);
  };
  t->bos = pick("tokenizer.ggml.bos_token_id", bos);
  t->eos = pick("tokenizer.ggml.eos_token_id", eos);
  if (const auto v = get_bool(file, "tokenizer.ggml.add_bos_token")) {
    t->add_bos = *v;
  }
  if (const auto v = get_bool(file, "tokenizer.ggml.add_eos_token")) {
    t->add_eos = *v;
  }
  if (const auto v = get_bool(file, "tokenizer.ggml.add_space_prefix")) {
    t->add_space_prefix = *v;
  }
  TESSEL_CHECK(!t->add_bos || t->bos, MalformedFile, kOp,
               "tokenizer.ggml.add_bos_token is true but there is no BOS "
               "token");
  TESSEL_CHECK(!t->add_eos || t->eos, MalformedFile, kOp,
               "tokenizer.ggml.add_eos_token is true but there is no EOS "
               "token");
  return Tokenizer(std::move(t));
}

}  // namespace tessel

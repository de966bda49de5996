// load_hf_tokenizer: tokenizer.json (and tokenizer_config.json beside it)
// into the pipeline of tokenizer_impl.hpp. Only BPE models are read; every
// part the file names must be one tessel implements exactly, else E3001
// naming the field and what is supported.
#include <nlohmann/json.hpp>

#include "io/json_strict.hpp"
#include "io/read_file.hpp"
#include "models/tokenizer/json_fields.hpp"
#include "models/tokenizer/tokenizer_impl.hpp"

namespace tessel {

namespace {

using nlohmann::json;
using tok::json_array;
using tok::json_bool;
using tok::json_id;
using tok::json_member;
using tok::json_object;
using tok::json_string;
using tok::malformed;
using tok::unsupported;

// How far ids may run past the number of tokens the file defines.
constexpr std::size_t kMaxIdGap = 1 << 16;

json read_json(const std::filesystem::path& path) {
  json j;
  if (const auto defect = io::parse_json_strict(io::read_text_file(path), j)) {
    detail::fail_at(tok::kHfOp, std::max<std::int64_t>(defect->byte, 0),
                    "{} is not JSON: {}", path.filename().string(),
                    defect->message);
  }
  return j;
}

// merges: ["a b", ...] (split at the first space after the first
// character, as tokenizers reads them) or [["a", "b"], ...].
std::vector<std::pair<std::string, std::string>> read_merges(
    const json& list, const std::string& field) {
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& m = list[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const std::size_t space = s.find(' ', 1);
      if (space == std::string::npos || s.find(' ', space + 1) != s.npos) {
        malformed(where, "expected two tokens separated by one space");
      }
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() &&
               m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      malformed(where, "expected \"a b\" or [\"a\", \"b\"]");
    }
  }
  return merges;
}

// The single-sequence template: the ids before and after "$A".
void read_post_processor(const json& spec, const std::string& field,
                         Tokenizer::Impl& t) {
  if (spec.is_null()) return;
  const std::string type = json_string(spec, "type", field);
  if (type == "Sequence") {
    const json& list = json_array(spec, "processors", field);
    for (std::size_t i = 0; i < list.size(); ++i) {
      read_post_processor(list[i],
                          field + ".processors[" + std::to_string(i) + "]", t);
    }
  } else if (type == "ByteLevel") {
    // Offsets only.
  } else if (type == "TemplateProcessing") {
    const json& single = json_array(spec, "single", field);
    const json& specials = json_member(spec, "special_tokens", field);
    bool seen_sequence = false;
    for (std::size_t i = 0; i < single.size(); ++i) {
      const std::string where = field + ".single[" + std::to_string(i) + "]";
      const json& piece = single[i];
      if (piece.is_object() && piece.contains("Sequence")) {
        seen_sequence = true;
        continue;
      }
      if (!piece.is_object() || !piece.contains("SpecialToken")) {
        malformed(where, "expected a SpecialToken or a Sequence");
      }
      const std::string name =
          json_string(piece["SpecialToken"], "id", where + ".SpecialToken");
      const std::string sfield = field + ".special_tokens";
      if (!specials.is_object() || !specials.contains(name)) {
        malformed(sfield, "lacks " + name);
      }
      const json& ids = json_array(specials[name], "ids", sfield + "." + name);
      for (std::size_t k = 0; k < ids.size(); ++k) {
        const TokenId id = json_id(ids[k], sfield + "." + name + ".ids");
        (seen_sequence ? t.suffix : t.prefix).push_back(id);
      }
    }
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    const auto token_id = [&](const char* key) {
      const json& pair = json_array(spec, key, field);
      if (pair.size() != 2)
        malformed(field + "." + key, "expected [token, id]");
      return json_id(pair[1], field + "." + key + "[1]");
    };
    t.prefix.push_back(token_id("cls"));
    t.suffix.push_back(token_id("sep"));
  } else {
    unsupported(field + ".type", type,
                "Sequence, ByteLevel, TemplateProcessing, RobertaProcessing, "
                "BertProcessing");
  }
}

// A special token named in tokenizer_config.json: a string or
// {"content": ...}; null or absent gives nullopt.
std::optional<std::string> config_token(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") &&
      (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  malformed(std::string("tokenizer_config.json: ") + key,
            "expected a string or {\"content\": ...}");
}

void read_config(const json& config, Tokenizer::Impl& t) {
  if (!config.is_object()) {
    malformed("tokenizer_config.json", "expected an object");
  }
  const auto id_of = [&](const char* key) -> std::optional<TokenId> {
    const auto name = config_token(config, key);
    if (!name) return std::nullopt;
    const auto id = t.tokens.find(*name);
    if (!id) {
      malformed(std::string("tokenizer_config.json: ") + key,
                "names " + *name + ", which is no token");
    }
    return *id;
  };
  t.bos = id_of("bos_token");
  t.eos = id_of("eos_token");
  // transformers' Llama-family tokenizers rebuild the template from these
  // two flags (update_post_processor); tessel does so whenever the file
  // sets either of them.
  const bool has_bos = config.contains("add_bos_token");
  const bool has_eos = config.contains("add_eos_token");
  if (has_bos || has_eos) {
    const std::string field = "tokenizer_config.json";
    const bool add_bos = json_bool(config, "add_bos_token", field, false);
    const bool add_eos = json_bool(config, "add_eos_token", field, false);
    if ((add_bos && !t.bos) || (add_eos && !t.eos)) {
      malformed(
          field + (add_bos && !t.bos ? ": add_bos_token" : ": add_eos_token"),
          "is true but the matching bos_token/eos_token is not set");
    }
    t.prefix.clear();
    t.suffix.clear();
    if (add_bos) t.prefix.push_back(*t.bos);
    if (add_eos) t.suffix.push_back(*t.eos);
  }
}

}  // namespace

Tokenizer load_hf_tokenizer(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path / "tokenizer.json";
  const json root = read_json(file);
  if (!root.is_object()) malformed("tokenizer.json", "expected an object");

  auto t = std::make_unique<Tokenizer::Impl>();
  t->flavor = Tokenizer::Impl::Flavor::HuggingFace;

  // The model: BPE only.
  const json& model = json_object(root, "model", "tokenizer.json");
  const std::string type = model.contains("type")
                               ? json_string(model, "type", "model")
                               : std::string("BPE");
  if (type != "BPE") unsupported("model.type", type, "BPE");
  for (const char* key :
       {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(key) && !model[key].is_null()) {
      unsupported(std::string("model.") + key, model[key].dump(), "null");
    }
  }
  const json& vocab = json_object(model, "vocab", "model");
  TokenId max_id = -1;
  std::string max_field;  // where max_id is
  for (const auto& [token, id_json] : vocab.items()) {
    const TokenId id = json_id(id_json, "model.vocab." + token);
    t->model_vocab.ids[token] = id;
    if (id > max_id) {
      max_id = id;
      max_field = "model.vocab." + token;
    }
  }
  const TokenId max_model_id = max_id;

  // Added tokens: ids may lie past the model's vocabulary.
  if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
    const json& list = json_array(root, "added_tokens", "tokenizer.json");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string f = "added_tokens[" + std::to_string(i) + "]";
      const json& a = list[i];
      tok::AddedToken token;
      token.id = json_id(json_member(a, "id", f), f + ".id");
      token.content = json_string(a, "content", f);
      token.special = json_bool(a, "special", f, false);
      token.single_word = json_bool(a, "single_word", f, false);
      token.lstrip = json_bool(a, "lstrip", f, false);
      token.rstrip = json_bool(a, "rstrip", f, false);
      token.normalized = json_bool(a, "normalized", f, !token.special);
      if (token.id > max_id) {
        max_id = token.id;
        max_field = f + ".id";
      }
      t->added.push_back(std::move(token));
    }
  }
  // Ids index dense tables, so they may leave only a bounded number of
  // gaps (tokenizers accepts any u32; real files are dense): a small file
  // must not size gigabytes.
  const std::size_t defined = vocab.size() + t->added.size();
  if (static_cast<std::size_t>(max_id) + 1 > defined + kMaxIdGap) {
    malformed(max_field,
              fmt::format("token id {} lies more than {} past the {} tokens "
                          "that model.vocab and added_tokens define",
                          max_id, kMaxIdGap, defined));
  }
  t->model_vocab.tokens.resize(static_cast<std::size_t>(max_model_id + 1));
  for (const auto& [token, id] : t->model_vocab.ids) {
    t->model_vocab.tokens[id] = token;
  }
  t->tokens = t->model_vocab;
  t->tokens.tokens.resize(static_cast<std::size_t>(max_id + 1));
  t->special.assign(t->tokens.tokens.size(), false);
  for (const tok::AddedToken& a : t->added) {
    t->tokens.tokens[a.id] = a.content;
    t->tokens.ids[a.content] = a.id;
    t->special[a.id] = a.special;
  }

  t->normalizer = tok::Normalizer::from_json(root.value("normalizer", json()),
                                             "normalizer");
  t->pre = tok::PreTokenizer::from_json(root.value("pre_tokenizer", json()),
                                        "pre_tokenizer");
  t->decoder =
      tok::Decoder::from_json(root.value("decoder", json()), "decoder");

  // The two matchers: tokens matched on the raw text, and those matched
  // (by their normalised content) on the normalised text.
  std::vector<std::string> raw_patterns, normalized_patterns;
  std::vector<const tok::AddedToken*> raw_tokens, normalized_tokens;
  std::string normalized;
  // tokenizers lists the special tokens first, then the others, each in
  // file order; the first of equal patterns wins.
  for (const bool special_pass : {true, false}) {
    for (const tok::AddedToken& a : t->added) {
      if (a.special != special_pass) continue;
      if (a.normalized) {
        t->normalizer.apply(a.content, normalized);
        normalized_patterns.push_back(normalized);
        normalized_tokens.push_back(&a);
      } else {
        raw_patterns.push_back(a.content);
        raw_tokens.push_back(&a);
      }
    }
  }
  t->raw_matcher = tok::LeftmostLongestMatcher(raw_patterns, raw_tokens);
  t->normalized_matcher =
      tok::LeftmostLongestMatcher(normalized_patterns, normalized_tokens);

  tok::BpeOptions options;
  options.byte_level = t->pre.byte_level();
  options.ignore_merges = json_bool(model, "ignore_merges", "model", false);
  options.byte_fallback = json_bool(model, "byte_fallback", "model", false);
  options.fuse_unk = json_bool(model, "fuse_unk", "model", false);
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    const std::string unk = json_string(model, "unk_token", "model");
    const auto id = t->model_vocab.find(unk);
    if (!id) malformed("model.unk_token", unk + " is not in model.vocab");
    options.unk = *id;
  }
  t->bpe = std::make_unique<tok::BpeModel>(
      t->model_vocab,
      read_merges(json_array(model, "merges", "model"), "model.merges"),
      options, true, "model.merges", tok::kHfOp);

  read_post_processor(root.value("post_processor", json()), "post_processor",
                      *t);
  for (const TokenId id : t->prefix) {
    if (id > max_id)
      malformed("post_processor", "names an id past the vocabulary");
  }
  for (const TokenId id : t->suffix) {
    if (id > max_id)
      malformed("post_processor", "names an id past the vocabulary");
  }

  const std::filesystem::path config =
      file.parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config, ec)) read_config(read_json(config), *t);
  return Tokenizer(std::move(t));
}

}  // namespace tessel

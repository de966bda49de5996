// tokenizer.json and tokenizer_config.json for a GGUF vocabulary: the gpt2
// token list, types and merges as a tokenizers BPE, with the steps of the
// pre-tokenizer family tokenizer.ggml.pre names and a template adding
// BOS/EOS as llama.cpp would.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/gguf_tokenizer_patterns.hpp"
#include "tessel/models/gguf_tokenizer_metadata.hpp"

namespace tessel {

namespace {

using ojson = nlohmann::ordered_json;
namespace gt = gguf_tokenizer;

const GgufValue* key(const GgufFile& f, const char* k) { return f.find(k); }

std::optional<std::string> string_key(const GgufFile& f, const char* k) {
  const GgufValue* v = key(f, k);
  const auto* s = v ? std::get_if<std::string>(&v->value) : nullptr;
  return s ? std::optional<std::string>(*s) : std::nullopt;
}

std::optional<std::int64_t> int_of(const GgufValue& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.value)) {
    return *u > static_cast<std::uint64_t>(INT64_MAX)
               ? std::nullopt
               : std::optional<std::int64_t>(static_cast<std::int64_t>(*u));
  }
  if (const auto* i = std::get_if<std::int64_t>(&v.value)) return *i;
  return std::nullopt;
}

std::optional<std::int64_t> int_key(const GgufFile& f, const char* k) {
  const GgufValue* v = key(f, k);
  return v ? int_of(*v) : std::nullopt;
}

std::optional<bool> bool_key(const GgufFile& f, const char* k) {
  const GgufValue* v = key(f, k);
  const auto* b = v ? std::get_if<bool>(&v->value) : nullptr;
  return b ? std::optional<bool>(*b) : std::nullopt;
}

const std::vector<GgufValue>* array_key(const GgufFile& f, const char* k) {
  const GgufValue* v = key(f, k);
  return v ? std::get_if<std::vector<GgufValue>>(&v->value) : nullptr;
}

std::optional<gt::Family> family_of(const std::string& pre) {
  for (const auto& fam : gt::kFamilies) {
    for (const std::string_view n : fam.names) {
      if (!n.empty() && n == pre) return fam.family;
    }
  }
  return std::nullopt;
}

ojson byte_level(bool add_prefix_space, bool trim_offsets, bool use_regex) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", add_prefix_space},
          {"trim_offsets", trim_offsets},
          {"use_regex", use_regex}};
}

ojson pre_tokenizer(gt::Family family) {
  if (family == gt::Family::Gpt2) return byte_level(false, true, true);
  const std::string_view pattern =
      family == gt::Family::Qwen2 ? gt::kQwen2Split : gt::kLlama3Split;
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"},
             {"pattern", {{"Regex", std::string(pattern)}}},
             {"behavior", "Isolated"},
             {"invert", false}},
            byte_level(false, true, false)}}};
}

// [BOS] $A [EOS] as the single template, the pair repeating it for $B.
ojson post_processor(const std::vector<std::string>& tokens,
                     std::optional<std::int64_t> bos,
                     std::optional<std::int64_t> eos) {
  const ojson plain = byte_level(true, false, true);
  if (!bos && !eos) return plain;
  ojson single = ojson::array(), pair = ojson::array(),
        specials = ojson::object();
  const auto special = [&](std::int64_t id, int type_id) {
    const std::string& t = tokens[static_cast<std::size_t>(id)];
    specials[t] = {{"id", t}, {"ids", {id}}, {"tokens", {t}}};
    return ojson{{"SpecialToken", {{"id", t}, {"type_id", type_id}}}};
  };
  const auto sequence = [&](const char* id, int type_id) {
    return ojson{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
  };
  for (int part = 0; part < 2; ++part) {
    ojson& out = part == 0 ? single : pair;
    for (int s = 0; s <= part; ++s) {
      if (bos) out.push_back(special(*bos, s));
      out.push_back(sequence(s == 0 ? "A" : "B", s));
      if (eos) out.push_back(special(*eos, s));
    }
  }
  return {{"type", "Sequence"},
          {"processors",
           {plain,
            {{"type", "TemplateProcessing"},
             {"single", single},
             {"pair", pair},
             {"special_tokens", specials}}}}};
}

}  // namespace

HfTokenizerFiles hf_tokenizer_files(const GgufFile& f) {
  HfTokenizerFiles out;
  const auto* token_list = array_key(f, "tokenizer.ggml.tokens");
  if (token_list == nullptr) {
    out.note = "the GGUF file has no vocabulary (tokenizer.ggml.tokens)";
    return out;
  }
  std::vector<std::string> tokens;
  for (const GgufValue& v : *token_list) {
    const auto* s = std::get_if<std::string>(&v.value);
    tokens.push_back(s ? *s : std::string());
  }
  const auto n = static_cast<std::int64_t>(tokens.size());
  std::vector<std::int64_t> types(tokens.size(), 1);
  if (const auto* t = array_key(f, "tokenizer.ggml.token_type");
      t != nullptr && t->size() == tokens.size()) {
    for (std::size_t i = 0; i < t->size(); ++i) {
      types[i] = int_of((*t)[i]).value_or(1);
    }
  }
  const auto id_of = [&](const char* k) -> std::optional<std::int64_t> {
    const auto id = int_key(f, k);
    return id && *id >= 0 && *id < n ? id : std::nullopt;
  };
  const std::string model = string_key(f, "tokenizer.ggml.model").value_or("");
  const std::string pre = string_key(f, "tokenizer.ggml.pre").value_or("");
  const std::optional<gt::Family> family = family_of(pre);
  // llama.cpp's defaults: gpt2 vocabularies add BOS for the Llama-3
  // family only; a key decides otherwise.
  const bool add_bos =
      bool_key(f, "tokenizer.ggml.add_bos_token")
          .value_or(model == "gpt2" && family == gt::Family::Llama3);
  const bool add_eos =
      bool_key(f, "tokenizer.ggml.add_eos_token").value_or(false);
  const auto bos = id_of("tokenizer.ggml.bos_token_id");
  const auto eos = id_of("tokenizer.ggml.eos_token_id");

  ojson config = ojson::object();
  config["add_bos_token"] = add_bos && bos.has_value();
  config["add_eos_token"] = add_eos && eos.has_value();
  for (const auto& [name, k] :
       {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
        std::pair{"eos_token", "tokenizer.ggml.eos_token_id"},
        std::pair{"unk_token", "tokenizer.ggml.unknown_token_id"},
        std::pair{"pad_token", "tokenizer.ggml.padding_token_id"}}) {
    if (const auto id = id_of(k)) {
      config[name] = tokens[static_cast<std::size_t>(*id)];
    }
  }
  if (const auto t = string_key(f, "tokenizer.chat_template")) {
    config["chat_template"] = *t;
  }
  config["clean_up_tokenization_spaces"] = false;
  config["tokenizer_class"] = "PreTrainedTokenizerFast";
  out.tokenizer_config_json =
      config.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";

  if (model != "gpt2") {
    out.note = fmt::format(
        "tokenizer.json not written: tokenizer.ggml.model '{}' is not gpt2 "
        "(byte-level BPE), the only vocabulary tessel rebuilds",
        model);
    return out;
  }
  if (!family) {
    out.note = fmt::format(
        "tokenizer.json not written: tokenizer.ggml.pre '{}' is not a "
        "pre-tokenizer tessel spells as tokenizer.json steps (the gpt-2, "
        "llama-bpe, smaug-bpe and qwen2 families)",
        pre);
    return out;
  }
  ojson vocab = ojson::object(), added = ojson::array();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t type = types[static_cast<std::size_t>(i)];
    if (type == 5) continue;  // unused: the converter's [PAD<i>] fillers
    const std::string& t = tokens[static_cast<std::size_t>(i)];
    vocab[t] = i;
    if (type == 2 || type == 3 || type == 4) {
      added.push_back({{"id", i},
                       {"content", t},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", type != 4}});
    }
  }
  ojson merges = ojson::array();
  if (const auto* m = array_key(f, "tokenizer.ggml.merges")) {
    for (const GgufValue& v : *m) {
      const auto* s = std::get_if<std::string>(&v.value);
      const std::size_t space = s ? s->find(' ') : std::string::npos;
      if (space == std::string::npos) {
        out.note = "tokenizer.json not written: a merge is not \"a b\"";
        return out;
      }
      merges.push_back({s->substr(0, space), s->substr(space + 1)});
    }
  }
  ojson tok = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer",
       family == gt::Family::Qwen2 ? ojson{{"type", "NFC"}} : ojson(nullptr)},
      {"pre_tokenizer", pre_tokenizer(*family)},
      {"post_processor", post_processor(tokens, add_bos ? bos : std::nullopt,
                                        add_eos ? eos : std::nullopt)},
      {"decoder", byte_level(true, true, true)},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", family == gt::Family::Llama3},
        {"vocab", vocab},
        {"merges", merges}}},
  };
  try {
    out.tokenizer_json = tok.dump(2) + "\n";
  } catch (const ojson::exception&) {
    out.note = "tokenizer.json not written: a token is not valid UTF-8";
  }
  return out;
}

}  // namespace tessel

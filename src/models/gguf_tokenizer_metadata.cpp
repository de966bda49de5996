// A tokenizer.json's byte-level BPE in the keys llama.cpp's converter
// writes: conversion/base.py's get_vocab_base and _set_vocab_gpt2 (token
// list and types), gguf-py's SpecialVocab for the merges, and the rest of
// SpecialVocab in gguf_special_vocab.cpp.
#include "tessel/models/gguf_tokenizer_metadata.hpp"

#include <map>

#include "models/gguf_tokenizer_json.hpp"
#include "models/gguf_tokenizer_patterns.hpp"

namespace tessel {

namespace {

namespace gt = gguf_tokenizer;
using gt::array;
using gt::boolean;
using gt::get;
using gt::is_type;
using gt::json;
using gt::Keys;
using gt::kOp;
using gt::read_json;
using gt::refuse;
using gt::text;
using gt::truthy;
namespace fs = std::filesystem;

// TextModel.does_token_look_special.
bool looks_special(const std::string& t) {
  const auto wrapped = [&](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.starts_with(open) &&
           t.ends_with(close);
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" ||
         wrapped("<|", "|>") ||
         wrapped("<\xef\xbd\x9c", "\xef\xbd\x9c>") ||  // <｜ ... ｜>
         wrapped("<unused", ">");
}

std::string replace_all(std::string s, std::string_view from,
                        std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// The converter hashes the ids of a test text to pick tokenizer.ggml.pre
// from a table of known models (refusing any other); tessel names the
// family from the pre-tokenizer's steps instead, which is what decides
// how llama.cpp splits text: GPT-2's ByteLevel regex, Llama-3's split
// (with ignore_merges: the Llama-3 family, without: dbrx's), Qwen2's.
std::string pre_tokenizer_name(const json& tok) {
  const json& pre = get(tok, "pre_tokenizer");
  const json& norm = get(tok, "normalizer");
  const auto name = [](gt::Family f) {
    for (const auto& fam : gt::kFamilies) {
      if (fam.family == f) return std::string(fam.names[0]);
    }
    return std::string();
  };
  const auto byte_level = [](const json& s, bool regex) {
    const json& use_regex = get(s, "use_regex");
    return is_type(s, "ByteLevel") && !truthy(get(s, "add_prefix_space")) &&
           (use_regex.is_boolean() ? use_regex.get<bool>() : true) == regex;
  };
  if (norm.is_null() && byte_level(pre, true)) return name(gt::Family::Gpt2);
  const json& steps = get(pre, "pretokenizers");
  if (is_type(pre, "Sequence") && steps.is_array() && steps.size() == 2 &&
      is_type(steps[0], "Split") && byte_level(steps[1], false) &&
      get(steps[0], "behavior") == "Isolated" &&
      !truthy(get(steps[0], "invert"))) {
    const json& pattern = get(get(steps[0], "pattern"), "Regex");
    const bool ignore_merges = truthy(get(get(tok, "model"), "ignore_merges"));
    if (pattern == gt::kLlama3Split && norm.is_null()) {
      return name(ignore_merges ? gt::Family::Llama3 : gt::Family::Dbrx);
    }
    if (pattern == gt::kQwen2Split &&
        (norm.is_null() || is_type(norm, "NFC"))) {
      return name(gt::Family::Qwen2);
    }
  }
  refuse(fmt::format(
      "tokenizer.json's pre_tokenizer {} (normalizer {}) is not one whose "
      "llama.cpp name tessel knows (GPT-2's ByteLevel regex, Llama-3's or "
      "Qwen2's split); pass --tokenizer-pre NAME with the name llama.cpp's "
      "converter gives it",
      pre.dump(), norm.dump()));
}

// The token list and types of get_vocab_base: model vocabulary and added
// tokens by id, "[PAD<i>]" where there is none.
void add_tokens(Keys& keys, const json& tok, std::int64_t vocab_size) {
  const json& model = get(tok, "model");
  if (!is_type(model, "BPE")) {
    refuse(
        fmt::format("tokenizer.json's model is {}; llama.cpp's gpt2 "
                    "vocabulary holds byte-level BPE only",
                    get(model, "type").dump()));
  }
  if (truthy(get(model, "byte_fallback"))) {
    refuse(
        "tokenizer.json's BPE has byte_fallback (a SentencePiece-style "
        "vocabulary, which tessel does not convert)");
  }
  std::map<std::int64_t, std::string> by_id;
  const auto put = [&](const std::string& token, const json& id,
                       const char* field) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0) {
      detail::fail(ErrorCode::MalformedFile, kOp,
                   "tokenizer.json {} '{}' has id {}, not a token id", field,
                   token, id.dump());
    }
    const auto i = id.get<std::int64_t>();
    if (i >= vocab_size) {
      refuse(
          fmt::format("tokenizer.json {} '{}' has id {}, past config.json's "
                      "vocab_size {}",
                      field, token, i, vocab_size));
    }
    by_id[i] = token;
  };
  const json& vocab = get(model, "vocab");
  if (!vocab.is_object()) {
    detail::fail(ErrorCode::MalformedFile, kOp,
                 "tokenizer.json model.vocab is not an object");
  }
  for (const auto& [token, id] : vocab.items()) put(token, id, "model.vocab");
  struct Added {
    bool special = false;
  };
  std::map<std::int64_t, Added> added;
  for (const json& a : get(tok, "added_tokens")) {
    const json& content = get(a, "content");
    if (!content.is_string()) {
      detail::fail(ErrorCode::MalformedFile, kOp,
                   "tokenizer.json added_tokens entry {} has no content",
                   a.dump());
    }
    put(content.get<std::string>(), get(a, "id"), "added token");
    added[get(a, "id").get<std::int64_t>()] = {truthy(get(a, "special"))};
  }
  std::vector<GgufValue> tokens, types;
  tokens.reserve(static_cast<std::size_t>(vocab_size));
  types.reserve(static_cast<std::size_t>(vocab_size));
  for (std::int64_t i = 0; i < vocab_size; ++i) {
    const auto it = by_id.find(i);
    std::int64_t type = 1;  // normal
    std::string token;
    if (it == by_id.end()) {
      token = fmt::format("[PAD{}]", i);
      type = 5;  // unused
    } else {
      token = it->second;
      if (const auto a = added.find(i); a != added.end()) {
        if (a->second.special || looks_special(token)) {
          type = 3;  // control
        } else {
          // "pre-normalize user-defined spaces"
          token = replace_all(token, "\xe2\x96\x81", " ");
          type = 4;  // user-defined
        }
      }
    }
    tokens.push_back(text(std::move(token)));
    types.push_back({GgufValue::Type::I32, GgufValue::Type::U8, type});
  }
  keys.set("tokenizer.ggml.tokens",
           array(GgufValue::Type::String, std::move(tokens)));
  keys.set("tokenizer.ggml.token_type",
           array(GgufValue::Type::I32, std::move(types)));
}

// SpecialVocab's merges: "a b" strings as they are; [a, b] pairs joined,
// spaces inside a part written as U+0120.
void add_merges(Keys& keys, const json& tok) {
  const json& merges = get(get(tok, "model"), "merges");
  std::vector<GgufValue> out;
  if (merges.is_array()) {
    for (const json& m : merges) {
      if (m.is_string()) {
        out.push_back(text(m.get<std::string>()));
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() &&
                 m[1].is_string()) {
        out.push_back(
            text(replace_all(m[0].get<std::string>(), " ", "\xc4\xa0") + " " +
                 replace_all(m[1].get<std::string>(), " ", "\xc4\xa0")));
      } else {
        detail::fail(ErrorCode::MalformedFile, kOp,
                     "tokenizer.json model.merges entry {} is neither \"a b\" "
                     "nor [\"a\", \"b\"]",
                     m.dump());
      }
    }
  }
  keys.set("tokenizer.ggml.merges",
           array(GgufValue::Type::String, std::move(out)));
}

}  // namespace

std::vector<std::pair<std::string, GgufValue>> gguf_tokenizer_metadata(
    const fs::path& dir, const GgufTokenizerOptions& options) {
  if (!fs::is_regular_file(dir / "tokenizer.json")) return {};
  const json tok = read_json(dir / "tokenizer.json");
  Keys keys;
  if (options.architecture == "llama" &&
      fs::is_regular_file(dir / "tokenizer_config.json")) {
    const json tc = read_json(dir / "tokenizer_config.json");
    if (const json& a = get(tc, "add_prefix_space"); !a.is_null()) {
      keys.set("tokenizer.ggml.add_space_prefix", boolean(truthy(a)));
    }
  }
  bool byte_level = is_type(get(tok, "pre_tokenizer"), "ByteLevel");
  for (const json& s : get(get(tok, "pre_tokenizer"), "pretokenizers")) {
    byte_level = byte_level || is_type(s, "ByteLevel");
  }
  if (!byte_level) {
    refuse(
        "tokenizer.json has no ByteLevel pre-tokenizer: llama.cpp's gpt2 "
        "vocabulary is byte-level BPE");
  }
  keys.set("tokenizer.ggml.model", text("gpt2"));
  keys.set("tokenizer.ggml.pre",
           text(options.pre.empty() ? pre_tokenizer_name(tok) : options.pre));
  add_tokens(keys, tok, options.vocab_size);
  add_merges(keys, tok);
  write_special_vocab(dir, tok, options.vocab_size, keys);
  return keys.take();
}

}  // namespace tessel

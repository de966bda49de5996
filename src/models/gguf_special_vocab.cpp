// gguf-py's SpecialVocab (vocab.py) for the converter's gpt2 vocabularies:
// its rules for special tokens followed step by step, quirks included (its
// reading of a post-processor template decides add_bos/add_eos/add_sep).
#include <algorithm>
#include <map>
#include <optional>

#include "models/gguf_tokenizer_json.hpp"
#include "models/gguf_values.hpp"

namespace tessel::gguf_tokenizer {

namespace {

// An ordered dict of Python's, for SpecialVocab's two.
template <class T>
struct Ordered {
  std::vector<std::pair<std::string, T>> items;
  T* find(const std::string& k) {
    for (auto& [key, v] : items) {
      if (key == k) return &v;
    }
    return nullptr;
  }
  void set(const std::string& k, T v) {
    if (T* p = find(k)) {
      *p = v;
    } else {
      items.emplace_back(k, v);
    }
  }
  void setdefault(const std::string& k, T v) {
    if (find(k) == nullptr) items.emplace_back(k, v);
  }
};

// SpecialVocab: special token ids, add_*_token flags and chat template.
struct SpecialVocab {
  std::vector<std::string> types{"bos", "eos", "unk", "sep",
                                 "pad", "cls", "mask"};
  Ordered<std::int64_t> ids;
  Ordered<bool> add;
  json chat_template;
  std::optional<bool> lowercase, strip_accents;
  std::int64_t n_vocab = 0;  // tokens in the list written

  // _set_special_token: a negative id is refused (gguf-py raises), one
  // past the vocabulary skipped. gguf-py skips those only when it is given
  // n_vocab (its SentencePiece paths; the gpt2 path writes them, and
  // llama.cpp then ignores them with a warning): here always, so that a
  // file never names a token it does not have.
  void set_id(const std::string& type, const json& id) {
    if (!id.is_number_integer()) return;
    if (id.is_number_unsigned() &&
        id.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      return;  // past any vocabulary
    }
    const auto v = id.get<std::int64_t>();
    if (v < 0) {
      refuse(fmt::format("special token {} has the negative id {}", type, v));
    }
    if (v >= n_vocab) return;
    ids.setdefault(type, v);
  }

  void parse_normalizer(const json& n) {
    if (is_type(n, "Lowercase")) {
      lowercase = true;
    } else if (is_type(n, "StripAccents")) {
      strip_accents = true;
    } else if (is_type(n, "BertNormalizer")) {
      if (n.contains("lowercase")) lowercase = truthy(n["lowercase"]);
      if (n.contains("strip_accents")) {
        strip_accents = truthy(n["strip_accents"]);
      }
    } else if (is_type(n, "Sequence")) {
      for (const json& m : get(n, "normalizers")) parse_normalizer(m);
    }
  }

  // The TemplateProcessing branch of _try_load_from_tokenizer_json.
  void read_template(const json& p, json& tc, json& bos, json& eos, json& cls,
                     json& sep) {
    const json& single = get(p, "single");
    json pair = get(p, "pair");
    json first, last;
    if (single.is_array() && single.size() > 1) {
      first = get(get(single.front(), "SpecialToken"), "id");
      if (truthy(first)) {
        if (!truthy(tc)) {
          bos = first;
        } else if (first != bos && first != cls) {
          if (!truthy(bos)) tc["bos_token"] = bos = first;
          if (!truthy(cls)) tc["cls_token"] = cls = first;
        }
        add.set("bos", first == bos || first == cls);
      }
      last = get(get(single.back(), "SpecialToken"), "id");
      if (truthy(last)) {
        if (!truthy(tc)) {
          eos = last;
        } else if (last != eos) {
          for (const char* extra : {"eot", "eom"}) {
            if (std::find(types.begin(), types.end(), extra) == types.end()) {
              types.emplace_back(extra);
              tc[std::string(extra) + "_token"] = eos;
              break;
            }
          }
          tc["eos_token"] = eos = last;
        }
        add.set("eos", last == eos);
      }
    }
    if (!pair.is_array() || pair.empty()) return;
    const auto special_id = [](const json& item) {
      return get(get(item, "SpecialToken"), "id");
    };
    const std::size_t start =
        truthy(first) && special_id(pair.front()) == first ? 1 : 0;
    const std::size_t stop = truthy(last) && special_id(pair.back()) == last
                                 ? pair.size() - 1
                                 : pair.size();
    if (stop <= start) return;
    const json seq(pair.begin() + static_cast<std::ptrdiff_t>(start),
                   pair.begin() + static_cast<std::ptrdiff_t>(stop));
    if (get(get(seq.front(), "Sequence"), "id") != "A" ||
        get(get(seq.back(), "Sequence"), "id") != "B" || seq.size() < 3) {
      return;
    }
    const json middle(seq.begin() + 1, seq.end() - 1);
    bool add_sep = false;
    if (const json e = special_id(middle[0]); truthy(e)) {
      add_sep = (e == sep || e == eos) && !truthy(last);
    }
    if (middle.size() == 2) {
      if (const json e = special_id(middle[1]);
          truthy(e) && (e == sep || e == eos)) {
        add_sep = true;
      }
    }
    add.set("sep", add_sep);
    if (add_sep && !truthy(sep) && truthy(tc)) tc["sep_token"] = eos;
  }

  void load(const fs::path& dir, const json& tok) {
    if (const json& n = get(tok, "normalizer"); truthy(n)) parse_normalizer(n);
    const json& added_tokens = get(tok, "added_tokens");
    json tc;
    if (fs::is_regular_file(dir / "tokenizer_config.json")) {
      tc = read_json(dir / "tokenizer_config.json");
    }
    json bos = get(tc, "bos_token"), cls = get(tc, "cls_token");
    json eos = get(tc, "eos_token"), sep = get(tc, "sep_token");
    if (!truthy(bos) && truthy(cls) && truthy(tc)) tc["bos_token"] = bos = cls;
    if (!truthy(eos) && truthy(sep) && truthy(tc)) tc["eos_token"] = eos = sep;
    if (const json& post = get(tok, "post_processor"); truthy(post)) {
      const json processors = post.contains("processors") ? post["processors"]
                                                          : json::array({post});
      for (const json& p : processors) {
        if (is_type(p, "ByteLevel")) {
          add.setdefault("bos", false);
          add.setdefault("eos", false);
        } else if (is_type(p, "RobertaProcessing")) {
          add.set("bos", true);
          add.set("eos", true);
          add.set("sep", true);
          if (!truthy(cls) && truthy(tc)) {
            const json& c = get(p, "cls");
            tc["cls_token"] = cls = c.is_array() && !c.empty() ? c[0] : bos;
          }
          if (!truthy(sep) && truthy(tc)) {
            const json& s = get(p, "sep");
            tc["sep_token"] = sep = s.is_array() && !s.empty() ? s[0] : eos;
          }
        } else if (is_type(p, "TemplateProcessing")) {
          read_template(p, tc, bos, eos, cls, sep);
        }
      }
    }
    if (truthy(tc)) {
      if (tc.contains("chat_template")) {
        chat_template = tc["chat_template"];
      } else {
        chat_template = chat_template_file(dir);
      }
      if (!chat_template.is_string() && !chat_template.is_array()) {
        chat_template = nullptr;
      }
      for (const std::string& type : types) {
        if (const json& a = get(tc, ("add_" + type + "_token").c_str());
            a.is_boolean()) {
          add.setdefault(type, a.get<bool>());
        }
        json entry = get(tc, (type + "_token").c_str());
        if (entry.is_object()) entry = get(entry, "content");
        if (!entry.is_string()) continue;
        for (const json& a : added_tokens) {
          if (get(a, "content") == entry) {
            set_id(type, get(a, "id"));
            break;
          }
        }
      }
    }
    if (fs::is_regular_file(dir / "config.json")) {
      const json config = read_json(dir / "config.json");
      for (const std::string& type : types) {
        json id = get(config, (type + "_token_id").c_str());
        if (id.is_null()) {
          id = get(get(config, "text_config"), (type + "_token_id").c_str());
        }
        set_id(type, id);
      }
    }
  }

  // chat_template.jinja (with additional_chat_templates/*.jinja: a list of
  // named templates), else chat_template.json's chat_template.
  static json chat_template_file(const fs::path& dir) {
    const auto read_text = [](const fs::path& p) {
      const std::vector<std::uint8_t> b = io::read_file(p);
      return std::string(b.begin(), b.end());
    };
    if (fs::is_regular_file(dir / "chat_template.jinja")) {
      json t = read_text(dir / "chat_template.jinja");
      std::vector<fs::path> more;
      std::error_code ec;
      for (const auto& e :
           fs::directory_iterator(dir / "additional_chat_templates", ec)) {
        if (e.path().extension() == ".jinja") more.push_back(e.path());
      }
      if (more.empty()) return t;
      std::sort(more.begin(), more.end());
      json list = json::array({{{"name", "default"}, {"template", t}}});
      for (const fs::path& p : more) {
        list.push_back(
            {{"name", p.stem().string()}, {"template", read_text(p)}});
      }
      return list;
    }
    if (fs::is_regular_file(dir / "chat_template.json")) {
      return get(read_json(dir / "chat_template.json"), "chat_template");
    }
    return nullptr;
  }

  void write(Keys& keys) const {
    static const std::map<std::string, std::string> id_keys = {
        {"bos", "tokenizer.ggml.bos_token_id"},
        {"eos", "tokenizer.ggml.eos_token_id"},
        {"unk", "tokenizer.ggml.unknown_token_id"},
        {"sep", "tokenizer.ggml.seperator_token_id"},  // sic
        {"pad", "tokenizer.ggml.padding_token_id"},
        {"mask", "tokenizer.ggml.mask_token_id"},
        {"eot", "tokenizer.ggml.eot_token_id"},
        {"eom", "tokenizer.ggml.eom_token_id"},
    };
    // gguf-py has no key for cls, nor add_ flags but these three.
    for (const auto& [type, id] : ids.items) {
      if (const auto k = id_keys.find(type); k != id_keys.end()) {
        keys.set(k->second, gguf_u32(k->second, id));
      }
    }
    for (const auto& [type, value] : add.items) {
      if (type == "bos" || type == "eos" || type == "sep") {
        keys.set("tokenizer.ggml.add_" + type + "_token", boolean(value));
      }
    }
    if (chat_template.is_string()) {
      keys.set("tokenizer.chat_template",
               text(chat_template.get<std::string>()));
    } else if (chat_template.is_array()) {
      write_named_templates(keys);
    }
    if (lowercase) {
      keys.set("tokenizer.ggml.normalizer.lowercase", boolean(*lowercase));
    }
    if (strip_accents) {
      keys.set("tokenizer.ggml.normalizer.strip_accents",
               boolean(*strip_accents));
    }
  }

  // gguf-py's add_chat_template for a list (names listed sorted here, where
  // gguf-py lists a Python set).
  void write_named_templates(Keys& keys) const {
    std::optional<std::string> fallback;
    std::vector<std::string> names;
    for (const json& choice : chat_template) {
      std::string name = get(choice, "name").is_string()
                             ? get(choice, "name").get<std::string>()
                             : "";
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) ||
            static_cast<unsigned char>(c) >= 0x80) {
          c = '_';
        }
      }
      const json& t = get(choice, "template");
      if (name.empty() || !t.is_string()) continue;
      if (name == "default") {
        fallback = t.get<std::string>();
      } else {
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          names.push_back(name);
        }
        keys.set("tokenizer.chat_template." + name, text(t.get<std::string>()));
      }
    }
    std::sort(names.begin(), names.end());
    std::vector<GgufValue> list;
    for (const std::string& n : names) list.push_back(text(n));
    keys.set("tokenizer.chat_templates",
             array(GgufValue::Type::String, std::move(list)));
    if (fallback) keys.set("tokenizer.chat_template", text(*fallback));
  }
};

}  // namespace

void write_special_vocab(const fs::path& dir, const json& tok,
                         std::int64_t n_vocab, Keys& keys) {
  SpecialVocab special;
  special.n_vocab = n_vocab;
  special.load(dir, tok);
  special.write(keys);
}

}  // namespace tessel::gguf_tokenizer

#include "tessel/models/model_tokenizer.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/check.hpp"
#include "io/json_strict.hpp"
#include "io/read_file.hpp"
#include "tessel/io/gguf.hpp"
#include "tessel/models/config.hpp"

namespace tessel {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kOp = "model tokenizer";

std::optional<std::string> read_text(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;  // a FIFO is refused below
  return io::read_text_file(path);
}

// A JSON config beside the weights (config.json, generation_config.json,
// tokenizer_config.json); null when absent. Malformed JSON in a config,
// duplicate keys included, is a configuration error (E4001), as
// DecoderConfig says for config.json.
json read_json_file(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return nullptr;
  json j;
  const auto defect = io::parse_json_strict(*text, j);
  TESSEL_CHECK(!defect, BadConfig, kOp, "{} is not valid JSON: {}",
               path.string(), defect ? defect->message : "");
  return j;
}

// transformers accepts an id or a list of ids for eos_token_id.
void add_ids(const json& j, const char* key, const fs::path& file,
             std::vector<std::int64_t>& out) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return;
  const json& v = j[key];
  const auto bad = [&] {
    detail::fail(ErrorCode::MalformedFile, kOp,
                 "{}: '{}' must be a token id or a list of them, not {}",
                 file.string(), key, v.dump());
  };
  if (v.is_number_integer()) {
    out.push_back(v.get<std::int64_t>());
  } else if (v.is_array()) {
    for (const json& e : v) {
      if (!e.is_number_integer()) bad();
      out.push_back(e.get<std::int64_t>());
    }
  } else {
    bad();
  }
}

// tokenizer_config.json's chat_template is a string or, for checkpoints
// with several, a list of {name, template} of which "default" is the one
// transformers uses; newer transformers write chat_template.jinja instead.
std::optional<std::string> hf_chat_template(const fs::path& dir,
                                            const json& config) {
  if (config.is_object() && config.contains("chat_template")) {
    const json& t = config["chat_template"];
    if (t.is_string()) return t.get<std::string>();
    if (t.is_array()) {
      for (std::size_t i = 0; i < t.size(); ++i) {
        const json& e = t[i];
        if (!e.is_object()) continue;
        const auto name = e.find("name");
        if (name == e.end()) continue;
        TESSEL_CHECK(name->is_string(), MalformedFile, kOp,
                     "{}: chat_template[{}]'s 'name' must be a string, not {}",
                     (dir / "tokenizer_config.json").string(), i, name->dump());
        if (*name == "default" && e.contains("template") &&
            e["template"].is_string()) {
          return e["template"].get<std::string>();
        }
      }
    }
  }
  return read_text(dir / "chat_template.jinja");
}

std::optional<std::int64_t> gguf_int(const GgufFile& file, const char* key) {
  const GgufValue* v = file.find(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&v->value)) {
    return static_cast<std::int64_t>(*u);
  }
  if (const auto* i = std::get_if<std::int64_t>(&v->value)) return *i;
  detail::fail(ErrorCode::MalformedFile, kOp, "GGUF key {} is not an integer",
               key);
}

}  // namespace

ModelTokenizer ModelTokenizer::load(const fs::path& model) {
  ModelTokenizer t;
  std::vector<std::int64_t> ends;
  std::error_code ec;
  if (fs::is_directory(model, ec)) {
    const json config = read_json_file(model / "config.json");
    add_ids(config, "eos_token_id", model / "config.json", ends);
    add_ids(read_json_file(model / "generation_config.json"), "eos_token_id",
            model / "generation_config.json", ends);
    if (fs::exists(model / "tokenizer.json", ec)) {
      t.kind_ = Kind::HuggingFace;
      t.tokenizer_ = std::make_unique<Tokenizer>(load_hf_tokenizer(model));
      t.chat_template_ = hf_chat_template(
          model, read_json_file(model / "tokenizer_config.json"));
    } else {
      const DecoderConfig c = DecoderConfig::load(model / "config.json");
      TESSEL_CHECK(c.vocab_size == ByteTokenizer::kVocabSize, BadConfig, kOp,
                   "{} has no tokenizer.json, and its vocabulary of {} "
                   "tokens is not the {} bytes `tessel train` uses: copy the "
                   "checkpoint's tokenizer.json beside config.json",
                   model.string(), c.vocab_size, ByteTokenizer::kVocabSize);
      t.kind_ = Kind::Bytes;
    }
  } else {
    TESSEL_CHECK(fs::exists(model, ec), IoFailure, kOp, "{} does not exist",
                 model.string());
    const GgufFile file = load_gguf(model);
    t.kind_ = Kind::Gguf;
    t.tokenizer_ = std::make_unique<Tokenizer>(tokenizer_from_gguf(file));
    for (const char* key :
         {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
      if (const auto id = gguf_int(file, key)) ends.push_back(*id);
    }
    if (const GgufValue* v = file.find("tokenizer.chat_template")) {
      if (const auto* s = std::get_if<std::string>(&v->value)) {
        t.chat_template_ = *s;
      }
    }
  }
  if (t.tokenizer_) {
    if (const auto eos = t.tokenizer_->eos_id()) ends.push_back(*eos);
    if (const auto bos = t.tokenizer_->bos_id()) t.bos_ = *bos;
  }
  t.finish(std::move(ends));
  return t;
}

void ModelTokenizer::finish(std::vector<std::int64_t> end_ids) {
  // An id past the vocabulary (a config written for a padded embedding,
  // llama.cpp's disabled defaults) can never be generated as text.
  std::erase_if(end_ids,
                [&](std::int64_t id) { return id < 0 || id >= vocab_size(); });
  std::sort(end_ids.begin(), end_ids.end());
  end_ids.erase(std::unique(end_ids.begin(), end_ids.end()), end_ids.end());
  end_ids_ = std::move(end_ids);
  // Both pipelines put BOS before the text, so an empty text shows it.
  const std::vector<std::int64_t> framed = encode("", true, false);
  adds_bos_ = bos_ && !framed.empty() && framed.front() == *bos_;
}

std::vector<std::int64_t> ModelTokenizer::encode(std::string_view text,
                                                 bool add_special,
                                                 bool parse_special) const {
  if (!tokenizer_) return bytes_.encode(text);
  const std::vector<TokenId> ids =
      tokenizer_->encode(text, add_special, parse_special);
  return {ids.begin(), ids.end()};
}

std::string ModelTokenizer::decode(std::span<const std::int64_t> ids) const {
  if (!tokenizer_) return bytes_.decode({ids.begin(), ids.end()});
  std::vector<TokenId> narrow;
  narrow.reserve(ids.size());
  for (const std::int64_t id : ids) {
    TESSEL_CHECK(id >= 0 && id < vocab_size(), OutOfRange, kOp,
                 "token id {} is outside the vocabulary of {}", id,
                 vocab_size());
    narrow.push_back(static_cast<TokenId>(id));
  }
  return tokenizer_->decode(narrow);
}

std::int64_t ModelTokenizer::vocab_size() const {
  return tokenizer_ ? tokenizer_->vocab_size() : ByteTokenizer::kVocabSize;
}

void ModelTokenizer::check_fits(const DecoderConfig& config) const {
  TESSEL_CHECK(vocab_size() <= config.vocab_size, BadConfig, "model tokenizer",
               "the tokenizer has {} tokens but the model only {}",
               vocab_size(), config.vocab_size);
}

bool ModelTokenizer::is_end(std::int64_t id) const {
  return std::binary_search(end_ids_.begin(), end_ids_.end(), id);
}

}  // namespace tessel

// tessel::Tokenizer: encoding and decoding in the order of the reference
// each vocabulary came from (tokenizer_impl.hpp).
#include <mutex>

#include "core/check.hpp"
#include "models/tokenizer/byte_level.hpp"
#include "models/tokenizer/tokenizer_impl.hpp"
#include "models/tokenizer/utf8.hpp"

namespace tessel {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SPM's space

void check_id(const tok::Vocab& vocab, TokenId id) {
  TESSEL_CHECK(id >= 0 && id < vocab.size(), OutOfRange, "Tokenizer",
               "token id {} is outside the vocabulary of {} tokens", id,
               vocab.size());
}

std::string escape_spaces(std::string_view text, bool space_first) {
  std::string out;
  out.reserve(text.size() + 8);
  if (space_first) out.append(kSpace);
  for (const char c : text) {
    if (c == ' ') {
      out.append(kSpace);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// llama_detokenize's clean_up_tokenization_spaces: " ?", " !", " .", " ,"
// lose their space; " ' " becomes "'"; " 's", " 'm", " 're", " 've" lose
// their space.
void clean_spaces(std::string& text) {
  std::string& t = text;
  std::size_t total = t.empty() ? 0 : 1;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) {
      --total;
    }
    t[total++] = x;
  }
  t.resize(total);
  total = t.empty() ? 0 : 1;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const char x = t[i];
    if (x == '\'' && i + 1 < t.size() && t[i - 1] == ' ' && t[i + 1] == ' ') {
      --total;        // the space before
      t[++i] = '\0';  // the space after (llama.cpp writes a NUL there)
    }
    t[total++] = x;
  }
  t.resize(total);
  total = t.empty() ? 0 : 1;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const char x = t[i];
    if (t[i - 1] == ' ' && x == '\'' && i + 1 < t.size()) {
      const char x1 = t[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (i + 2 < t.size() && ((x1 == 'r' && t[i + 2] == 'e') ||
                                      (x1 == 'v' && t[i + 2] == 'e'))) {
        --total;
      }
    }
    t[total++] = x;
  }
  t.resize(total);
}

}  // namespace

std::vector<TokenId> Tokenizer::Impl::encode(std::string_view text,
                                             bool add_special,
                                             bool parse_special) const {
  const std::size_t bad = tok::utf8_invalid_offset(text);
  TESSEL_CHECK(
      bad == std::string_view::npos, MalformedFile, "Tokenizer::encode",
      "the text is not valid UTF-8 at byte {} (of {})", bad, text.size());
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 4);
  // The word cache is one per tokenizer; a thread that finds it busy
  // encodes without it rather than wait.
  std::unique_lock lock(cache.mutex, std::try_to_lock);
  tok::WordCache* word_cache = lock.owns_lock() ? &cache : nullptr;
  const auto run_bpe = [&](std::string_view piece) {
    pre.run(piece,
            [&](std::string_view word) { bpe->encode(word, ids, word_cache); });
  };
  std::vector<tok::Segment> segments;

  if (flavor == Flavor::HuggingFace) {
    if (add_special) ids.insert(ids.end(), prefix.begin(), prefix.end());
    raw_matcher.split(text, parse_special, segments);
    std::string normalized;
    std::vector<tok::Segment> inner;
    for (const tok::Segment& s : segments) {
      if (s.token >= 0) {
        ids.push_back(s.token);
        continue;
      }
      std::string_view piece = text.substr(s.begin, s.end - s.begin);
      if (!normalizer.empty()) {
        normalizer.apply(piece, normalized);
        piece = normalized;
      }
      inner.clear();
      normalized_matcher.split(piece, parse_special, inner);
      for (const tok::Segment& n : inner) {
        if (n.token >= 0) {
          ids.push_back(n.token);
        } else {
          run_bpe(piece.substr(n.begin, n.end - n.begin));
        }
      }
    }
    if (add_special) ids.insert(ids.end(), suffix.begin(), suffix.end());
    return ids;
  }

  partition.split(text, parse_special, segments);
  if (add_special && add_bos) ids.push_back(*bos);
  bool after_special = true;  // SPM: a space before the first text too
  for (const tok::Segment& s : segments) {
    if (s.token >= 0) {
      ids.push_back(s.token);
      after_special = true;
      continue;
    }
    const std::string_view piece = text.substr(s.begin, s.end - s.begin);
    if (spm) {
      spm->encode(escape_spaces(piece, add_space_prefix && after_special), ids);
    } else {
      run_bpe(piece);
    }
    after_special = false;
  }
  if (add_special && add_eos) ids.push_back(*eos);
  return ids;
}

std::string Tokenizer::Impl::hf_piece(TokenId id) const {
  const std::string& t = tokens.tokens[id];
  std::string bytes;
  if (bpe && bpe->options().byte_level && !special[id] &&
      tok::byte_level_decode(t, bytes)) {
    return bytes;
  }
  return t;
}

std::string Tokenizer::Impl::gguf_piece(TokenId id, bool print_special) const {
  const std::string& t = tokens.tokens[id];
  switch (types[id]) {
    case GgufTokenType::Control:
    case GgufTokenType::Unknown: return print_special ? t : std::string();
    case GgufTokenType::UserDefined: return t;
    case GgufTokenType::Byte: {
      // llama.cpp: strtol of the two characters after "<0x".
      const std::string hex = t.size() >= 5 ? t.substr(3, 2) : std::string();
      return std::string(
          1, static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
    }
    case GgufTokenType::Normal: {
      if (spm) {
        std::string out;
        for (std::size_t pos = 0; pos < t.size();) {
          if (t.compare(pos, kSpace.size(), kSpace) == 0) {
            out.push_back(' ');
            pos += kSpace.size();
          } else {
            out.push_back(t[pos++]);
          }
        }
        return out;
      }
      // llama_decode_text: each character back to its byte; one outside
      // GPT-2's alphabet is written as llama.cpp writes it.
      std::string out;
      for (std::size_t pos = 0; pos < t.size();) {
        const std::size_t start = pos;
        const int b = tok::byte_level_byte(tok::utf8_next(t, pos));
        if (b >= 0) {
          out.push_back(static_cast<char>(b));
        } else {
          out += "[UNK_BYTE_0x";
          for (std::size_t i = start; i < pos && i < t.size(); ++i) {
            out += fmt::format("{:02x}", static_cast<unsigned char>(t[i]));
          }
          out += t + "]";
        }
      }
      return out;
    }
    default: return {};  // unused and undefined types print nothing
  }
}

std::string Tokenizer::Impl::decode(std::span<const TokenId> ids,
                                    bool skip_special) const {
  for (const TokenId id : ids) check_id(tokens, id);
  if (flavor == Flavor::HuggingFace) {
    std::vector<std::string> strings;
    strings.reserve(ids.size());
    for (const TokenId id : ids) {
      if (skip_special && special[id]) continue;
      strings.push_back(tokens.tokens[id]);
    }
    return decoder.decode(std::move(strings));
  }
  // llama_detokenize(remove_special = false, unparse_special =
  // !skip_special): the first piece loses one leading space when the
  // vocabulary adds one.
  std::string out;
  bool remove_space = add_space_prefix;
  for (const TokenId id : ids) {
    std::string piece = gguf_piece(id, !skip_special);
    if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    remove_space = false;
    out += piece;
  }
  if (clean_spaces) tessel::clean_spaces(out);
  return out;
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  return impl_->encode(text, add_special, parse_special);
}

std::string Tokenizer::decode(std::span<const TokenId> ids,
                              bool skip_special) const {
  return impl_->decode(ids, skip_special);
}

std::string Tokenizer::token_to_piece(TokenId id) const {
  check_id(impl_->tokens, id);
  return impl_->flavor == Impl::Flavor::HuggingFace
             ? impl_->hf_piece(id)
             : impl_->gguf_piece(id, true);
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  return impl_->tokens.find(token);
}

bool Tokenizer::is_special(TokenId id) const {
  check_id(impl_->tokens, id);
  return impl_->special[id];
}

std::int64_t Tokenizer::vocab_size() const { return impl_->tokens.size(); }
std::optional<TokenId> Tokenizer::bos_id() const { return impl_->bos; }
std::optional<TokenId> Tokenizer::eos_id() const { return impl_->eos; }

}  // namespace tessel

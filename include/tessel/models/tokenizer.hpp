// Tokenisers: text to token ids and back.
//
// - ByteTokenizer: token i is byte i (vocabulary 256), so any text or
//   binary file trains without a vocabulary file (`tessel train`).
// - Tokenizer: the vocabularies real checkpoints ship, encoding and
//   decoding exactly as their reference implementations do: HuggingFace
//   tokenizer.json files (byte-level BPE of the GPT-2, Llama-3 and Qwen2
//   families, SentencePiece-style BPE with byte fallback) as the
//   `tokenizers` package does, and GGUF's embedded vocabularies
//   (tokenizer.ggml.model "gpt2" and "llama") as llama.cpp does. The rules
//   and what is supported: docs/models.md, "Tokenizers".
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

struct GgufFile;

class ByteTokenizer {
 public:
  static constexpr std::int64_t kVocabSize = 256;
  std::vector<std::int64_t> encode(std::string_view text) const;
  // E2302 for an id outside [0, 256).
  std::string decode(const std::vector<std::int64_t>& ids) const;
};

using TokenId = std::int32_t;

class Tokenizer {
 public:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // The ids of `text` (UTF-8; E3001 naming the byte offset of the first
  // invalid sequence). `add_special`: the tokens the file says frame a
  // text (BOS, EOS, templates). `parse_special`: special and control
  // tokens written in the text are those tokens; when false they are
  // encoded as ordinary text (added tokens that are not special are always
  // found). Safe to call from several threads.
  std::vector<TokenId> encode(std::string_view text, bool add_special = true,
                              bool parse_special = true) const;

  // The text of `ids` (E2302 for an id outside the vocabulary);
  // `skip_special` leaves special and control tokens out. Byte sequences
  // that are not UTF-8 come back as the reference does: U+FFFD replacing
  // each maximal invalid part for tokenizer.json files, raw bytes for GGUF
  // (llama.cpp's llama_detokenize).
  std::string decode(std::span<const TokenId> ids,
                     bool skip_special = false) const;

  // The bytes one token stands for (a byte-level token's bytes, a byte
  // token's byte, a special token's text). E2302 outside the vocabulary.
  std::string token_to_piece(TokenId id) const;
  // The token whose vocabulary string is `token`, if any.
  std::optional<TokenId> token_to_id(std::string_view token) const;
  bool is_special(TokenId id) const;

  // One past the largest id (added tokens included).
  std::int64_t vocab_size() const;
  std::optional<TokenId> bos_id() const;
  std::optional<TokenId> eos_id() const;

 private:
  std::unique_ptr<Impl> impl_;
};

// A HuggingFace tokenizer: `path` is a tokenizer.json file or a directory
// holding one (and optionally tokenizer_config.json, whose bos_token,
// eos_token, add_bos_token and add_eos_token are honoured). E3002 when the
// file cannot be read; E3001 naming the field for malformed JSON, a
// malformed field or a model, normaliser, pre-tokeniser, post-processor or
// decoder type that is not supported (the message lists what is).
Tokenizer load_hf_tokenizer(const std::filesystem::path& path);

// The vocabulary a GGUF file embeds (tokenizer.ggml.*). E3001 naming the
// key for a missing or mistyped key, an unknown tokenizer.ggml.model or
// tokenizer.ggml.pre (the message lists what is supported) or an
// inconsistent vocabulary.
Tokenizer tokenizer_from_gguf(const GgufFile& file);

}  // namespace tessel

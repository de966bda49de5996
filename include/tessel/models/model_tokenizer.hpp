// The tokeniser that goes with a checkpoint, found from the checkpoint's
// path the way its reference runtime finds it, with what running the model
// needs beside the vocabulary: whether a text starts with BOS, which tokens
// end generation, the chat template. `tessel generate` and `tessel
// perplexity` use it; docs/models.md, "Running models".
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/models/config.hpp"
#include "tessel/models/tokenizer.hpp"

namespace tessel {

class ModelTokenizer {
 public:
  enum class Kind {
    Bytes,        // a `tessel train` checkpoint: token i is byte i
    HuggingFace,  // tokenizer.json (+ tokenizer_config.json)
    Gguf,         // the vocabulary a GGUF file embeds
  };

  // `model` is what CausalLM::load takes:
  // - an HF directory: tokenizer.json and tokenizer_config.json (BOS/EOS,
  //   add_bos_token, chat_template; or chat_template.jinja), with the end
  //   tokens of config.json and generation_config.json (eos_token_id, an
  //   id or a list);
  // - a GGUF file: tokenizer.ggml.* (add_bos_token, eos/eot/eom ids) and
  //   tokenizer.chat_template;
  // - a directory without tokenizer.json whose config.json has the 256
  //   tokens `tessel train` writes: bytes, ending at config eos_token_id.
  // E4001 for a directory with neither a tokenizer.json nor a byte
  // vocabulary; E3001/E3002 for malformed or unreadable files.
  static ModelTokenizer load(const std::filesystem::path& model);

  // Ids of `text`. `add_special`: the tokens the checkpoint frames a text
  // with (BOS where the reference adds it). `parse_special`: special tokens
  // written in the text are those tokens (bytes have none).
  std::vector<std::int64_t> encode(std::string_view text,
                                   bool add_special = true,
                                   bool parse_special = true) const;
  // The text of `ids` with special tokens written out (E2302 outside the
  // vocabulary). GGUF vocabularies give raw bytes, tokenizer.json valid
  // UTF-8 (U+FFFD for invalid parts), as their references do.
  std::string decode(std::span<const std::int64_t> ids) const;

  Kind kind() const { return kind_; }
  std::int64_t vocab_size() const;
  // E4001 when the tokenizer has more tokens than `config`'s embedding has
  // rows (the other way round is padding, which HF checkpoints have).
  void check_fits(const DecoderConfig& config) const;
  std::optional<std::int64_t> bos_id() const { return bos_; }
  // encode(text, add_special = true) starts with BOS: llama.cpp's
  // llama_vocab_get_add_bos, HF's post-processor template (or
  // tokenizer_config.json's add_bos_token).
  bool adds_bos() const { return adds_bos_; }
  // The tokens after which generation stops, ascending.
  const std::vector<std::int64_t>& end_ids() const { return end_ids_; }
  bool is_end(std::int64_t id) const;
  // The Jinja chat template the checkpoint ships, if any.
  const std::optional<std::string>& chat_template() const {
    return chat_template_;
  }
  // The vocabulary itself; null for bytes.
  const Tokenizer* tokenizer() const { return tokenizer_.get(); }

 private:
  ModelTokenizer() = default;
  // Derives adds_bos_ from what encoding an empty text gives.
  void finish(std::vector<std::int64_t> end_ids);

  Kind kind_ = Kind::Bytes;
  std::unique_ptr<Tokenizer> tokenizer_;
  ByteTokenizer bytes_;
  std::optional<std::int64_t> bos_;
  bool adds_bos_ = false;
  std::vector<std::int64_t> end_ids_;
  std::optional<std::string> chat_template_;
};

}  // namespace tessel

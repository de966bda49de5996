// The state behind tessel::Tokenizer, filled by the two loaders
// (hf_loader.cpp, gguf_loader.cpp) and run by pipeline.cpp. The steps are
// those of the reference the vocabulary came from:
// - tokenizer.json (tokenizers): added tokens on the raw text, normalise,
//   added tokens on the normalised text, pre-tokenise, BPE, template;
// - GGUF (llama.cpp): special tokens longest first, then the model's
//   regexes and BPE, or SentencePiece-BPE over whole text runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/tokenizer/added_tokens.hpp"
#include "models/tokenizer/bpe.hpp"
#include "models/tokenizer/decoder.hpp"
#include "models/tokenizer/normalizer.hpp"
#include "models/tokenizer/pre_tokenizer.hpp"
#include "models/tokenizer/spm.hpp"
#include "tessel/models/tokenizer.hpp"

namespace tessel {

// llama.cpp's token types (GGUF tokenizer.ggml.token_type).
enum class GgufTokenType : std::int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

struct Tokenizer::Impl {
  enum class Flavor { HuggingFace, LlamaCpp } flavor = Flavor::HuggingFace;

  // Every id's string (added tokens over the model's), for decoding and
  // token_to_id; the BPE model's own vocabulary, which for
  // tokenizer.json excludes added tokens (they never take part in merges).
  tok::Vocab tokens;
  tok::Vocab model_vocab;
  std::vector<bool> special;  // skipped by decode(skip_special)
  std::optional<TokenId> bos, eos;

  std::unique_ptr<tok::BpeModel> bpe;
  std::unique_ptr<tok::SpmModel> spm;
  tok::PreTokenizer pre;

  // tokenizer.json.
  std::vector<tok::AddedToken> added;  // by position in the file
  tok::LeftmostLongestMatcher raw_matcher, normalized_matcher;
  tok::Normalizer normalizer;
  tok::Decoder decoder;
  std::vector<TokenId> prefix, suffix;  // the single-sequence template

  // GGUF.
  tok::LongestFirstPartition partition;
  std::vector<GgufTokenType> types;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = false;  // SPM: " " before text after a special
  bool clean_spaces = false;      // llama_detokenize's clean-up passes

  mutable tok::WordCache cache;

  std::vector<TokenId> encode(std::string_view text, bool add_special,
                              bool parse_special) const;
  std::string decode(std::span<const TokenId> ids, bool skip_special) const;
  // llama.cpp's token_to_piece; `special`: print control tokens.
  std::string gguf_piece(TokenId id, bool special) const;
  std::string hf_piece(TokenId id) const;
};

}  // namespace tessel

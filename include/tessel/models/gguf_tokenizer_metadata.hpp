// A HuggingFace byte-level BPE tokenizer in llama.cpp's GGUF keys, as its
// converter writes them, and the files rebuilt from those keys.
// docs/models.md, "Converting models".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tessel/io/gguf.hpp"

namespace tessel {

struct GgufTokenizerOptions {
  // config.json's vocab_size: the token list is this long, ids the
  // tokenizer lacks as "[PAD<id>]" (unused).
  std::int64_t vocab_size = 0;
  // general.architecture: llama also takes tokenizer_config.json's
  // add_prefix_space, as the converter's LlamaModel does.
  std::string architecture;
  // tokenizer.ggml.pre; empty: named from the pre-tokenizer (docs).
  std::string pre;
};

// The keys of the converter's _set_vocab_gpt2 and gguf-py's SpecialVocab
// for the tokenizer in `model_dir` (tokenizer.json, tokenizer_config.json,
// chat_template.jinja or .json, config.json), in their order:
// tokenizer.ggml.model "gpt2", pre, tokens, token_type, merges, the
// special token ids, add_bos/eos/sep_token, tokenizer.chat_template.
// Empty when the directory has no tokenizer.json. E4001 naming the field
// for a tokenizer llama.cpp's gpt2 vocabulary cannot hold (a model other
// than BPE, byte fallback, no ByteLevel step, ids past vocab_size) or whose
// pre-tokenizer has no name here (pass `pre`); E3001 for malformed JSON.
std::vector<std::pair<std::string, GgufValue>> gguf_tokenizer_metadata(
    const std::filesystem::path& model_dir,
    const GgufTokenizerOptions& options);

// The other way: HuggingFace files for a GGUF file's vocabulary.
struct HfTokenizerFiles {
  // tokenizer.json for a gpt2 vocabulary of a pre-tokenizer tessel can
  // spell as tokenizers' steps (the gpt-2, Llama-3, dbrx and Qwen2
  // families); empty otherwise.
  std::string tokenizer_json;
  // bos/eos/unk/pad tokens, add_bos/add_eos_token and chat_template;
  // empty when the file has no vocabulary.
  std::string tokenizer_config_json;
  // What was not written, and why (for the user); empty when nothing.
  std::string note;
};
HfTokenizerFiles hf_tokenizer_files(const GgufFile& file);

}  // namespace tessel

// The pre-tokenizers tessel names with a tokenizer.ggml.pre value when it
// converts a tokenizer.json, and spells as tokenizer.json steps when it
// converts back: their split patterns as the published tokenizer.json
// files have them (tokenizers' syntax), and the llama.cpp names that share
// each one's behaviour (src/models/tokenizer/gguf_loader.cpp).
#pragma once

#include <array>
#include <string_view>

namespace tessel::gguf_tokenizer {

inline constexpr std::string_view kLlama3Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2Split =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

enum class Family { Gpt2, Llama3, Dbrx, Qwen2 };

struct FamilyNames {
  Family family;
  // The first is what tessel writes.
  std::array<std::string_view, 13> names;
};

inline constexpr std::array<FamilyNames, 4> kFamilies{{
    {Family::Gpt2,
     {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es",
      "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "mpt", "olmo",
      "exaone4"}},
    // llama.cpp ignores merges for these and adds BOS.
    {Family::Llama3,
     {"llama-bpe", "llama3", "llama-v3", "falcon3", "falcon-h1", "pixtral",
      "midm-2.0", "lfm2", "jina-v5-nano"}},
    // Llama-3's split without ignore_merges.
    {Family::Dbrx, {"smaug-bpe", "dbrx"}},
    {Family::Qwen2, {"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"}},
}};

}  // namespace tessel::gguf_tokenizer

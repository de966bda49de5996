// --cache-type of the commands that run a model: what the KV cache keeps
// keys and values in (tessel::KVCache, docs/models.md "The KV cache").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tessel::cli {

// The value is a name for parse_dtype: llama.cpp's --cache-type-k/-v
// choices.
inline void add_cache_type_option(CLI::App* cmd, std::string* name) {
  cmd->add_option("--cache-type", *name,
                  "KV cache: f32 keeps the keys and values as computed; f16 "
                  "(llama.cpp's default) and bf16 round each once, halving "
                  "the cache's memory and what long-context decoding reads; "
                  "q8_0, q4_0, q4_1, q5_0, q5_1 and iq4_nl quantise them in "
                  "32-element blocks (q8_0: 53% of f16's bytes)")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1",
                             "q5_0", "q5_1", "iq4_nl"}))
      ->capture_default_str();
}

}  // namespace tessel::cli

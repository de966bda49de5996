// --cache-type of the commands that run a model: what the KV cache keeps
// keys and values in (tessel::KVCache, docs/models.md "The KV cache").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tessel::cli {

// The value is a name for parse_dtype: f32, f16 or bf16.
inline void add_cache_type_option(CLI::App* cmd, std::string* name) {
  cmd->add_option("--cache-type", *name,
                  "KV cache: f32 keeps the keys and values as computed; f16 "
                  "(llama.cpp's default) and bf16 round each once, halving "
                  "the cache's memory and what long-context decoding reads")
      ->check(CLI::IsMember({"f32", "f16", "bf16"}))
      ->capture_default_str();
}

}  // namespace tessel::cli

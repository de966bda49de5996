// --matmul-precision of the commands that run a model: how f32 activations
// multiply bf16 weights (tessel::MatmulPrecision, docs/models.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tessel/core/matmul_precision.hpp"

namespace tessel::cli {

// The value is a name for parse_matmul_precision.
inline void add_matmul_precision_option(CLI::App* cmd, std::string* name) {
  cmd->add_option("--matmul-precision", *name,
                  "f32: bf16 weights multiply the exact f32 activations; "
                  "bf16: the activations are rounded to bf16 first, as "
                  "llama.cpp does (about 2x the prompt speed of bf16 "
                  "checkpoints on CPUs with AVX512-BF16 or AMX)")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
}

}  // namespace tessel::cli

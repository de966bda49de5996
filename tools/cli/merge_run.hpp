// `tessel merge CONFIG OUT`: a mergekit configuration run over local HF
// checkpoint directories and GGUF files, streamed one tensor at a time
// into an HF checkpoint directory (staged and swapped in whole) or a GGUF
// file (atomic). Everything that can be checked from headers — the
// config, the models, the output path, every tensor's shape — is checked
// before the first tensor is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tessel::cli {

struct MergeRunOptions {
  std::filesystem::path config;
  std::filesystem::path output;
  std::uint64_t seed = 0;
  std::string quantize;  // a llama.cpp mix (Q4_K_M, Q8_0, ...); GGUF only
  std::int64_t shard_bytes = 5'000'000'000;
  std::string tokenizer_pre;  // tokenizer.ggml.pre for a GGUF output
  bool progress = true;       // a bar on a terminal
};

struct MergeReport {
  std::string method;
  std::string output_format;  // "hf" or "gguf"
  std::size_t models = 0;
  std::size_t tensors = 0;
  std::int64_t layers = 0;
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;
  double seconds = 0;
  std::vector<std::string> notes;
};

MergeReport run_merge(const MergeRunOptions& options);

}  // namespace tessel::cli

// A whole-checkpoint merge: a mergekit configuration run over local HF
// checkpoint directories and GGUF files, streamed one tensor at a time
// into an HF checkpoint directory (staged and swapped in whole) or a GGUF
// file (atomic). Everything that can be checked from headers (the config,
// the models, the output path, every tensor's shape) is checked before
// the first tensor is read. `tessel merge` and `tessel.merge.run` (Python)
// call this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::merge {

// Where a run is: `done` of `total` output tensors written, `bytes_read`
// bytes of input tensors read so far, the tensor just written.
struct RunProgress {
  std::int64_t done = 0;
  std::int64_t total = 0;
  std::int64_t bytes_read = 0;
  std::string_view tensor;
};

struct RunOptions {
  std::filesystem::path config;  // mergekit YAML
  std::filesystem::path output;  // a directory, or a .gguf file
  std::uint64_t seed = 0;        // for the random sparsifying methods
  std::string quantize;  // a llama.cpp mix (Q4_K_M, Q8_0, ...); GGUF only
  std::int64_t shard_bytes = 5'000'000'000;
  std::string tokenizer_pre;  // tokenizer.ggml.pre for a GGUF output
  // Called after each tensor is written (on the calling thread); empty:
  // no reports.
  std::function<void(const RunProgress&)> on_progress;
};

struct RunReport {
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

RunReport run(const RunOptions& options);

}  // namespace tessel::merge

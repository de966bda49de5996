// Weights are the file (issue 14): loading a bf16 checkpoint maps it and
// touches no weight page; the first forward touches each once, and the
// process's resident memory then stays within 10% of the tensors' bytes
// (a widened f32 copy would be 3x, a copy at load 2x).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tessel/tessel.hpp"

namespace tessel {
namespace {

namespace fs = std::filesystem;

// Resident bytes of this process (/proc/self/statm's second field).
std::int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

TEST(ModelMemory, Bf16CheckpointPagesAreTheParameters) {
  DecoderConfig c;
  c.model_type = "qwen3";
  c.vocab_size = 16000;
  c.hidden_size = 512;
  c.intermediate_size = 1536;
  c.num_hidden_layers = 6;
  c.num_attention_heads = 8;
  c.num_key_value_heads = 4;
  c.head_dim = 64;
  c.max_position_embeddings = 64;
  c.tie_word_embeddings = true;  // the head reads the whole table
  const fs::path dir = fs::temp_directory_path() /
                       ("tessel_memory_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Removed however the test ends (an ASSERT returns early).
  struct RemoveDir {
    fs::path path;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_dir{dir};
  std::int64_t tensor_bytes = 0;
  {
    const CausalLM lm(c, 1);
    std::vector<Tensor> half;
    for (const Tensor& t : lm.state_tensors()) {
      Tensor h = t.to(DType::BF16);
      half.push_back(h.set_name(t.name()));
      tensor_bytes += h.nbytes();
    }
    const std::string json = c.to_json();
    std::ofstream(dir / "config.json") << json;
    save_safetensors(dir / "model.safetensors", half);
  }
  // 27,073,792 parameters in bf16: 54,147,584 bytes (51.6 MiB), large
  // against the noise.
  ASSERT_GT(tensor_bytes, 40 << 20);

  // The runtime's one-time costs (oneDNN's kernels and scratch, the thread
  // pool's stacks) are paid first by a small model on the same paths: they
  // are not the model's, and would be noise against a real one's GBs.
  {
    DecoderConfig small = c;
    small.vocab_size = 64;
    small.num_hidden_layers = 1;
    const CausalLM warm(small, 2);
    Tensor x = zeros({5, 512});
    linear(x, warm.lm_head.value().to(DType::BF16));
    CausalLM::load(dir)->next_token_logits(zeros({1, 5}, DType::I64));
  }
  const std::int64_t before = resident_bytes();
  const auto lm = CausalLM::load(dir);
  const std::int64_t loaded = resident_bytes();
  // Reading the header maps the page that holds it, and where the file
  // is cached in 2 MiB folios (as AtomicFile writes it) that page is 2 MiB.
  constexpr std::int64_t kHeaderPage = std::int64_t{2} << 20;
  EXPECT_LT(loaded - before, tensor_bytes / 50 + kHeaderPage)
      << "loading read or copied weights";
  const Tensor ids = from_vector<std::int64_t>({1, 5, 9, 200, 7000}, {1, 5});
  const Tensor logits = lm->next_token_logits(ids);
  EXPECT_EQ(logits.shape(), (Shape{1, 16000}));
  const std::int64_t after = resident_bytes();
  std::printf(
      "resident memory over %lld tensor bytes: +%.2f%% loaded, "
      "+%.2f%% after the first forward\n",
      static_cast<long long>(tensor_bytes),
      100.0 * static_cast<double>(loaded - before) /
          static_cast<double>(tensor_bytes),
      100.0 * static_cast<double>(after - before) /
          static_cast<double>(tensor_bytes));
  EXPECT_GT(after - before, tensor_bytes * 9 / 10)
      << "the forward should have touched every weight page";
  EXPECT_LT(after - before, tensor_bytes * 11 / 10)
      << "weights were copied or widened";
}

}  // namespace
}  // namespace tessel

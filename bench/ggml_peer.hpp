// ggml as a benchmark peer (issue 13): quantised matmul and the block
// codecs of the ggml that llama-cpp-python 0.3.36 installs (ggml 0.25.3),
// timed in the same run as tessel's kernels.
//
// Shapes follow ggml: W is [N, K] (ggml ne = {K, N}), x is [M, K] f32 and
// y = ggml_mul_mat(W, x) is [M, N] f32, i.e. y = x W^T.
#pragma once

#include <ggml-backend.h>
#include <ggml-cpu.h>
#include <ggml.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bench {

// Rows of K values quantised with ggml_quantize_chunk (no importance
// matrix, so the IQ1/IQ2/IQ3 types are out).
struct GgmlWeights {
  ggml_type type;
  std::int64_t n = 0, k = 0;
  std::vector<std::uint8_t> bytes;

  // Splits the rows into `threads` contiguous ranges, one std::thread each
  // (ggml_quantize_chunk is thread-safe; `start` must be a row start).
  static GgmlWeights quantize(ggml_type type, std::int64_t n, std::int64_t k,
                              const float* w, int threads = 1);
};

// ggml-base's dequantiser, ggml_get_type_traits(type)->to_float, over `rows`
// rows split across `threads` std::threads. (ggml-cpu 0.25.3 has no
// to_float of its own: its type traits hold only from_float and vec_dot.)
void ggml_dequantize(ggml_type type, const void* src, float* dst,
                     std::int64_t rows, std::int64_t k, int threads = 1);

// Values per block of `type`; K must be a multiple (256 for K-quants and
// IQ4_XS, 32 for Q4_0/Q8_0).
std::int64_t ggml_block_size(ggml_type type);

struct GgmlMatmulOptions {
  // Independent weight copies that run() cycles through, so that a
  // weight matrix smaller than L3 is read from DRAM ("cold") every call.
  int copies = 1;
  // Put W in ggml-cpu's CPU_REPACK buffer type when it has a layout for
  // the type (on AVX2: Q4_0 and Q4_K, 8x8 interleaved). llama.cpp does
  // this by default (use_extra_bufts), so it is its real decode path.
  bool repack = false;
  // madvise(MADV_HUGEPAGE) the weight buffer before it is filled, as
  // tessel's host allocator does for its own. ggml does not (and llama.cpp
  // mmaps weights from the page cache), so false is ggml as deployed.
  bool huge_pages = false;
};

// One ggml context set (weights, activations, graphs) for y = W x. All
// allocation, quantisation, repacking, planning and the threadpool happen
// in the constructor or set_threads(); run() only computes.
class GgmlMatmul {
 public:
  // x: M x K f32, row-major.
  GgmlMatmul(const GgmlWeights& w, const float* x, std::int64_t m, int threads,
             GgmlMatmulOptions options = {});
  ~GgmlMatmul();
  GgmlMatmul(const GgmlMatmul&) = delete;
  GgmlMatmul& operator=(const GgmlMatmul&) = delete;

  // New plans and threadpool for `threads` (outside any timed region).
  void set_threads(int threads);

  // y = W_c x with the next weight copy c on the ggml-cpu backend.
  void run();

  // y of copy 0, M x N row-major. Copies hold the same rows rotated
  // (see the constructor), so copy 0 is W as given.
  std::vector<float> result();

  // Bytes of one weight copy, the traffic of one M = 1 call.
  std::size_t weight_bytes() const { return weight_bytes_; }
  int copies() const { return static_cast<int>(graphs_.size()); }
  bool repacked() const { return repacked_; }

 private:
  std::int64_t m_, n_;
  std::size_t weight_bytes_;
  bool repacked_ = false;
  ggml_context* ctx_w_ = nullptr;  // weights only: one buffer type
  ggml_context* ctx_a_ = nullptr;  // x and the outputs
  ggml_context* ctx_g_ = nullptr;  // graph objects
  ggml_backend_buffer_t buf_w_ = nullptr;
  ggml_backend_buffer_t buf_a_ = nullptr;
  std::vector<ggml_cgraph*> graphs_;
  std::vector<ggml_tensor*> outputs_;
  ggml_threadpool* pool_ = nullptr;
  // One plan serves every copy: the graphs differ only in W's address.
  ggml_cplan plan_{};
  std::vector<std::uint8_t> work_;  // the plan's scratch (x as Q8_0/Q8_K)
  int next_ = 0;
};

}  // namespace bench

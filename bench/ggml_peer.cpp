// See ggml_peer.hpp.
#include "ggml_peer.hpp"

#include "ceilings.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace bench {

namespace {

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("ggml peer: ") + what);
}

// Calls f(row_begin, row_end) on `threads` contiguous row ranges, each on
// its own std::thread (the caller's thread takes the first).
template <class F>
void split_rows(std::int64_t rows, int threads, F f) {
  threads = static_cast<int>(std::clamp<std::int64_t>(threads, 1, rows));
  std::vector<std::thread> pool;
  const std::int64_t per = (rows + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    const std::int64_t lo = t * per, hi = std::min(rows, lo + per);
    if (lo < hi) pool.emplace_back(f, lo, hi);
  }
  f(0, std::min(rows, per));
  for (auto& th : pool) th.join();
}

// The CPU device's CPU_REPACK buffer type, null when this build has none.
// It is reached through the registry because ggml-cpu exports its getter
// only as a C++ symbol.
ggml_backend_buffer_type_t repack_buffer_type() {
  ggml_backend_dev_t dev =
      ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (dev == nullptr) return nullptr;
  auto get = reinterpret_cast<ggml_backend_dev_get_extra_bufts_t>(
      ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev),
                                        "ggml_backend_dev_get_extra_bufts"));
  if (get == nullptr) return nullptr;
  for (ggml_backend_buffer_type_t* b = get(dev); b && *b; ++b) {
    if (std::strcmp(ggml_backend_buft_name(*b), "CPU_REPACK") == 0) return *b;
  }
  return nullptr;
}

ggml_context* metadata_context(std::size_t tensors, std::size_t graphs) {
  ggml_init_params p{};
  p.mem_size =
      tensors * ggml_tensor_overhead() + graphs * ggml_graph_overhead() + 1024;
  p.no_alloc = true;  // data lives in backend buffers
  return ggml_init(p);
}

}  // namespace

std::int64_t ggml_block_size(ggml_type type) { return ggml_blck_size(type); }

GgmlWeights GgmlWeights::quantize(ggml_type type, std::int64_t n,
                                  std::int64_t k, const float* w, int threads) {
  check(k % ggml_blck_size(type) == 0, "K is not a multiple of the block");
  check(!ggml_quantize_requires_imatrix(type), "type needs an imatrix");
  GgmlWeights out{type, n, k,
                  std::vector<std::uint8_t>(ggml_row_size(type, k) * n)};
  ggml_quantize_init(type);  // its tables once, not raced by the threads
  split_rows(n, threads, [&](std::int64_t lo, std::int64_t hi) {
    // `start` counts elements and must begin a row; dst is the whole array.
    ggml_quantize_chunk(type, w, out.bytes.data(), lo * k, hi - lo, k, nullptr);
  });
  return out;
}

void ggml_dequantize(ggml_type type, const void* src, float* dst,
                     std::int64_t rows, std::int64_t k, int threads) {
  const ggml_to_float_t to_float = ggml_get_type_traits(type)->to_float;
  check(to_float != nullptr, "type has no to_float");
  const std::size_t row_bytes = ggml_row_size(type, k);
  split_rows(rows, threads, [&](std::int64_t lo, std::int64_t hi) {
    to_float(static_cast<const std::uint8_t*>(src) + lo * row_bytes,
             dst + lo * k, (hi - lo) * k);
  });
}

GgmlMatmul::GgmlMatmul(const GgmlWeights& w, const float* x, std::int64_t m,
                       int threads, GgmlMatmulOptions options)
    : m_(m), n_(w.n), weight_bytes_(w.bytes.size()) {
  // ggml logs each repacked tensor to stderr; the benchmark's output is
  // the table.
  ggml_log_set([](ggml_log_level, const char*, void*) {}, nullptr);
  ggml_cpu_init();  // ggml-cpu's f16 tables; idempotent
  const int copies = std::max(1, options.copies);
  ctx_w_ = metadata_context(copies, 0);
  ctx_a_ = metadata_context(1 + copies, 0);
  ctx_g_ = metadata_context(0, copies);
  check(ctx_w_ && ctx_a_ && ctx_g_, "ggml_init failed");

  std::vector<ggml_tensor*> ws;
  for (int c = 0; c < copies; ++c)
    ws.push_back(ggml_new_tensor_2d(ctx_w_, w.type, w.k, w.n));
  ggml_tensor* xt = ggml_new_tensor_2d(ctx_a_, GGML_TYPE_F32, w.k, m);
  for (int c = 0; c < copies; ++c) {
    outputs_.push_back(ggml_mul_mat(ctx_a_, ws[c], xt));
    graphs_.push_back(ggml_new_graph(ctx_g_));
    ggml_build_forward_expand(graphs_.back(), outputs_.back());
  }

  // Ask the CPU device, as llama.cpp does, whether the repack buffer has a
  // layout for this mul_mat; W sits in an empty buffer of that type while
  // it answers. (Allocating to find out fails: the repack buffer leaves an
  // unsupported W without traits, and W cannot then be set or reallocated.)
  if (options.repack) {
    if (ggml_backend_buffer_type_t buft = repack_buffer_type()) {
      ggml_backend_buffer_t probe = ggml_backend_buft_alloc_buffer(buft, 0);
      ws[0]->buffer = probe;
      repacked_ = ggml_backend_dev_supports_op(
          ggml_backend_buft_get_device(buft), outputs_[0]);
      ws[0]->buffer = nullptr;
      ggml_backend_buffer_free(probe);
      if (repacked_)
        buf_w_ = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w_, buft);
    }
  }
  if (buf_w_ == nullptr)
    buf_w_ = ggml_backend_alloc_ctx_tensors_from_buft(
        ctx_w_, ggml_backend_cpu_buffer_type());
  buf_a_ = ggml_backend_alloc_ctx_tensors_from_buft(
      ctx_a_, ggml_backend_cpu_buffer_type());
  check(buf_w_ && buf_a_, "allocation failed");

  if (options.huge_pages) {
    // madvise wants a page-aligned start; THP then backs the 2 MiB-aligned
    // parts as they are first touched below.
    const auto base =
        reinterpret_cast<std::uintptr_t>(ggml_backend_buffer_get_base(buf_w_));
    const std::uintptr_t lo = (base + 4095) & ~std::uintptr_t{4095};
    const std::uintptr_t hi = base + ggml_backend_buffer_get_size(buf_w_);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
  }

  // Copies differ page for page (bench::distinct_copy), for a memcpy where
  // quantising fresh data would cost seconds.
  const std::size_t row_bytes = ggml_row_size(w.type, w.k);
  std::vector<std::uint8_t> rotated(w.bytes.size());
  for (int c = 0; c < copies; ++c) {
    bench::distinct_copy(w.bytes.data(), w.n, row_bytes, ggml_type_size(w.type),
                         c, rotated.data());
    ggml_backend_tensor_set(ws[c], rotated.data(), 0, rotated.size());
  }
  ggml_backend_tensor_set(xt, x, 0, ggml_nbytes(xt));
  set_threads(threads);
}

GgmlMatmul::~GgmlMatmul() {
  if (pool_) ggml_threadpool_free(pool_);
  if (buf_w_) ggml_backend_buffer_free(buf_w_);
  if (buf_a_) ggml_backend_buffer_free(buf_a_);
  for (ggml_context* c : {ctx_g_, ctx_a_, ctx_w_})
    if (c) ggml_free(c);
}

void GgmlMatmul::set_threads(int threads) {
  if (pool_) ggml_threadpool_free(pool_);
  // This build threads with OpenMP: the pool then holds per-thread state
  // and OpenMP's team does the work; without one, every compute would
  // create and free a throwaway pool.
  ggml_threadpool_params tp = ggml_threadpool_params_default(threads);
  pool_ = ggml_threadpool_new(&tp);
  check(pool_ != nullptr, "ggml_threadpool_new failed");
  plan_ = ggml_graph_plan(graphs_[0], threads, pool_);
  work_.assign(plan_.work_size, 0);
  plan_.work_data = work_.data();
}

void GgmlMatmul::run() {
  check(ggml_graph_compute(graphs_[next_], &plan_) == GGML_STATUS_SUCCESS,
        "compute failed");
  next_ = (next_ + 1) % static_cast<int>(graphs_.size());
}

std::vector<float> GgmlMatmul::result() {
  check(ggml_graph_compute(graphs_[0], &plan_) == GGML_STATUS_SUCCESS,
        "compute failed");
  std::vector<float> y(static_cast<std::size_t>(m_ * n_));
  ggml_backend_tensor_get(outputs_[0], y.data(), 0, y.size() * sizeof(float));
  return y;
}

}  // namespace bench

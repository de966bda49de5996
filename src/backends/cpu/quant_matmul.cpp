// x @ W^T for block-quantised weights W (N, K): the engine choice of the
// CPU backend (Note [backend seam]), chosen by measurement
// (docs/quantisation.md, BENCHMARKS.md). The six types with integer
// kernels (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS) quantise the activations
// once to ggml's 8-bit blocks, then:
//  - one to three rows (the decode step): ggml's algorithm, integer dot
//    products against the weight blocks as stored
//    (simd/quant_dot_simd.hpp). The weights stream through once.
//  - more rows: the packed integer GEMM (simd/quant_gemm_simd.hpp), each
//    unit of 8 or 16 weight rows unpacked once to 8-bit codes side by
//    side and multiplied with every activation row (gemm_paths).
// Every other block type dequantises a chunk of weight rows to f32 (about
// 8 MiB) and runs oneDNN's matmul on it. W is never expanded in memory as
// a whole.
//
// f16/bf16 weights (a 16-bit checkpoint run in f32) take the same chunked
// path, widened exactly instead of dequantised, and one activation row
// takes the GEMV that streams them as stored. Under MatmulPrecision::BF16
// the activations of bf16 weights come rounded to bf16, and more than one
// row of them goes to oneDNN's bf16 GEMM on W as stored: vdpbf16ps
// multiplies at twice the f32 FMA rate (2.0-2.4x the widened rows,
// BENCHMARKS.md).
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/gemm_kernels.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "backends/cpu/simd/quant_gemm_simd.hpp"
#include "core/host_allocator.hpp"
#include "tessel/core/parallel.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

// Up to this many activation rows the dot kernels beat the packed GEMM
// (measured, 4096 x 4096, BENCHMARKS.md): each extra row costs them a full
// pass of decode and products, while the GEMM pays one packing pass of W
// (about a row and a half of dot work) and then far less per row. The
// 18-byte Q4_0 and 34-byte Q8_0 blocks decode least per weight into the
// dot kernels and cross over first.
std::int64_t max_dot_rows(DType w) {
  return w == DType::Q4_0 || w == DType::Q8_0 ? 1 : 3;
}
// Weight rows widened per oneDNN call: about 8 MiB of f32, which stays in
// the last-level cache between the widening and the product. One threaded
// matmul over a chunk this size ran 190-204 GFLOP/s for 128 rows of x
// (Zen 4, K 1024-3072), where a 256-row tile per thread through a
// single-threaded sgemm ran 166-170: oneDNN blocks a large product better
// than the threads' separate small ones (BENCHMARKS.md).
std::int64_t widened_chunk_rows(std::int64_t n, std::int64_t k) {
  const std::int64_t most =
      std::max<std::int64_t>(256, (std::int64_t{8} << 20) / (4 * k));
  // Equal chunks in whole 64-row panels: a short last chunk (320 rows
  // after 704) ran at half the rate of the others.
  const std::int64_t chunks = (n + most - 1) / most;
  return std::min(n, ((n + chunks - 1) / chunks + 63) / 64 * 64);
}

struct WeightRows {
  const std::uint8_t* base;  // row 0's first block
  std::size_t row_bytes;     // distance between rows
};

WeightRows weight_rows(const KernelInput& w) {
  const auto& tr = dtype_traits(w.dtype());
  const auto* storage = reinterpret_cast<const std::uint8_t*>(w.storage_base());
  const std::int64_t row_stride = w.shape()[0] > 1 ? w.strides()[0] : 0;
  return {
      storage + w.storage_offset() / tr.block_size * tr.block_bytes,
      static_cast<std::size_t>(row_stride / tr.block_size * tr.block_bytes)};
}

void add_bias_rows(float* out, std::int64_t m, std::int64_t n,
                   const float* bias) {
  parallel_for(0, m,
               std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(n, 1)),
               [&](std::int64_t lo, std::int64_t hi) {
                 for (std::int64_t r = lo; r < hi; ++r) {
                   float* row = out + r * n;
                   for (std::int64_t j = 0; j < n; ++j) row[j] += bias[j];
                 }
               });
}

// Whether m rows of x against w take the dot kernels.
bool takes_dot_kernels(DType w, std::int64_t m) {
  return cpu::simd::has_quant_dot(w) && m <= max_dot_rows(w);
}

// A weight multiplied as stored: out (m x n, row stride n) = x @ w^T.
struct NarrowProduct {
  WeightRows w;
  DType dtype;
  std::int64_t n;
  float* out;
};

// Each product's out from x (m x k): x quantised once per kind of 8-bit
// activation blocks the weights read (Q4_K and Q5_K share one; Q6_K's
// plain Q8_K is a prefix of IQ4_XS's, but each has its own), then every
// weight's rows in one parallel pass, cut into chunks of about 32 KiB: a thread
// done with one weight's rows goes on to the next's, where one pass per weight
// started the team and waited for its slowest thread each time (linear_shared).
void integer_path(const float* x, std::int64_t m, std::int64_t k,
                  std::span<const NarrowProduct> products) {
  namespace simd = cpu::simd;
  std::vector<std::pair<simd::ActivationBlocks, detail::HostBuffer>> quantized;
  std::vector<const std::uint8_t*> act;
  std::vector<std::int64_t> chunk_rows, first_chunk{0};
  for (const NarrowProduct& p : products) {
    const simd::ActivationBlocks kind = simd::dot_activation_blocks(p.dtype);
    auto it = std::find_if(quantized.begin(), quantized.end(),
                           [&](const auto& q) { return q.first == kind; });
    if (it == quantized.end()) {
      const std::size_t row_bytes = simd::activation_row_bytes(kind, k);
      detail::HostBuffer blocks(row_bytes * static_cast<std::size_t>(m),
                                "linear");
      parallel_for(0, m, 1, [&](std::int64_t lo, std::int64_t hi) {
        simd::quantize_activations(kind, x + lo * k, k, hi - lo, k,
                                   blocks.data() + lo * row_bytes);
      });
      it = quantized.emplace(quantized.end(), kind, std::move(blocks));
    }
    act.push_back(it->second.data());
    // Whole fours: the 512-bit dot kernels take rows four at a time, and a
    // chunk's last one to three rows would each sum their own lanes.
    chunk_rows.push_back(
        cpu::streamed_chunk_rows(static_cast<std::int64_t>(p.w.row_bytes)) / 4 *
        4);
    first_chunk.push_back(first_chunk.back() +
                          (p.n + chunk_rows.back() - 1) / chunk_rows.back());
  }
  parallel_for_dynamic(
      0, first_chunk.back(), 1, [&](std::int64_t lo, std::int64_t hi) {
        std::size_t i = 0;  // the product chunk c is of; c only grows
        for (std::int64_t c = lo; c < hi; ++c) {
          while (c >= first_chunk[i + 1]) ++i;
          const NarrowProduct& p = products[i];
          const std::int64_t r0 = (c - first_chunk[i]) * chunk_rows[i];
          simd::quant_dot_rows(p.dtype, p.w.base + r0 * p.w.row_bytes,
                               p.w.row_bytes, std::min(chunk_rows[i], p.n - r0),
                               act[i], m, k, p.out + r0, p.n);
        }
      });
}

// Each product's out from x (m x k) by the packed integer GEMM: x
// quantised once per kind of activation blocks and put in the GEMM's form
// once per weight type, then every weight's tiles in one parallel pass,
// each packed by the thread that takes it and run against every
// activation row. Threads take tiles as they finish (this host's two
// vCPUs do not run at the same rate), and a fused q/k/v or gate/up
// product waits for its slowest thread once, not once per weight.
void gemm_paths(const float* x, std::int64_t m, std::int64_t k,
                std::span<const NarrowProduct> products) {
  namespace simd = cpu::simd;
  struct Prepared {
    DType dtype;
    std::size_t row_bytes;
    detail::HostBuffer rows;
  };
  std::vector<Prepared> prepared;
  prepared.reserve(products.size());  // `act` points into it
  std::vector<const Prepared*> act;
  for (const NarrowProduct& p : products) {
    auto it =
        std::find_if(prepared.begin(), prepared.end(),
                     [&](const Prepared& q) { return q.dtype == p.dtype; });
    if (it == prepared.end()) {
      const std::size_t bytes = simd::gemm_activation_row_bytes(p.dtype, k);
      prepared.push_back(
          {p.dtype, bytes,
           detail::HostBuffer(bytes * static_cast<std::size_t>(m), "linear")});
      it = prepared.end() - 1;
    }
    act.push_back(&*it);
  }
  parallel_for(0, m, 8, [&](std::int64_t lo, std::int64_t hi) {
    std::vector<std::pair<simd::ActivationBlocks, detail::HostBuffer>> blocks;
    for (const Prepared& q : prepared) {
      const simd::ActivationBlocks kind = simd::activation_blocks(q.dtype);
      auto it = std::find_if(blocks.begin(), blocks.end(),
                             [&](const auto& b) { return b.first == kind; });
      if (it == blocks.end()) {
        detail::HostBuffer rows(simd::activation_row_bytes(kind, k) *
                                    static_cast<std::size_t>(hi - lo),
                                "linear");
        simd::quantize_activations(kind, x + lo * k, k, hi - lo, k,
                                   rows.data());
        it = blocks.emplace(blocks.end(), kind, std::move(rows));
      }
      simd::prepare_gemm_activations(q.dtype, it->second.data(), hi - lo, k,
                                     q.rows.data() + lo * q.row_bytes);
    }
  });
  std::vector<std::int64_t> tile_rows, first_tile{0};
  std::size_t tile_bytes = 0;  // the largest product's unit
  for (const NarrowProduct& p : products) {
    tile_rows.push_back(simd::gemm_tile_rows(p.dtype, m));
    first_tile.push_back(first_tile.back() +
                         (p.n + tile_rows.back() - 1) / tile_rows.back());
    tile_bytes = std::max(tile_bytes, simd::gemm_tile_bytes(p.dtype, k));
  }
  parallel_for_dynamic(
      0, first_tile.back(), 1, [&](std::int64_t lo, std::int64_t hi) {
        std::size_t i = 0;  // the product tile t is of; t only grows
        // Kept by each thread: a chunk is a tile, and a tile's buffer is
        // large enough (64 KiB at K = 4096) to come from the locked cache
        // of mapped blocks, which a buffer per chunk made 10-20 % of a
        // product of 16 rows.
        thread_local detail::HostBuffer tile;
        if (tile.size() < tile_bytes) {
          tile = detail::HostBuffer(tile_bytes, "linear");
        }
        for (std::int64_t t = lo; t < hi; ++t) {
          while (t >= first_tile[i + 1]) ++i;
          const NarrowProduct& p = products[i];
          const std::int64_t r0 = (t - first_tile[i]) * tile_rows[i];
          const std::int64_t rows = std::min(tile_rows[i], p.n - r0);
          simd::pack_gemm_tile(p.dtype, p.w.base + r0 * p.w.row_bytes,
                               p.w.row_bytes, rows, k, tile.data());
          simd::quant_gemm_tile(p.dtype, tile.data(), rows, act[i]->rows.data(),
                                m, k, p.out + r0, p.n);
        }
      });
}

void widened_path(const Tensor& x, const WeightRows& w, DType w_dtype,
                  const Tensor& out) {
  const std::int64_t m = x.shape()[0], k = x.shape()[1], n = out.shape()[1];
  const std::int64_t chunk = widened_chunk_rows(n, k);
  // Scratch from tessel's allocator, which keeps large buffers for reuse:
  // a fresh 8 MiB every call paid its page faults each time.
  const Tensor wide = empty({chunk, k}, DType::F32, Device::cpu());
  float* wide_data = output_view(wide).data<float>();
  // A chunk short of every row writes densely, then is copied into its
  // columns: oneDNN's matmul into a strided destination ran at half speed.
  const Tensor dense =
      chunk < n ? empty({m * chunk}, DType::F32, Device::cpu()) : Tensor();
  for (std::int64_t r0 = 0; r0 < n; r0 += chunk) {
    const std::int64_t rows = std::min(chunk, n - r0);
    parallel_for(0, rows, 16, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t r = lo; r < hi; ++r) {
        cpu::widen_to_f32(w_dtype, w.base + (r0 + r) * w.row_bytes,
                          wide_data + r * k, k);
      }
    });
    const Tensor part =
        chunk < n ? dense.slice(0, 0, m * rows).reshape({m, rows}) : out;
    if (!cpu::onednn::matmul(input_view(x),
                             input_view(wide.slice(0, 0, rows).transpose(0, 1)),
                             nullptr, output_view(part))) {
      cpu::onednn::sgemm(false, true, m, rows, k, 1.0f,
                         input_view(x).data<float>(), k, wide_data, k, 0.0f,
                         output_view(part).data<float>(), rows);
    }
    if (chunk < n) {
      cpu::copy_cast(output_view(out.slice(1, r0, r0 + rows)), input_view(part),
                     false);
    }
  }
}

// out = x w^T (+ bias) for bf16 x and w by oneDNN; false where it has no
// native bf16 kernel (an emulated one is slower than the widened rows).
bool bf16_gemm(const Tensor& x, const Tensor& w, const Tensor* bias,
               const Tensor& out) {
  if (!cpu::onednn::has_native_bf16()) return false;
  const KernelInput bias_view = bias ? input_view(*bias) : KernelInput();
  return cpu::onednn::matmul(input_view(x), input_view(w.transpose(0, 1)),
                             bias ? &bias_view : nullptr, output_view(out));
}

}  // namespace

void CpuBackend::narrow_weight_linear(const Tensor& x_in, const Tensor& w,
                                      const Tensor* bias,
                                      const Tensor& out) const {
  // bf16 activations (MatmulPrecision::BF16): one row, or a CPU without
  // bf16 kernels, multiplies their exact f32 values on the paths below.
  if (x_in.dtype() == DType::BF16 && x_in.shape()[0] > 1 &&
      bf16_gemm(x_in, w, bias, out)) {
    return;
  }
  const Tensor x = x_in.to(DType::F32);
  const KernelInput wv = input_view(w);
  const std::int64_t n = w.shape()[0], k = w.shape()[1], m = x.shape()[0];
  const WeightRows rows = weight_rows(wv);
  const float* xd = input_view(x).data<float>();
  float* od = output_view(out).data<float>();
  const bool half = w.dtype() == DType::F16 || w.dtype() == DType::BF16;
  if (half && m == 1) {
    cpu::gemv(input_view(x), wv.raw_data(), w.dtype(), w.strides()[0], n,
              output_view(out));
  } else if (half) {
    widened_path(x, rows, w.dtype(), out);
  } else if (takes_dot_kernels(w.dtype(), m)) {
    const NarrowProduct product{rows, w.dtype(), n, od};
    integer_path(xd, m, k, {&product, 1});
  } else if (cpu::simd::has_quant_gemm(w.dtype())) {
    const NarrowProduct product{rows, w.dtype(), n, od};
    gemm_paths(xd, m, k, {&product, 1});
  } else {
    widened_path(x, rows, w.dtype(), out);
  }
  if (bias) add_bias_rows(od, m, n, input_view(*bias).data<float>());
}

void CpuBackend::narrow_weight_linears(const Tensor& x,
                                       std::span<const Tensor> w,
                                       std::span<const Tensor* const> bias,
                                       std::span<const Tensor> out) const {
  const std::int64_t m = x.shape()[0], k = x.shape()[1];
  // The dot kernels' rows, or the packed GEMM's, have work in common.
  const auto all = [&](auto pred) {
    return std::all_of(w.begin(), w.end(),
                       [&](const Tensor& t) { return pred(t.dtype()); });
  };
  const bool dot = all([&](DType d) { return takes_dot_kernels(d, m); });
  const bool gemm = all([&](DType d) {
    return cpu::simd::has_quant_gemm(d) && !takes_dot_kernels(d, m);
  });
  if (x.dtype() != DType::F32 || (!dot && !gemm)) {
    Backend::narrow_weight_linears(x, w, bias, out);
    return;
  }
  std::vector<NarrowProduct> products;
  for (std::size_t i = 0; i < w.size(); ++i) {
    products.push_back({weight_rows(input_view(w[i])), w[i].dtype(),
                        w[i].shape()[0], output_view(out[i]).data<float>()});
  }
  const float* xd = input_view(x).data<float>();
  if (dot) {
    integer_path(xd, m, k, products);
  } else {
    gemm_paths(xd, m, k, products);
  }
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (bias[i]) {
      add_bias_rows(products[i].out, m, products[i].n,
                    input_view(*bias[i]).data<float>());
    }
  }
}

// A held team (Note [a held team]) saves the team's start and join on
// every pass of the step, but runs oneDNN on one thread: only where every
// one-row product is a kernel of tessel's own (the GEMV of f32/f16/bf16
// rows, the dot kernels).
void CpuBackend::run_decode_step(std::span<const DType> weight_dtypes,
                                 FunctionRef<void()> step) const {
  const bool own_kernels =
      std::all_of(weight_dtypes.begin(), weight_dtypes.end(), [](DType d) {
        return d == DType::F32 || d == DType::F16 || d == DType::BF16 ||
               takes_dot_kernels(d, 1);
      });
  if (own_kernels) {
    with_team_held(step);
  } else {
    step();
  }
}

}  // namespace tessel

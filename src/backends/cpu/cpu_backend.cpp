// The CPU backend's methods that only turn tensors into kernel views; the
// ones that choose between engines are in matmul.cpp and convolution.cpp.
#include "backends/cpu/cpu_backend.hpp"

#include <cmath>
#include <complex>
#include <cstring>

#include "backends/cpu/attention_kernels.hpp"
#include "backends/cpu/decomposition_kernels.hpp"
#include "backends/cpu/elementwise_kernels.hpp"
#include "backends/cpu/fft_kernels.hpp"
#include "backends/cpu/hadamard_kernels.hpp"
#include "backends/cpu/index_kernels.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/norm_kernels.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/pool_kernels.hpp"
#include "backends/cpu/reduce_kernels.hpp"
#include "backends/cpu/rope_kernels.hpp"
#include "backends/cpu/spmm_kernels.hpp"

namespace tessel {

namespace {

KernelInput in(const Tensor& t) { return input_view(t); }
KernelOutput out(const Tensor& t) { return output_view(t); }

// An (B, H, S, D) operand as the attention kernel reads it.
cpu::HeadsView heads(const KernelInput& t) {
  return {t.raw_data(), t.dtype(), t.strides()[0], t.strides()[1],
          t.strides()[2]};
}

}  // namespace

std::string CpuBackend::describe() const { return cpu::onednn::describe(); }

// ---- copies and fills ----

void CpuBackend::copy_cast(const Tensor& dst, const Tensor& src,
                           bool saturate) const {
  cpu::copy_cast(out(dst), in(src), saturate);
}
void CpuBackend::fill(const Tensor& dst, const Scalar& value) const {
  const KernelOutput d = out(dst);
  // Zero is all-zero bytes in every dtype (block formats: scale 0), and
  // memset is the fastest way to write it.
  const auto z = value.to<std::complex<double>>();  // both parts of a complex
  if (d.is_contiguous() && z.real() == 0.0 && z.imag() == 0.0 &&
      !std::signbit(z.real()) && !std::signbit(z.imag())) {
    std::memset(d.raw_data(), 0,
                static_cast<std::size_t>(storage_bytes(d.dtype(), d.numel())));
    return;
  }
  cpu::fill(d, value);
}
void CpuBackend::unpack_nibbles(const Tensor& dst_bytes,
                                const Tensor& src_packed) const {
  cpu::unpack_nibbles(out(dst_bytes), in(src_packed));
}
void CpuBackend::pack_nibbles(const Tensor& dst_packed,
                              const Tensor& src_bytes) const {
  cpu::pack_nibbles(out(dst_packed), in(src_bytes));
}
void CpuBackend::dequantize_blocks(const Tensor& dst_f32,
                                   const Tensor& src_blocks) const {
  cpu::dequantize_blocks(out(dst_f32), in(src_blocks));
}
void CpuBackend::quantize_blocks(const Tensor& dst_blocks,
                                 const Tensor& src_f32, bool runtime) const {
  cpu::quantize_blocks(out(dst_blocks), in(src_f32), runtime);
}
void CpuBackend::write_host_bytes(const Tensor& dst, const void* bytes,
                                  std::int64_t nbytes) const {
  if (nbytes > 0)
    std::memcpy(out(dst).raw_data(), bytes, static_cast<std::size_t>(nbytes));
}
void CpuBackend::fill_uniform(const Tensor& dst, const Generator& gen,
                              std::uint64_t first_block, double low,
                              double high) const {
  cpu::fill_uniform(out(dst), gen, first_block, low, high);
}
void CpuBackend::fill_normal(const Tensor& dst, const Generator& gen,
                             std::uint64_t first_block, double mean,
                             double std) const {
  cpu::fill_normal(out(dst), gen, first_block, mean, std);
}
void CpuBackend::fill_randint(const Tensor& dst, const Generator& gen,
                              std::uint64_t first_block, std::int64_t low,
                              std::int64_t high) const {
  cpu::fill_randint(out(dst), gen, first_block, low, high);
}
void CpuBackend::fill_arange(const Tensor& dst, const Scalar& start,
                             const Scalar& step) const {
  cpu::fill_arange(out(dst), start, step);
}
void CpuBackend::fill_linspace(const Tensor& dst, double start,
                               double end) const {
  cpu::fill_linspace(out(dst), start, end);
}

// ---- element-wise ----

void CpuBackend::unary(UnaryOp op, const UnaryParams& params, const Tensor& y,
                       const Tensor& x) const {
  cpu::unary(op, params, out(y), in(x));
}
void CpuBackend::binary(BinaryOp op, const Tensor& y, const Tensor& a,
                        const Tensor& b) const {
  cpu::binary(op, out(y), in(a), in(b));
}
void CpuBackend::where(const Tensor& y, const Tensor& cond, const Tensor& a,
                       const Tensor& b) const {
  cpu::where(out(y), in(cond), in(a), in(b));
}
void CpuBackend::fma(const Tensor& y, const Tensor& a, const Tensor& b,
                     const Tensor& c) const {
  cpu::fma(out(y), in(a), in(b), in(c));
}

// ---- reductions ----

void CpuBackend::reduce(ReduceOp op, double correction, const Tensor& x,
                        const Tensor& y, const ReduceShape& shape) const {
  cpu::reduce(op, correction, in(x), out(y), shape);
}
void CpuBackend::cumulative(bool product, bool exclusive, bool reverse,
                            const Tensor& x, const Tensor& y,
                            const ReduceShape& shape) const {
  cpu::cumulative(product, exclusive, reverse, in(x), out(y), shape);
}
void CpuBackend::softmax(SoftmaxKind kind, const Tensor& x, const Tensor& y,
                         const ReduceShape& shape) const {
  cpu::softmax(kind, in(x), out(y), shape);
}

// ---- indexing ----

void CpuBackend::normalize_indices(const Tensor& index, std::int64_t extent,
                                   const char* op) const {
  cpu::normalize_indices(out(index), extent, op);
}
void CpuBackend::gather_blocks(const Tensor& src, const Tensor& index,
                               const Tensor& y,
                               const ReduceShape& shape) const {
  cpu::gather_blocks(in(src), in(index).data<std::int64_t>(), index.numel(),
                     out(y), shape);
}
void CpuBackend::gather_elements(const Tensor& x, const Tensor& index,
                                 std::int64_t axis, const Tensor& y) const {
  cpu::gather_elements(in(x), in(index), axis, out(y));
}
void CpuBackend::scatter_elements(const Tensor& y, const Tensor& index,
                                  const Tensor& updates, std::int64_t axis,
                                  ScatterMode mode) const {
  cpu::scatter_elements(out(y), in(index), in(updates), axis, mode);
}
void CpuBackend::gather_nd(const Tensor& x, const Tensor& index,
                           std::int64_t batch_dims, std::int64_t depth,
                           const Tensor& y) const {
  cpu::gather_nd(in(x), in(index), batch_dims, depth, out(y));
}
void CpuBackend::sort_runs(const Tensor& x, const Tensor& values,
                           const Tensor& indices, const ReduceShape& shape,
                           bool descending) const {
  cpu::sort_runs(in(x), out(values), out(indices), shape, descending);
}
// ---- Fourier transforms ----

void CpuBackend::fft_rows(const Tensor& in_rows, const Tensor& out_rows,
                          bool inverse) const {
  cpu::fft_rows(in(in_rows), out(out_rows), inverse);
}

// ---- matrix decompositions ----

void CpuBackend::slogdet(const MatrixBatch& b, const Tensor& a,
                         const Tensor& sign, const Tensor& logabsdet) const {
  cpu::slogdet(b, in(a), out(sign), out(logabsdet));
}
void CpuBackend::solve(const MatrixBatch& b, const Tensor& a, const Tensor& rhs,
                       const Tensor& x, const Tensor& status) const {
  cpu::solve(b, in(a), in(rhs), out(x), out(status));
}
void CpuBackend::cholesky(const MatrixBatch& b, const Tensor& a,
                          const Tensor& l, const Tensor& status) const {
  cpu::cholesky(b, in(a), out(l), out(status));
}
void CpuBackend::qr(const MatrixBatch& b, const Tensor& a, const Tensor& q,
                    const Tensor& r, bool complete) const {
  cpu::qr(b, in(a), out(q), out(r), complete);
}
void CpuBackend::eigh(const MatrixBatch& b, const Tensor& a,
                      const Tensor& values, const Tensor& vectors,
                      const Tensor& status) const {
  cpu::eigh(b, in(a), out(values), out(vectors), out(status));
}
void CpuBackend::svd(const MatrixBatch& b, const Tensor& a, const Tensor& u,
                     const Tensor& s, const Tensor& vh, bool full,
                     const Tensor& status) const {
  cpu::svd(b, in(a), out(u), out(s), out(vh), full, out(status));
}
void CpuBackend::mask_coordinates(const Tensor& mask, const Tensor& y) const {
  cpu::mask_coordinates(in(mask), out(y));
}
void CpuBackend::search_sorted(const Tensor& sorted, const Tensor& values,
                               bool right, const Tensor& y) const {
  cpu::search_sorted(in(sorted), in(values), right, out(y));
}

// ---- pooling ----

void CpuBackend::max_pool(const Tensor& x, const Tensor& y,
                          const Tensor& indices, const PoolGeometry& g) const {
  cpu::max_pool(in(x), out(y), out(indices), g);
}
void CpuBackend::avg_pool(const Tensor& x, const Tensor& y,
                          const PoolGeometry& g) const {
  cpu::avg_pool(in(x), out(y), g);
}
void CpuBackend::avg_pool_backward(const Tensor& dy, const Tensor& dx,
                                   const PoolGeometry& g) const {
  cpu::avg_pool_backward(in(dy), out(dx), g);
}

// ---- fused model ops ----

void CpuBackend::normalize_rows(const NormRows& p, const Tensor& x,
                                const Tensor& y, const Tensor& weight,
                                const Tensor& bias, const Tensor& mean,
                                const Tensor& rstd) const {
  cpu::normalize_rows(p, in(x), out(y), in(weight), in(bias), out(mean),
                      out(rstd));
}
void CpuBackend::normalize_rows_backward(const NormRows& p, const Tensor& x,
                                         const Tensor& weight,
                                         const Tensor& mean, const Tensor& rstd,
                                         const Tensor& dy, const Tensor& dx,
                                         const Tensor& dweight,
                                         const Tensor& dbias) const {
  cpu::normalize_rows_backward(p, in(x), in(weight), in(mean), in(rstd), in(dy),
                               out(dx), out(dweight), out(dbias));
}
void CpuBackend::adam_update(const AdamStep& s, const Tensor& param,
                             const Tensor& grad, const Tensor& exp_avg,
                             const Tensor& exp_avg_sq) const {
  cpu::adam_update(s, out(param), in(grad), out(exp_avg), out(exp_avg_sq));
}
void CpuBackend::scatter_add_rows(const Tensor& dst, const Tensor& index,
                                  const Tensor& src) const {
  cpu::scatter_add_rows(out(dst), in(index).data<std::int64_t>(), index.numel(),
                        in(src));
}
void CpuBackend::rope(const RopeProblem& p, const Tensor& x, const Tensor& y,
                      const Tensor& cos, const Tensor& sin) const {
  cpu::rope(p, in(x), out(y), in(cos), in(sin));
}
void CpuBackend::hadamard_runs(std::int64_t block, const Tensor& x,
                               const Tensor& y) const {
  cpu::hadamard_runs(block, in(x), out(y));
}
namespace {

// The kernel's description of attention(s, q, k, v, mask).
cpu::AttentionProblem attention_problem(const AttentionShape& s,
                                        const Tensor& q, const Tensor& k,
                                        const Tensor& v, const Tensor& mask) {
  cpu::AttentionProblem p;
  p.batch = s.batch;
  p.q_heads = s.q_heads;
  p.kv_heads = s.kv_heads;
  p.q_len = s.q_len;
  p.kv_len = s.kv_len;
  p.head_dim = s.head_dim;
  p.value_dim = s.value_dim;
  p.scale = s.scale;
  p.softcap = s.softcap;
  p.causal = s.causal;
  p.causal_offset = s.causal_offset;
  p.q = heads(in(q));
  p.k = heads(in(k));
  p.v = heads(in(v));
  if (mask.defined()) {
    const KernelInput m = in(mask);
    if (m.dtype() == DType::Bool) {
      p.mask_keep = m.data<bool>();
    } else {
      p.mask_add = m.data<float>();
    }
    for (int i = 0; i < 4; ++i) p.mask_strides[i] = m.strides()[i];
  }
  return p;
}

}  // namespace

void CpuBackend::attention(const AttentionShape& s, const Tensor& q,
                           const Tensor& k, const Tensor& v, const Tensor& mask,
                           const Tensor& y) const {
  // The kernel widens 16-bit keys and values (dequantises block ones) a
  // tile at a time, again for each block of queries: a prefill of several
  // blocks converts them once.
  if (k.dtype() != DType::F32 && s.q_len > cpu::kAttentionQueryBlock) {
    return attention(s, q, k.to(DType::F32), v.to(DType::F32), mask, y);
  }
  cpu::AttentionProblem p = attention_problem(s, q, k, v, mask);
  p.out = out(y).data<float>();
  cpu::attention_forward(p);
}
void CpuBackend::attention_backward(const AttentionShape& s, const Tensor& q,
                                    const Tensor& k, const Tensor& v,
                                    const Tensor& mask, const Tensor& y,
                                    const Tensor& dy, const Tensor& dq,
                                    const Tensor& dk, const Tensor& dv) const {
  cpu::AttentionGradientBuffers g;
  g.out = in(y).data<float>();
  g.dout = in(dy).data<float>();
  g.dq = out(dq).data<float>();
  g.dk = out(dk).data<float>();
  g.dv = out(dv).data<float>();
  cpu::attention_backward(attention_problem(s, q, k, v, mask), g);
}
void CpuBackend::spmm_csr(const Tensor& crow, const Tensor& col,
                          const Tensor& values, const Tensor& dense,
                          const Tensor& y) const {
  cpu::spmm_csr(in(crow), in(col), in(values), in(dense), out(y));
}

}  // namespace tessel

// Note [backend seam]
// The op layer (src/ops) validates operands, promotes dtypes, applies the
// shape rule and allocates the outputs on the operands' device; then it
// calls the Backend of that device through this one interface, and never
// names a backend. A Backend receives operands that are already correct
// (same device, the dtypes and layouts each method states, outputs of the
// right shape) and owns everything below: which engine runs (oneDNN, its
// own SIMD kernels, a reference loop), fallbacks between them, scratch
// memory, and the plain views (kernel_view.hpp) its kernels read.
//
// Every method has a default that raises E2501 naming the op and the
// backend, so a backend that lacks an op fails loudly; there is no silent
// fallback to another device. The CPU backend implements every method; the
// meta backend implements every method as "nothing to compute" (its
// tensors have no data), which is how the whole op surface runs on meta.
//
// Adding an op that needs a new kind of kernel adds one method here, its
// CPU implementation and its meta one (usually empty).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "backends/kernel_problems.hpp"
#include "tessel/core/parallel.hpp"
#include "tessel/core/random.hpp"
#include "tessel/core/scalar.hpp"
#include "tessel/core/tensor.hpp"
#include "tessel/ops/op_list.hpp"

namespace tessel {

class Backend {
 public:
  virtual ~Backend() = default;
  // "cpu", "meta".
  virtual const char* name() const = 0;
  // The engines behind the heavy ops, for runtime_info().
  virtual std::string describe() const { return name(); }
  // The alignment its kernels want for a buffer's start: what tensors on
  // its device are allocated with, and what device_alignment() answers.
  virtual std::size_t alignment() const { return kAllocAlignment; }
  // Whether tensors of this backend hold data: ops that must read values
  // on the host (index checks, data-dependent shapes, finiteness checks)
  // ask before reading.
  virtual bool has_data() const { return true; }

  // ---- copies and fills: ops/copy.cpp, ops/factories.cpp ----
  // dst[i] = convert(src[i]), byte-addressable dtypes, src already
  // broadcast to dst's shape.
  virtual void copy_cast(const Tensor& dst, const Tensor& src,
                         bool saturate) const;
  virtual void fill(const Tensor& dst, const Scalar& value) const;
  // Packed i4/u4 <-> one byte per element (contiguous byte side).
  virtual void unpack_nibbles(const Tensor& dst_bytes,
                              const Tensor& src_packed) const;
  virtual void pack_nibbles(const Tensor& dst_packed,
                            const Tensor& src_bytes) const;
  // Block-quantised -> contiguous f32 of the same shape (src in whole
  // blocks along a unit-stride last axis, any block-aligned strides
  // elsewhere), and contiguous f32 -> contiguous blocks of a dtype that has
  // a quantiser (src/quant/block_codecs.hpp).
  virtual void dequantize_blocks(const Tensor& dst_f32,
                                 const Tensor& src_blocks) const;
  // `runtime_quantizer`: ggml's run-time quantiser instead of its file
  // one (CastOptions::runtime_quantizer).
  virtual void quantize_blocks(const Tensor& dst_blocks, const Tensor& src_f32,
                               bool runtime_quantizer) const;
  // Contiguous dst from `nbytes` host bytes (tensors made from values).
  virtual void write_host_bytes(const Tensor& dst, const void* bytes,
                                std::int64_t nbytes) const;
  // Random fills of contiguous dst from counter blocks starting at
  // `first_block` (Note [random streams]).
  virtual void fill_uniform(const Tensor& dst, const Generator& gen,
                            std::uint64_t first_block, double low,
                            double high) const;
  virtual void fill_normal(const Tensor& dst, const Generator& gen,
                           std::uint64_t first_block, double mean,
                           double std) const;
  virtual void fill_randint(const Tensor& dst, const Generator& gen,
                            std::uint64_t first_block, std::int64_t low,
                            std::int64_t high) const;
  virtual void fill_arange(const Tensor& dst, const Scalar& start,
                           const Scalar& step) const;
  virtual void fill_linspace(const Tensor& dst, double start, double end) const;

  // ---- element-wise: ops/elementwise.cpp ----
  // Inputs already cast to the kernel dtype and broadcast to out's shape.
  virtual void unary(UnaryOp op, const UnaryParams& params, const Tensor& out,
                     const Tensor& in) const;
  virtual void binary(BinaryOp op, const Tensor& out, const Tensor& a,
                      const Tensor& b) const;
  virtual void where(const Tensor& out, const Tensor& cond, const Tensor& a,
                     const Tensor& b) const;
  virtual void fma(const Tensor& out, const Tensor& a, const Tensor& b,
                   const Tensor& c) const;

  // ---- reductions: ops/reduce.cpp (contiguous (A, R, B) inputs) ----
  virtual void reduce(ReduceOp op, double correction, const Tensor& in,
                      const Tensor& out, const ReduceShape& shape) const;
  virtual void cumulative(bool product, bool exclusive, bool reverse,
                          const Tensor& in, const Tensor& out,
                          const ReduceShape& shape) const;
  virtual void softmax(SoftmaxKind kind, const Tensor& in, const Tensor& out,
                       const ReduceShape& shape) const;

  // ---- indexing: ops/indexing.cpp ----
  // Checks every index against [-extent, extent) (E2302 naming `op`) and
  // wraps negatives, in place on the contiguous i64 `index`.
  virtual void normalize_indices(const Tensor& index, std::int64_t extent,
                                 const char* op) const;
  // out (A, I, B) = src (A, N, B) at the normalised i64 `index` (I values).
  virtual void gather_blocks(const Tensor& src, const Tensor& index,
                             const Tensor& out, const ReduceShape& shape) const;
  // out (rows, dim) += src (count, dim) row by row at rows index[count]
  // (i64 in range); out and src contiguous, both f32 or both f64.
  virtual void scatter_add_rows(const Tensor& out, const Tensor& index,
                                const Tensor& src) const;
  virtual void gather_elements(const Tensor& x, const Tensor& index,
                               std::int64_t axis, const Tensor& out) const;
  virtual void scatter_elements(const Tensor& out, const Tensor& index,
                                const Tensor& updates, std::int64_t axis,
                                ScatterMode mode) const;
  // ONNX GatherND on contiguous x and i64 tuples of `depth` indices,
  // checked and wrapped here; out contiguous.
  virtual void gather_nd(const Tensor& x, const Tensor& index,
                         std::int64_t batch_dims, std::int64_t depth,
                         const Tensor& out) const;
  virtual void sort_runs(const Tensor& x, const Tensor& values,
                         const Tensor& indices, const ReduceShape& shape,
                         bool descending) const;
  // The row-major coordinates of the true elements of the contiguous bool
  // `mask` (rank >= 1) into out (count, rank) i64, count the number of them.
  virtual void mask_coordinates(const Tensor& mask, const Tensor& out) const;
  // out[i] = the insertion point of values[i] into the ascending 1-D
  // `sorted` (NaN last), before equal elements or after them when `right`;
  // sorted and values contiguous of one byte-addressable dtype, out i64
  // contiguous of values' shape.
  virtual void search_sorted(const Tensor& sorted, const Tensor& values,
                             bool right, const Tensor& out) const;

  // ---- products and convolution: ops/linalg.cpp, ops/conv.cpp ----
  // out[..., M, N] = a[..., M, K] @ b[..., K, N] (+ bias[N]) for operands
  // of one rank >= 2 (batch extents equal or 1), of out's dtype, except
  // 8-bit pairs with an i32 out. out may be any view.
  virtual void matmul(const Tensor& a, const Tensor& b, const Tensor* bias,
                      const Tensor& out) const;
  // out (M, N) = x (M, K) @ w^T (+ bias[N]) for a weight stored narrower
  // than the f32 it multiplies as: block-quantised (whole blocks along a
  // unit-stride last axis) or f16/bf16 (unit-stride rows). w is read as
  // stored, never widened whole; x, out and bias contiguous f32, except x
  // bf16 for bf16 w under MatmulPrecision::BF16 (f32 accumulation). M, N
  // and K are positive (linear takes empty products elsewhere).
  virtual void narrow_weight_linear(const Tensor& x, const Tensor& w,
                                    const Tensor* bias,
                                    const Tensor& out) const;
  // narrow_weight_linear for several block-quantised weights of one x
  // (out[i] = x @ w[i]^T + *bias[i], a null bias for none), with the same
  // results; a backend may share the work on x. By default, one call each.
  virtual void narrow_weight_linears(const Tensor& x, std::span<const Tensor> w,
                                     std::span<const Tensor* const> bias,
                                     std::span<const Tensor> out) const;
  // Runs `step`, the forward of one token through a model whose matrices
  // are of `weight_dtypes` (a decode step: short passes one after
  // another), as this backend runs such a step best. By default, a call.
  virtual void run_decode_step(std::span<const DType> weight_dtypes,
                               FunctionRef<void()> step) const;
  // y = conv(x, w) + bias on channels-first views of one float dtype
  // (transposed: w is (C, O/groups, K...)).
  virtual void convolution(const Tensor& x, const Tensor& w, const Tensor& bias,
                           const Tensor& y, const ConvGeometry& g,
                           bool transpose) const;
  virtual void max_pool(const Tensor& x, const Tensor& y, const Tensor& indices,
                        const PoolGeometry& g) const;
  virtual void avg_pool(const Tensor& x, const Tensor& y,
                        const PoolGeometry& g) const;
  virtual void avg_pool_backward(const Tensor& dy, const Tensor& dx,
                                 const PoolGeometry& g) const;

  // ---- matrix decompositions: ops/decompositions.cpp ----
  // Contiguous row-major batches of f32 or f64 matrices (MatrixBatch),
  // outputs of the same dtype; `status` (i64, one per matrix) receives 0
  // or the engine's failure code (a singular matrix, one that is not
  // positive definite, no convergence), which the op reports.
  virtual void slogdet(const MatrixBatch& b, const Tensor& a,
                       const Tensor& sign, const Tensor& logabsdet) const;
  virtual void solve(const MatrixBatch& b, const Tensor& a, const Tensor& rhs,
                     const Tensor& x, const Tensor& status) const;
  virtual void cholesky(const MatrixBatch& b, const Tensor& a, const Tensor& l,
                        const Tensor& status) const;
  virtual void qr(const MatrixBatch& b, const Tensor& a, const Tensor& q,
                  const Tensor& r, bool complete) const;
  // `vectors` undefined: the eigenvalues only.
  virtual void eigh(const MatrixBatch& b, const Tensor& a, const Tensor& values,
                    const Tensor& vectors, const Tensor& status) const;
  // `u` and `vh` undefined: the singular values only.
  virtual void svd(const MatrixBatch& b, const Tensor& a, const Tensor& u,
                   const Tensor& s, const Tensor& vh, bool full,
                   const Tensor& status) const;

  // ---- Fourier transforms: ops/fft.cpp ----
  // The unscaled DFT of every row (the last axis) of the contiguous c128
  // `in` into the contiguous c128 `out` of its shape: e^(-2 pi i jk/n)
  // forward, e^(+2 pi i jk/n) when `inverse`.
  virtual void fft_rows(const Tensor& in, const Tensor& out,
                        bool inverse) const;

  // In place on contiguous f32 param, exp_avg, exp_avg_sq of grad's shape.
  virtual void adam_update(const AdamStep& s, const Tensor& param,
                           const Tensor& grad, const Tensor& exp_avg,
                           const Tensor& exp_avg_sq) const;

  // ---- fused model ops: ops/norm.cpp, ops/embedding.cpp,
  //      ops/attention.cpp, ops/sparse.cpp ----
  virtual void normalize_rows(const NormRows& p, const Tensor& x,
                              const Tensor& y, const Tensor& weight,
                              const Tensor& bias, const Tensor& mean,
                              const Tensor& rstd) const;
  // The gradients of normalize_rows for trailing-axis layer and RMS norms
  // (p.segment 1, p.weight_period 1), everything contiguous f32 (or all
  // f64): dx from
  // dy and the saved mean (undefined for RMS) and rstd; dweight and dbias
  // ([n], may be undefined) summed over the rows.
  virtual void normalize_rows_backward(const NormRows& p, const Tensor& x,
                                       const Tensor& weight, const Tensor& mean,
                                       const Tensor& rstd, const Tensor& dy,
                                       const Tensor& dx, const Tensor& dweight,
                                       const Tensor& dbias) const;
  virtual void rope(const RopeProblem& p, const Tensor& x, const Tensor& y,
                    const Tensor& cos, const Tensor& sin) const;
  // y = the orthonormal Walsh-Hadamard transform of each run of `block`
  // consecutive values of x (a power of two dividing x.numel()); x and y
  // contiguous, both f32 or both f64.
  virtual void hadamard_runs(std::int64_t block, const Tensor& x,
                             const Tensor& y) const;
  // q, k, v (B, H, S, D) with unit inner stride: q f32, k and v both f32,
  // both f16, both bf16 or both of one block type (a KV cache kept in 16
  // bits or quantised; computed as their exact f32 values); mask (may be
  // undefined) f32 additive or bool, broadcast to (B, Hq, Sq, Skv) by strides;
  // out (B, Hq, Sq, Dv) contiguous f32.
  virtual void attention(const AttentionShape& s, const Tensor& q,
                         const Tensor& k, const Tensor& v, const Tensor& mask,
                         const Tensor& out) const;
  // The gradients of attention(s, q, k, v, mask) -> out from dout (B, Hq,
  // Sq, Dv): dq, dk, dv shaped as q, k, v; out, dout and the gradients
  // contiguous f32.
  virtual void attention_backward(const AttentionShape& s, const Tensor& q,
                                  const Tensor& k, const Tensor& v,
                                  const Tensor& mask, const Tensor& out,
                                  const Tensor& dout, const Tensor& dq,
                                  const Tensor& dk, const Tensor& dv) const;
  virtual void spmm_csr(const Tensor& crow, const Tensor& col,
                        const Tensor& values, const Tensor& dense,
                        const Tensor& out) const;

 protected:
  // E2501: "<op>: the <name> backend has no <op> kernel".
  [[noreturn]] void missing(const char* op) const;
};

// The backend of `device`; E2501 naming `op` when this build has none.
const Backend& backend_for(Device device, const char* op);

}  // namespace tessel

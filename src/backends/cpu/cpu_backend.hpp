// The CPU backend: oneDNN for GEMM and convolution, tessel's Highway
// kernels for the rest (Note [backend seam]). Each method turns its
// tensors into kernel views and picks the engine; the fallbacks between
// engines live in matmul.cpp and convolution.cpp.
#pragma once

#include "backends/backend.hpp"

namespace tessel {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  std::string describe() const override;

  void copy_cast(const Tensor& dst, const Tensor& src,
                 bool saturate) const override;
  void fill(const Tensor& dst, const Scalar& value) const override;
  void unpack_nibbles(const Tensor& dst_bytes,
                      const Tensor& src_packed) const override;
  void pack_nibbles(const Tensor& dst_packed,
                    const Tensor& src_bytes) const override;
  void dequantize_blocks(const Tensor& dst_f32,
                         const Tensor& src_blocks) const override;
  void quantize_blocks(const Tensor& dst_blocks, const Tensor& src_f32,
                       bool runtime) const override;
  void write_host_bytes(const Tensor& dst, const void* bytes,
                        std::int64_t nbytes) const override;
  void fill_uniform(const Tensor& dst, const Generator& gen,
                    std::uint64_t first_block, double low,
                    double high) const override;
  void fill_normal(const Tensor& dst, const Generator& gen,
                   std::uint64_t first_block, double mean,
                   double std) const override;
  void fill_randint(const Tensor& dst, const Generator& gen,
                    std::uint64_t first_block, std::int64_t low,
                    std::int64_t high) const override;
  void fill_arange(const Tensor& dst, const Scalar& start,
                   const Scalar& step) const override;
  void fill_linspace(const Tensor& dst, double start,
                     double end) const override;
  void unary(UnaryOp op, const UnaryParams& params, const Tensor& out,
             const Tensor& in) const override;
  void binary(BinaryOp op, const Tensor& out, const Tensor& a,
              const Tensor& b) const override;
  void where(const Tensor& out, const Tensor& cond, const Tensor& a,
             const Tensor& b) const override;
  void fma(const Tensor& out, const Tensor& a, const Tensor& b,
           const Tensor& c) const override;
  void reduce(ReduceOp op, double correction, const Tensor& in,
              const Tensor& out, const ReduceShape& shape) const override;
  void cumulative(bool product, bool exclusive, bool reverse, const Tensor& in,
                  const Tensor& out, const ReduceShape& shape) const override;
  void softmax(SoftmaxKind kind, const Tensor& in, const Tensor& out,
               const ReduceShape& shape) const override;
  void normalize_indices(const Tensor& index, std::int64_t extent,
                         const char* op) const override;
  void gather_blocks(const Tensor& src, const Tensor& index, const Tensor& out,
                     const ReduceShape& shape) const override;
  void gather_elements(const Tensor& x, const Tensor& index, std::int64_t axis,
                       const Tensor& out) const override;
  void scatter_elements(const Tensor& out, const Tensor& index,
                        const Tensor& updates, std::int64_t axis,
                        ScatterMode mode) const override;
  void gather_nd(const Tensor& x, const Tensor& index, std::int64_t batch_dims,
                 std::int64_t depth, const Tensor& out) const override;
  void sort_runs(const Tensor& x, const Tensor& values, const Tensor& indices,
                 const ReduceShape& shape, bool descending) const override;
  void fft_rows(const Tensor& in, const Tensor& out,
                bool inverse) const override;
  void slogdet(const MatrixBatch& b, const Tensor& a, const Tensor& sign,
               const Tensor& logabsdet) const override;
  void solve(const MatrixBatch& b, const Tensor& a, const Tensor& rhs,
             const Tensor& x, const Tensor& status) const override;
  void cholesky(const MatrixBatch& b, const Tensor& a, const Tensor& l,
                const Tensor& status) const override;
  void qr(const MatrixBatch& b, const Tensor& a, const Tensor& q,
          const Tensor& r, bool complete) const override;
  void eigh(const MatrixBatch& b, const Tensor& a, const Tensor& values,
            const Tensor& vectors, const Tensor& status) const override;
  void svd(const MatrixBatch& b, const Tensor& a, const Tensor& u,
           const Tensor& s, const Tensor& vh, bool full,
           const Tensor& status) const override;
  void mask_coordinates(const Tensor& mask, const Tensor& out) const override;
  void search_sorted(const Tensor& sorted, const Tensor& values, bool right,
                     const Tensor& out) const override;
  void matmul(const Tensor& a, const Tensor& b, const Tensor* bias,
              const Tensor& out) const override;
  void narrow_weight_linear(const Tensor& x, const Tensor& w,
                            const Tensor* bias,
                            const Tensor& out) const override;
  void narrow_weight_linears(const Tensor& x, std::span<const Tensor> w,
                             std::span<const Tensor* const> bias,
                             std::span<const Tensor> out) const override;
  void run_decode_step(std::span<const DType> weight_dtypes,
                       FunctionRef<void()> step) const override;
  void convolution(const Tensor& x, const Tensor& w, const Tensor& bias,
                   const Tensor& y, const ConvGeometry& g,
                   bool transpose) const override;
  void max_pool(const Tensor& x, const Tensor& y, const Tensor& indices,
                const PoolGeometry& g) const override;
  void avg_pool(const Tensor& x, const Tensor& y,
                const PoolGeometry& g) const override;
  void avg_pool_backward(const Tensor& dy, const Tensor& dx,
                         const PoolGeometry& g) const override;
  void normalize_rows(const NormRows& p, const Tensor& x, const Tensor& y,
                      const Tensor& weight, const Tensor& bias,
                      const Tensor& mean, const Tensor& rstd) const override;
  void normalize_rows_backward(const NormRows& p, const Tensor& x,
                               const Tensor& weight, const Tensor& mean,
                               const Tensor& rstd, const Tensor& dy,
                               const Tensor& dx, const Tensor& dweight,
                               const Tensor& dbias) const override;
  void adam_update(const AdamStep& s, const Tensor& param, const Tensor& grad,
                   const Tensor& exp_avg,
                   const Tensor& exp_avg_sq) const override;
  void scatter_add_rows(const Tensor& out, const Tensor& index,
                        const Tensor& src) const override;
  void hadamard_runs(std::int64_t block, const Tensor& x,
                     const Tensor& y) const override;
  void rope(const RopeProblem& p, const Tensor& x, const Tensor& y,
            const Tensor& cos, const Tensor& sin) const override;
  void attention(const AttentionShape& s, const Tensor& q, const Tensor& k,
                 const Tensor& v, const Tensor& mask,
                 const Tensor& out) const override;
  void attention_backward(const AttentionShape& s, const Tensor& q,
                          const Tensor& k, const Tensor& v, const Tensor& mask,
                          const Tensor& out, const Tensor& dout,
                          const Tensor& dq, const Tensor& dk,
                          const Tensor& dv) const override;
  void spmm_csr(const Tensor& crow, const Tensor& col, const Tensor& values,
                const Tensor& dense, const Tensor& out) const override;
};

}  // namespace tessel

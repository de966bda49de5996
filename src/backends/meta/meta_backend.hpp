// Note [meta backend]
// The backend of the `meta` device (PyTorch's meta tensors): tensors with
// shape, dtype and strides but no data. The op layer has already run every
// shape and dtype rule and "allocated" the outputs (a meta storage records
// its size and holds nothing) by the time a kernel would run, so every
// kernel here has nothing left to do. That is the whole backend: building a
// model of any size on meta gives every activation's shape, dtype and
// bytes without memory, and it proves the op layer never reaches past the
// seam to a particular backend.
#pragma once

#include "backends/backend.hpp"

namespace tessel {

class MetaBackend final : public Backend {
 public:
  const char* name() const override { return "meta"; }
  bool has_data() const override { return false; }

  void copy_cast(const Tensor&, const Tensor&, bool) const override {}
  void fill(const Tensor&, const Scalar&) const override {}
  void unpack_nibbles(const Tensor&, const Tensor&) const override {}
  void pack_nibbles(const Tensor&, const Tensor&) const override {}
  void dequantize_blocks(const Tensor&, const Tensor&) const override {}
  void quantize_blocks(const Tensor&, const Tensor&, bool) const override {}
  void write_host_bytes(const Tensor&, const void*,
                        std::int64_t) const override {}
  void fill_uniform(const Tensor&, const Generator&, std::uint64_t, double,
                    double) const override {}
  void fill_normal(const Tensor&, const Generator&, std::uint64_t, double,
                   double) const override {}
  void fill_randint(const Tensor&, const Generator&, std::uint64_t,
                    std::int64_t, std::int64_t) const override {}
  void fill_arange(const Tensor&, const Scalar&, const Scalar&) const override {
  }
  void fill_linspace(const Tensor&, double, double) const override {}
  void unary(UnaryOp, const UnaryParams&, const Tensor&,
             const Tensor&) const override {}
  void binary(BinaryOp, const Tensor&, const Tensor&,
              const Tensor&) const override {}
  void where(const Tensor&, const Tensor&, const Tensor&,
             const Tensor&) const override {}
  void fma(const Tensor&, const Tensor&, const Tensor&,
           const Tensor&) const override {}
  void reduce(ReduceOp, double, const Tensor&, const Tensor&,
              const ReduceShape&) const override {}
  void cumulative(bool, bool, bool, const Tensor&, const Tensor&,
                  const ReduceShape&) const override {}
  void softmax(SoftmaxKind, const Tensor&, const Tensor&,
               const ReduceShape&) const override {}
  void normalize_indices(const Tensor&, std::int64_t,
                         const char*) const override {}
  void gather_blocks(const Tensor&, const Tensor&, const Tensor&,
                     const ReduceShape&) const override {}
  void gather_elements(const Tensor&, const Tensor&, std::int64_t,
                       const Tensor&) const override {}
  void scatter_elements(const Tensor&, const Tensor&, const Tensor&,
                        std::int64_t, ScatterMode) const override {}
  void gather_nd(const Tensor&, const Tensor&, std::int64_t, std::int64_t,
                 const Tensor&) const override {}
  void sort_runs(const Tensor&, const Tensor&, const Tensor&,
                 const ReduceShape&, bool) const override {}
  // Not reached: nonzero refuses a device without data before calling it.
  void mask_coordinates(const Tensor&, const Tensor&) const override {}
  void search_sorted(const Tensor&, const Tensor&, bool,
                     const Tensor&) const override {}
  void matmul(const Tensor&, const Tensor&, const Tensor*,
              const Tensor&) const override {}
  void fft_rows(const Tensor&, const Tensor&, bool) const override {}
  void slogdet(const MatrixBatch&, const Tensor&, const Tensor&,
               const Tensor&) const override {}
  void solve(const MatrixBatch&, const Tensor&, const Tensor&, const Tensor&,
             const Tensor&) const override {}
  void cholesky(const MatrixBatch&, const Tensor&, const Tensor&,
                const Tensor&) const override {}
  void qr(const MatrixBatch&, const Tensor&, const Tensor&, const Tensor&,
          bool) const override {}
  void eigh(const MatrixBatch&, const Tensor&, const Tensor&, const Tensor&,
            const Tensor&) const override {}
  void svd(const MatrixBatch&, const Tensor&, const Tensor&, const Tensor&,
           const Tensor&, bool, const Tensor&) const override {}
  void narrow_weight_linear(const Tensor&, const Tensor&, const Tensor*,
                            const Tensor&) const override {}
  void convolution(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                   const ConvGeometry&, bool) const override {}
  void max_pool(const Tensor&, const Tensor&, const Tensor&,
                const PoolGeometry&) const override {}
  void avg_pool(const Tensor&, const Tensor&,
                const PoolGeometry&) const override {}
  void avg_pool_backward(const Tensor&, const Tensor&,
                         const PoolGeometry&) const override {}
  void normalize_rows(const NormRows&, const Tensor&, const Tensor&,
                      const Tensor&, const Tensor&, const Tensor&,
                      const Tensor&) const override {}
  void normalize_rows_backward(const NormRows&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&,
                               const Tensor&) const override {}
  void adam_update(const AdamStep&, const Tensor&, const Tensor&, const Tensor&,
                   const Tensor&) const override {}
  void scatter_add_rows(const Tensor&, const Tensor&,
                        const Tensor&) const override {}
  void rope(const RopeProblem&, const Tensor&, const Tensor&, const Tensor&,
            const Tensor&) const override {}
  void hadamard_runs(std::int64_t, const Tensor&,
                     const Tensor&) const override {}
  void attention(const AttentionShape&, const Tensor&, const Tensor&,
                 const Tensor&, const Tensor&, const Tensor&) const override {}
  void attention_backward(const AttentionShape&, const Tensor&, const Tensor&,
                          const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&) const override {}
  void spmm_csr(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                const Tensor&) const override {}
};

}  // namespace tessel

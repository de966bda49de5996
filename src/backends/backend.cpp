// The Backend defaults (each an E2501 naming the op and the backend) and the
// one map from a device to its backend.
#include "backends/backend.hpp"

#include "backends/cpu/cpu_backend.hpp"
#include "backends/meta/meta_backend.hpp"
#include "core/check.hpp"

namespace tessel {

void Backend::missing(const char* op) const {
  detail::fail(ErrorCode::DeviceMismatch, op, "the {} backend has no {} kernel",
               name(), op);
}

void Backend::copy_cast(const Tensor&, const Tensor&, bool) const {
  missing("copy_cast");
}
void Backend::fill(const Tensor&, const Scalar&) const { missing("fill"); }
void Backend::unpack_nibbles(const Tensor&, const Tensor&) const {
  missing("unpack_nibbles");
}
void Backend::pack_nibbles(const Tensor&, const Tensor&) const {
  missing("pack_nibbles");
}
void Backend::dequantize_blocks(const Tensor&, const Tensor&) const {
  missing("dequantize_blocks");
}
void Backend::quantize_blocks(const Tensor&, const Tensor&, bool) const {
  missing("quantize_blocks");
}
void Backend::write_host_bytes(const Tensor&, const void*, std::int64_t) const {
  missing("write_host_bytes");
}
void Backend::fill_uniform(const Tensor&, const Generator&, std::uint64_t,
                           double, double) const {
  missing("fill_uniform");
}
void Backend::fill_normal(const Tensor&, const Generator&, std::uint64_t,
                          double, double) const {
  missing("fill_normal");
}
void Backend::fill_randint(const Tensor&, const Generator&, std::uint64_t,
                           std::int64_t, std::int64_t) const {
  missing("fill_randint");
}
void Backend::fill_arange(const Tensor&, const Scalar&, const Scalar&) const {
  missing("fill_arange");
}
void Backend::fill_linspace(const Tensor&, double, double) const {
  missing("fill_linspace");
}
void Backend::unary(UnaryOp, const UnaryParams&, const Tensor&,
                    const Tensor&) const {
  missing("unary");
}
void Backend::binary(BinaryOp, const Tensor&, const Tensor&,
                     const Tensor&) const {
  missing("binary");
}
void Backend::where(const Tensor&, const Tensor&, const Tensor&,
                    const Tensor&) const {
  missing("where");
}
void Backend::fma(const Tensor&, const Tensor&, const Tensor&,
                  const Tensor&) const {
  missing("fma");
}
void Backend::reduce(ReduceOp, double, const Tensor&, const Tensor&,
                     const ReduceShape&) const {
  missing("reduce");
}
void Backend::cumulative(bool, bool, bool, const Tensor&, const Tensor&,
                         const ReduceShape&) const {
  missing("cumulative");
}
void Backend::softmax(SoftmaxKind, const Tensor&, const Tensor&,
                      const ReduceShape&) const {
  missing("softmax");
}
void Backend::normalize_indices(const Tensor&, std::int64_t,
                                const char*) const {
  missing("normalize_indices");
}
void Backend::gather_blocks(const Tensor&, const Tensor&, const Tensor&,
                            const ReduceShape&) const {
  missing("gather_blocks");
}
void Backend::gather_elements(const Tensor&, const Tensor&, std::int64_t,
                              const Tensor&) const {
  missing("gather_elements");
}
void Backend::scatter_elements(const Tensor&, const Tensor&, const Tensor&,
                               std::int64_t, ScatterMode) const {
  missing("scatter_elements");
}
void Backend::gather_nd(const Tensor&, const Tensor&, std::int64_t,
                        std::int64_t, const Tensor&) const {
  missing("gather_nd");
}
void Backend::sort_runs(const Tensor&, const Tensor&, const Tensor&,
                        const ReduceShape&, bool) const {
  missing("sort_runs");
}
void Backend::slogdet(const MatrixBatch&, const Tensor&, const Tensor&,
                      const Tensor&) const {
  missing("slogdet");
}
void Backend::solve(const MatrixBatch&, const Tensor&, const Tensor&,
                    const Tensor&, const Tensor&) const {
  missing("solve");
}
void Backend::cholesky(const MatrixBatch&, const Tensor&, const Tensor&,
                       const Tensor&) const {
  missing("cholesky");
}
void Backend::qr(const MatrixBatch&, const Tensor&, const Tensor&,
                 const Tensor&, bool) const {
  missing("qr");
}
void Backend::eigh(const MatrixBatch&, const Tensor&, const Tensor&,
                   const Tensor&, const Tensor&) const {
  missing("eigh");
}
void Backend::svd(const MatrixBatch&, const Tensor&, const Tensor&,
                  const Tensor&, const Tensor&, bool, const Tensor&) const {
  missing("svd");
}
void Backend::fft_rows(const Tensor&, const Tensor&, bool) const {
  missing("fft_rows");
}
void Backend::mask_coordinates(const Tensor&, const Tensor&) const {
  missing("mask_coordinates");
}
void Backend::search_sorted(const Tensor&, const Tensor&, bool,
                            const Tensor&) const {
  missing("search_sorted");
}
void Backend::matmul(const Tensor&, const Tensor&, const Tensor*,
                     const Tensor&) const {
  missing("matmul");
}
void Backend::narrow_weight_linear(const Tensor&, const Tensor&, const Tensor*,
                                   const Tensor&) const {
  missing("narrow_weight_linear");
}
void Backend::narrow_weight_linears(const Tensor& x, std::span<const Tensor> w,
                                    std::span<const Tensor* const> bias,
                                    std::span<const Tensor> out) const {
  for (std::size_t i = 0; i < w.size(); ++i) {
    narrow_weight_linear(x, w[i], bias[i], out[i]);
  }
}
void Backend::run_decode_step(std::span<const DType>,
                              FunctionRef<void()> step) const {
  step();
}
void Backend::convolution(const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&, const ConvGeometry&, bool) const {
  missing("convolution");
}
void Backend::max_pool(const Tensor&, const Tensor&, const Tensor&,
                       const PoolGeometry&) const {
  missing("max_pool");
}
void Backend::avg_pool(const Tensor&, const Tensor&,
                       const PoolGeometry&) const {
  missing("avg_pool");
}
void Backend::avg_pool_backward(const Tensor&, const Tensor&,
                                const PoolGeometry&) const {
  missing("avg_pool_backward");
}
void Backend::normalize_rows(const NormRows&, const Tensor&, const Tensor&,
                             const Tensor&, const Tensor&, const Tensor&,
                             const Tensor&) const {
  missing("normalize_rows");
}
void Backend::normalize_rows_backward(const NormRows&, const Tensor&,
                                      const Tensor&, const Tensor&,
                                      const Tensor&, const Tensor&,
                                      const Tensor&, const Tensor&,
                                      const Tensor&) const {
  missing("normalize_rows_backward");
}
void Backend::adam_update(const AdamStep&, const Tensor&, const Tensor&,
                          const Tensor&, const Tensor&) const {
  missing("adam_update");
}
void Backend::scatter_add_rows(const Tensor&, const Tensor&,
                               const Tensor&) const {
  missing("scatter_add_rows");
}
void Backend::rope(const RopeProblem&, const Tensor&, const Tensor&,
                   const Tensor&, const Tensor&) const {
  missing("rope");
}
void Backend::hadamard_runs(std::int64_t, const Tensor&, const Tensor&) const {
  missing("hadamard_runs");
}
void Backend::attention(const AttentionShape&, const Tensor&, const Tensor&,
                        const Tensor&, const Tensor&, const Tensor&) const {
  missing("attention");
}
void Backend::attention_backward(const AttentionShape&, const Tensor&,
                                 const Tensor&, const Tensor&, const Tensor&,
                                 const Tensor&, const Tensor&, const Tensor&,
                                 const Tensor&, const Tensor&) const {
  missing("attention_backward");
}
void Backend::spmm_csr(const Tensor&, const Tensor&, const Tensor&,
                       const Tensor&, const Tensor&) const {
  missing("spmm_csr");
}

std::size_t device_alignment(Device device) {
  return backend_for(device, "device_alignment").alignment();
}

const Backend& backend_for(Device device, const char* op) {
  static const CpuBackend cpu;
  static const MetaBackend meta;
  switch (device.type) {
    case DeviceType::CPU: return cpu;
    case DeviceType::Meta: return meta;
    case DeviceType::CUDA: break;
  }
  detail::fail(ErrorCode::DeviceMismatch, op,
               "no {} kernel for tensors on {} in this build", op,
               device.str());
}

}  // namespace tessel

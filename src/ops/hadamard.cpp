// The orthonormal Walsh-Hadamard transform over runs of the last axis:
// dtypes and the block here; the butterflies are the backend's
// (hadamard_runs). A quantised KV cache rotates its keys and values by it
// (models/decoder.cpp), as llama.cpp does with the matrix.
#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/factories.hpp"
#include "tessel/ops/linalg.hpp"

namespace tessel {

Tensor hadamard_transform(const Tensor& x, std::int64_t block) {
  constexpr const char* op = "hadamard_transform";
  const ops::CheckedOperands checked(op, x, "x");
  const DType dtype = x.dtype();
  TESSEL_CHECK(is_floating_point(dtype), BadDType, op,
               "x must be real floating point, got {}", dtype_name(dtype));
  const std::int64_t n = rules::hadamard_block(x.shape(), block, op);
  // f64 in f64; the narrower floats in f32, rounded once at the end.
  const DType compute = dtype == DType::F64 ? DType::F64 : DType::F32;
  const Tensor xc = x.to(compute).contiguous();
  Tensor y = empty(x.shape(), compute, x.device());
  if (y.numel() > 0) ops::backend_of(y).hadamard_runs(n, xc, y);
  return compute == dtype ? y : y.to(dtype);
}

}  // namespace tessel

// Whole-tensor comparisons built from the element-wise ops and `all`.
#include "tessel/ops/elementwise.hpp"
#include "tessel/ops/reduce.hpp"

namespace tessel {

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol,
              bool equal_nan) {
  // Compared in f64, or c128 when either side is complex (NumPy's isclose
  // on complex numbers: |a - b| is the modulus).
  const DType wide =
      is_complex(a.dtype()) || is_complex(b.dtype()) ? DType::C128 : DType::F64;
  const Tensor a64 = a.to(wide), b64 = b.to(wide);
  Tensor close = le(abs(sub(a64, b64)), add(mul(abs(b64), rtol), atol));
  // Equal infinities differ by NaN above; count them as close.
  close = logical_or(close, eq(a64, b64));
  if (equal_nan) close = logical_or(close, logical_and(isnan(a64), isnan(b64)));
  return all(close).item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  return all(eq(a, b)).item<bool>();
}

}  // namespace tessel

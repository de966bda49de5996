// How `linear` multiplies f32 activations by bf16 weights (docs/models.md,
// "bf16 activations"). A process-wide setting, as PyTorch's
// torch.set_float32_matmul_precision is.
//  - F32 (the default): the weights widen exactly and the products are of
//    the f32 activations (DESIGN §1 rule 4).
//  - BF16: the activations are rounded to bf16 first (round to nearest
//    even), then multiplied with f32 accumulation. That is llama.cpp's
//    arithmetic for bf16 files and a bf16 PyTorch model's, and on CPUs
//    with bf16 dot products (AVX512-BF16, AMX) it runs at about twice the
//    f32 rate, so prompts of bf16 checkpoints process about twice as fast.
//    Denormal activations may be flushed to zero (vdpbf16ps does).
// Weights of other dtypes (f32, f16, block-quantised) are not affected,
// nor are gradients.
#pragma once

#include <string_view>

namespace tessel {

enum class MatmulPrecision { F32, BF16 };

void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();

// "f32" or "bf16"; parse_matmul_precision throws E2201 for anything else.
std::string_view matmul_precision_name(MatmulPrecision precision);
MatmulPrecision parse_matmul_precision(std::string_view name);

// Scoped switch, e.g. for one model's forward passes.
class MatmulPrecisionGuard {
 public:
  explicit MatmulPrecisionGuard(MatmulPrecision precision)
      : previous_(matmul_precision()) {
    set_matmul_precision(precision);
  }
  ~MatmulPrecisionGuard() { set_matmul_precision(previous_); }
  MatmulPrecisionGuard(const MatmulPrecisionGuard&) = delete;
  MatmulPrecisionGuard& operator=(const MatmulPrecisionGuard&) = delete;

 private:
  MatmulPrecision previous_;
};

}  // namespace tessel

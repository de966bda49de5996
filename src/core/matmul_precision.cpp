#include "tessel/core/matmul_precision.hpp"

#include <atomic>

#include "core/check.hpp"

namespace tessel {

namespace {

std::atomic<MatmulPrecision>& setting() {
  static std::atomic<MatmulPrecision> precision{MatmulPrecision::F32};
  return precision;
}

}  // namespace

void set_matmul_precision(MatmulPrecision precision) { setting() = precision; }
MatmulPrecision matmul_precision() { return setting(); }

std::string_view matmul_precision_name(MatmulPrecision precision) {
  return precision == MatmulPrecision::BF16 ? "bf16" : "f32";
}

MatmulPrecision parse_matmul_precision(std::string_view name) {
  if (name == "f32") return MatmulPrecision::F32;
  TESSEL_CHECK(name == "bf16", BadDType, "matmul_precision",
               "unknown precision '{}' (f32 or bf16)", name);
  return MatmulPrecision::BF16;
}

}  // namespace tessel

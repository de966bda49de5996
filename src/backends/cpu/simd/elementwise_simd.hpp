// Highway kernels for contiguous runs of f32, bf16 and f16 data (computed in
// f32 and rounded once on store). Runtime dispatch picks the best target.
#pragma once

#include <cstdint>

#include "tessel/ops/op_list.hpp"

namespace tessel::cpu::simd {

enum class FloatStorage : int { F32 = 0, BF16 = 1, F16 = 2 };

// Whether the table (op_list.hpp) promises a Highway body for contiguous
// f32/bf16/f16 data; elementwise_simd.cpp does not compile without one.
constexpr bool has_unary(UnaryOp op) {
  return op_info(op).kernel == KernelKind::Simd;
}
void unary(UnaryOp op, const UnaryParams& params, FloatStorage storage,
           const void* in, void* out, std::int64_t n);

constexpr bool has_binary(BinaryOp op) {
  return op_info(op).kernel == KernelKind::Simd;
}
// A "scalar" operand is one element repeated over the run (stride 0).
void binary(BinaryOp op, FloatStorage storage, const void* a, bool a_scalar,
            const void* b, bool b_scalar, void* out, std::int64_t n);

}  // namespace tessel::cpu::simd

// Highway kernels for the casts that model conversion lives on: f32 to
// bf16 and to f16 (round to nearest even) and f16 to f32, contiguous,
// bit-identical to the scalar conversions of core/float_formats.hpp (and
// so to NumPy and ml_dtypes).
#pragma once

#include <cstdint>

namespace tessel::cpu::simd {

void cast_f32_to_bf16(const float* in, std::uint16_t* out, std::int64_t n);
// False when this CPU has no exact vector f32 -> f16 conversion (F16C);
// the caller then runs the scalar loop.
bool cast_f32_to_f16(const float* in, std::uint16_t* out, std::int64_t n);
// Exact, NaN payloads kept; integer arithmetic, so every target has it.
void cast_f16_to_f32(const std::uint16_t* in, float* out, std::int64_t n);

// f16 or bf16 weights widened for an f32 product: numbers exactly, by the
// CPU's conversion (F16C), which may quiet a signalling NaN. The product
// is NaN either way; casts, which keep every bit, use the functions above.
// The integer form of cast_f16_to_f32 took 13 % of a 512 x 1000 x 1000
// product of widened f16 weights, F16C 2.6 % (Zen 4).
void widen_f16_operand(const std::uint16_t* in, float* out, std::int64_t n);
void widen_bf16_operand(const std::uint16_t* in, float* out, std::int64_t n);

}  // namespace tessel::cpu::simd

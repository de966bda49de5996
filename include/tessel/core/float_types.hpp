// Storage types for the narrow floats: a bit pattern plus explicit
// conversions through f32. Arithmetic on them happens in f32 (DESIGN §1).
#pragma once

#include <cstdint>

#include "tessel/core/float_formats.hpp"

namespace tessel {

struct Half {
  std::uint16_t bits = 0;
  Half() = default;
  explicit Half(float value) : bits(fp::f16_from_f32(value)) {}
  explicit Half(double value) : bits(fp::f16_from_f64(value)) {}
  static constexpr Half from_bits(std::uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return fp::f16_to_f32(bits); }
  explicit operator double() const { return fp::f16_to_f64(bits); }
};

struct BFloat16 {
  std::uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) : bits(fp::bf16_from_f32(value)) {}
  explicit BFloat16(double value) : bits(fp::bf16_from_f64(value)) {}
  static constexpr BFloat16 from_bits(std::uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return fp::bf16_to_f32(bits); }
  explicit operator double() const { return fp::bf16_to_f32(bits); }
};

template <const fp::Format& F>
struct Float8 {
  std::uint8_t bits = 0;
  Float8() = default;
  explicit Float8(double value) : bits(fp::f8_from_f64<F>(value)) {}
  explicit Float8(float value) : bits(fp::f8_from_f32<F>(value)) {}
  static constexpr Float8 from_bits(std::uint8_t b) {
    Float8 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return fp::decode_to_f32<F>(bits); }
  explicit operator double() const { return fp::decode_to_f32<F>(bits); }
};

using Float8E4M3FN = Float8<fp::kF8E4M3FN>;
using Float8E5M2 = Float8<fp::kF8E5M2>;

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);
static_assert(sizeof(Float8E4M3FN) == 1 && sizeof(Float8E5M2) == 1);

}  // namespace tessel

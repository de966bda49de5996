// Bit-exact conversions between f32/f64/integers and the narrow floats
// (f16, bf16, f8_e4m3fn, f8_e5m2). Rounding is IEEE round-to-nearest-even
// from the exact source value; NaN, Inf and overflow follow NumPy (f16) and
// ml_dtypes (bf16, f8) bit for bit. See docs/dtypes.md.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace tessel::fp {

// A binary floating-point format narrower than f32.
struct Format {
  int exponent_bits;
  int mantissa_bits;
  // IEEE formats reserve the all-ones exponent for Inf/NaN. "fn" formats
  // (e4m3fn) have no Inf and only the all-ones pattern is NaN.
  bool ieee_specials;
  std::uint32_t nan_bits;  // canonical quiet NaN without the sign

  constexpr int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  constexpr int total_bits() const { return 1 + exponent_bits + mantissa_bits; }
  constexpr std::uint32_t sign_bit() const {
    return 1u << (exponent_bits + mantissa_bits);
  }
  constexpr std::uint32_t inf_bits() const {
    return ((1u << exponent_bits) - 1) << mantissa_bits;
  }
  constexpr std::uint32_t max_finite_bits() const {
    return ieee_specials ? inf_bits() - 1 : sign_bit() - 2;
  }
};

inline constexpr Format kF16{5, 10, true, 0x7e00};
inline constexpr Format kBF16{8, 7, true, 0x7fc0};
inline constexpr Format kF8E4M3FN{4, 3, false, 0x7f};
inline constexpr Format kF8E5M2{5, 2, true, 0x7e};

// Encodes the finite or infinite, non-NaN magnitude `a` (>= 0) of sign
// `sign` with round-to-nearest-even. Overflow gives Inf, or NaN for formats
// without Inf, or the largest finite value when `saturate` is set.
template <const Format& F>
inline std::uint32_t encode_magnitude(double a, bool sign, bool saturate) {
  const std::uint32_t s = sign ? F.sign_bit() : 0u;
  const std::uint32_t overflow =
      saturate ? F.max_finite_bits()
               : (F.ieee_specials ? F.inf_bits() : F.nan_bits);
  if (a == 0.0) return s;
  if (std::isinf(a)) return s | overflow;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
  const int exponent = e - 1;
  const int emin = 1 - F.bias();
  const int emax = (1 << F.exponent_bits) - 1 - F.bias();
  if (exponent > emax) return s | overflow;
  // Scale so that one unit in the last place of the target is 1.0; q is
  // exact in double because a carries at most 53 significant bits.
  const int quantum_exp = (exponent < emin ? emin : exponent) - F.mantissa_bits;
  const double q = std::ldexp(a, -quantum_exp);
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  auto units = static_cast<std::uint64_t>(r);
  std::uint64_t bits = 0;
  if (exponent < emin) {
    // Subnormal: the unit count is the bit pattern, and a carry into
    // 2^mantissa_bits lands exactly on the smallest normal.
    bits = units;
  } else {
    std::uint64_t biased = static_cast<std::uint64_t>(exponent + F.bias());
    if (units == (std::uint64_t{1} << (F.mantissa_bits + 1))) {
      units >>= 1;
      ++biased;
    }
    bits = (biased << F.mantissa_bits) |
           (units & ((std::uint64_t{1} << F.mantissa_bits) - 1));
  }
  if (bits > F.max_finite_bits()) return s | overflow;
  return s | static_cast<std::uint32_t>(bits);
}

// Decodes any bit pattern of F into f32 (exact: every narrow value fits).
template <const Format& F>
inline float decode_to_f32(std::uint32_t bits) {
  const bool sign = (bits & F.sign_bit()) != 0;
  const std::uint32_t mag = bits & (F.sign_bit() - 1);
  const std::uint32_t sign32 = sign ? 0x80000000u : 0u;
  const int man_bits = F.mantissa_bits;
  const std::uint32_t exp_field = mag >> man_bits;
  const std::uint32_t man = mag & ((1u << man_bits) - 1);
  const std::uint32_t exp_all_ones = (1u << F.exponent_bits) - 1;
  if (F.ieee_specials && exp_field == exp_all_ones) {
    if (man == 0) return std::bit_cast<float>(sign32 | 0x7f800000u);
    return std::bit_cast<float>(sign32 | 0x7fc00000u);
  }
  if (!F.ieee_specials && mag == F.nan_bits) {
    return std::bit_cast<float>(sign32 | 0x7fc00000u);
  }
  float value = 0.0f;
  if (exp_field == 0) {
    value = std::ldexp(static_cast<float>(man), 1 - F.bias() - man_bits);
  } else {
    value = std::ldexp(static_cast<float>(man | (1u << man_bits)),
                       static_cast<int>(exp_field) - F.bias() - man_bits);
  }
  return sign ? -value : value;
}

// ---- f16: NumPy's half conversions (payload-preserving NaNs) ----------------

// NumPy's npy_floatbits_to_halfbits, bit for bit: pure integer arithmetic.
constexpr std::uint16_t f16_from_f32(float f, bool saturate = false) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t exp = bits & 0x7f800000u;
  std::uint32_t sig = bits & 0x007fffffu;
  if (exp >= 0x47800000u) {  // Inf, NaN, or too large for f16
    if (exp == 0x7f800000u && sig != 0) {
      auto h = static_cast<std::uint16_t>(0x7c00u + (sig >> 13));
      if (h == 0x7c00u) ++h;  // keep it a NaN
      return static_cast<std::uint16_t>(sign | h);
    }
    return static_cast<std::uint16_t>(sign | (saturate ? 0x7bffu : 0x7c00u));
  }
  if (exp <= 0x38000000u) {              // f16 subnormal or zero
    if (exp < 0x33000000u) return sign;  // below half the smallest subnormal
    const std::uint32_t e = exp >> 23;
    sig = (0x00800000u + sig) >> (113 - e);
    // Round to nearest even; the shift may have dropped up to 11 sticky bits.
    if ((sig & 0x3fffu) != 0x1000u || (bits & 0x7ffu) != 0) sig += 0x1000u;
    return static_cast<std::uint16_t>(sign | (sig >> 13));
  }
  const std::uint32_t h_exp = (exp - 0x38000000u) >> 13;
  if ((sig & 0x3fffu) != 0x1000u) sig += 0x1000u;
  // A mantissa carry bumps the exponent, up to Inf, as IEEE rounding does.
  std::uint32_t h = h_exp + (sig >> 13);
  if (saturate && h >= 0x7c00u) h = 0x7bffu;
  return static_cast<std::uint16_t>(sign | h);
}

inline std::uint16_t f16_from_f64(double d, bool saturate = false) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(d);
  const bool sign = (bits >> 63) != 0;
  if (std::isnan(d)) {
    auto h = static_cast<std::uint16_t>(0x7c00u +
                                        ((bits & 0x000fffffffffffffull) >> 42));
    if (h == 0x7c00u) ++h;
    return static_cast<std::uint16_t>(h | (sign ? 0x8000u : 0u));
  }
  return static_cast<std::uint16_t>(
      encode_magnitude<kF16>(std::fabs(d), sign, saturate));
}

// Exact and branch-light: the f16 bits shifted into an f32 are the value
// times 2^-112 (subnormals included), and Inf/NaN keep their payload (NumPy).
inline float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t mag = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  const std::uint32_t bits =
      (h & 0x7c00u) == 0x7c00u
          ? mag | 0x7f800000u
          : std::bit_cast<std::uint32_t>(std::bit_cast<float>(mag) * 0x1p112f);
  return std::bit_cast<float>(sign | bits);
}

inline double f16_to_f64(std::uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0) {
    return std::bit_cast<double>(
        (static_cast<std::uint64_t>(h & 0x8000u) << 48) |
        0x7ff0000000000000ull |
        (static_cast<std::uint64_t>(h & 0x03ffu) << 42));
  }
  return static_cast<double>(decode_to_f32<kF16>(h));
}

// ---- bf16: ml_dtypes (canonical quiet NaN, RNE) -----------------------------

constexpr std::uint16_t bf16_from_f32(float f, bool saturate = false) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>(((bits >> 16) & 0x8000u) | 0x7fc0u);
  }
  if (saturate && (bits & 0x7fffffffu) >= 0x7f7f8000u) {
    return static_cast<std::uint16_t>(((bits >> 16) & 0x8000u) | 0x7f7fu);
  }
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even;
  // a carry out of the mantissa correctly bumps the exponent (to Inf at top).
  const std::uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

inline std::uint16_t bf16_from_f64(double d, bool saturate = false) {
  if (std::isnan(d))
    return static_cast<std::uint16_t>((std::signbit(d) ? 0x8000u : 0u) |
                                      0x7fc0u);
  return static_cast<std::uint16_t>(
      encode_magnitude<kBF16>(std::fabs(d), std::signbit(d), saturate));
}

constexpr float bf16_to_f32(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// ---- f8 (ml_dtypes): canonical NaNs; non-saturating unless asked ------------

template <const Format& F>
inline std::uint8_t f8_from_f64(double d, bool saturate = false) {
  const std::uint32_t sign = std::signbit(d) ? F.sign_bit() : 0u;
  if (std::isnan(d)) return static_cast<std::uint8_t>(sign | F.nan_bits);
  return static_cast<std::uint8_t>(
      encode_magnitude<F>(std::fabs(d), std::signbit(d), saturate));
}

// The same rounding from f32 in integer arithmetic (the fast path of casts).
// F must have fewer mantissa bits than f32 and a smaller exponent range.
template <const Format& F>
constexpr std::uint8_t f8_from_f32(float f, bool saturate = false) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 31) != 0 ? F.sign_bit() : 0u;
  const std::uint32_t a = bits & 0x7fffffffu;
  const std::uint32_t overflow =
      saturate ? F.max_finite_bits()
               : (F.ieee_specials ? F.inf_bits() : F.nan_bits);
  if (a > 0x7f800000u) return static_cast<std::uint8_t>(sign | F.nan_bits);
  if (a == 0x7f800000u) return static_cast<std::uint8_t>(sign | overflow);
  if (a < 0x00800000u) return static_cast<std::uint8_t>(sign);  // f32 subnormal
  const int exponent = static_cast<int>(a >> 23) - 127;
  const int emin = 1 - F.bias();
  const int emax = (1 << F.exponent_bits) - 1 - F.bias();
  if (exponent > emax) return static_cast<std::uint8_t>(sign | overflow);
  const std::uint32_t significand = (a & 0x007fffffu) | 0x00800000u;
  // Bits of the 24-bit significand that fall below the target's last place.
  const int shift =
      23 - F.mantissa_bits + (exponent < emin ? emin - exponent : 0);
  if (shift > 25) return static_cast<std::uint8_t>(sign);  // below half a unit
  const std::uint32_t half = 1u << (shift - 1);
  const std::uint32_t rest = significand & ((half << 1) - 1);
  std::uint32_t units = significand >> shift;
  if (rest > half || (rest == half && (units & 1u) != 0)) ++units;
  // Normal results add the exponent; a carry out of the mantissa lands on
  // the next exponent, and subnormals carry into the smallest normal.
  const std::uint32_t out =
      exponent < emin ? units
                      : (static_cast<std::uint32_t>(exponent + F.bias())
                         << F.mantissa_bits) +
                            units - (1u << F.mantissa_bits);
  if (out > F.max_finite_bits())
    return static_cast<std::uint8_t>(sign | overflow);
  return static_cast<std::uint8_t>(sign | out);
}

// ---- integers: one rounding from the exact integer value --------------------

// The double nearest `v` rounded to odd at 53 bits, so that a second rounding
// to any format of at most 51 mantissa bits is correctly rounded.
inline double u64_to_f64_round_to_odd(std::uint64_t v) {
  if (v < (std::uint64_t{1} << 53)) return static_cast<double>(v);
  const int shift = 64 - std::countl_zero(v) - 53;
  std::uint64_t kept = v >> shift;
  if ((v & ((std::uint64_t{1} << shift) - 1)) != 0) kept |= 1;
  return std::ldexp(static_cast<double>(kept), shift);
}

inline double i64_to_f64_round_to_odd(std::int64_t v) {
  const std::uint64_t mag = v < 0 ? ~static_cast<std::uint64_t>(v) + 1
                                  : static_cast<std::uint64_t>(v);
  const double d = u64_to_f64_round_to_odd(mag);
  return v < 0 ? -d : d;
}

}  // namespace tessel::fp

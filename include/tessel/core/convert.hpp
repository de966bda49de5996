// The one definition of how a value of one element type becomes another
// (docs/dtypes.md). Every kernel, item<T>() and Scalar use it.
#pragma once

#include <cmath>
#include <complex>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessel/core/float_types.hpp"

namespace tessel {

template <class T>
inline constexpr bool is_narrow_float_v =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
    std::is_same_v<T, Float8E4M3FN> || std::is_same_v<T, Float8E5M2>;

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> ||
                                     std::is_same_v<T, std::complex<double>>;

template <class T>
inline constexpr bool is_element_type_v =
    std::is_arithmetic_v<T> || is_narrow_float_v<T> || is_complex_v<T>;

namespace detail {

// Float to integer as NumPy does on x86-64, but defined on every platform:
// truncate toward zero, then convert like the hardware instruction NumPy's
// loops compile to. Signed conversions give the "integer indefinite" minimum
// for NaN and out-of-range values; u8/u16/i8/i16 go through int32 and wrap;
// u32/u64 subtract 2^31/2^63 from large values and flip the top bit back.
template <class Signed>
Signed truncate_to_signed(double t) {
  constexpr double limit =
      static_cast<double>(std::uint64_t{1} << (8 * sizeof(Signed) - 1));
  if (!std::isnan(t) && t >= -limit && t < limit) return static_cast<Signed>(t);
  return std::numeric_limits<Signed>::min();
}

template <class To>
To float_to_int(double x) {
  const double t = std::trunc(x);
  if constexpr (sizeof(To) <= 2 || std::is_same_v<To, std::int32_t>) {
    return static_cast<To>(truncate_to_signed<std::int32_t>(t));
  } else if constexpr (std::is_same_v<To, std::int64_t>) {
    return truncate_to_signed<std::int64_t>(t);
  } else {
    using Signed = std::make_signed_t<To>;
    constexpr To top = To{1} << (8 * sizeof(To) - 1);
    if (t >= static_cast<double>(top)) {
      return static_cast<To>(
                 truncate_to_signed<Signed>(t - static_cast<double>(top))) ^
             top;
    }
    return static_cast<To>(truncate_to_signed<Signed>(t));
  }
}

// ml_dtypes' float8 -> integer: NaN is 0 and +-Inf saturate to the target's
// range; finite values convert like f32.
template <class To>
To float8_to_int(float x) {
  if (std::isnan(x)) return To{0};
  if (std::isinf(x)) {
    return x > 0 ? std::numeric_limits<To>::max()
                 : std::numeric_limits<To>::min();
  }
  return float_to_int<To>(x);
}

template <class To>
To narrow_from_f64(double d, bool saturate) {
  if constexpr (std::is_same_v<To, Half>) {
    return Half::from_bits(fp::f16_from_f64(d, saturate));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16::from_bits(fp::bf16_from_f64(d, saturate));
  } else if constexpr (std::is_same_v<To, Float8E4M3FN>) {
    return To::from_bits(fp::f8_from_f64<fp::kF8E4M3FN>(d, saturate));
  } else {
    return To::from_bits(fp::f8_from_f64<fp::kF8E5M2>(d, saturate));
  }
}

template <class To>
To narrow_from_f32(float f, bool saturate) {
  if constexpr (std::is_same_v<To, Half>) {
    return Half::from_bits(fp::f16_from_f32(f, saturate));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16::from_bits(fp::bf16_from_f32(f, saturate));
  } else if constexpr (std::is_same_v<To, Float8E4M3FN>) {
    return To::from_bits(fp::f8_from_f32<fp::kF8E4M3FN>(f, saturate));
  } else {
    return To::from_bits(fp::f8_from_f32<fp::kF8E5M2>(f, saturate));
  }
}

}  // namespace detail

// Converts one value. `saturate` clamps overflow to the largest finite value
// instead of Inf/NaN when the target is a narrow float (ONNX Cast's flag).
template <class To, class From>
To convert(From v, bool saturate = false) {
  static_assert(is_element_type_v<To> && is_element_type_v<From>);
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_complex_v<To>) {
    // Each component converts as its real type; a real value gets +0i.
    using Part = typename To::value_type;
    if constexpr (is_complex_v<From>) {
      return To(static_cast<Part>(v.real()), static_cast<Part>(v.imag()));
    } else {
      return To(convert<Part>(v, saturate), Part(0));
    }
  } else if constexpr (is_complex_v<From>) {
    // To bool: nonzero when either part is (NumPy, the array API). To a real
    // type: the real part, as NumPy's cast; the tensor-level cast refuses
    // this (Tensor::to, docs/dtypes.md), so only explicit callers get here.
    if constexpr (std::is_same_v<To, bool>) {
      return v.real() != 0 || v.imag() != 0;
    } else {
      return convert<To>(v.real(), saturate);
    }
  } else if constexpr (is_narrow_float_v<From>) {
    // Narrow floats widen exactly; only NaN payloads and the float8 integer
    // rule need care to match NumPy and ml_dtypes bit for bit.
    const float f = static_cast<float>(v);
    if constexpr (std::is_same_v<To, double>) {
      return static_cast<double>(v);  // f16 keeps its NaN payload (NumPy)
    } else if constexpr (std::is_same_v<To, Half>) {
      if (std::isnan(f))
        return Half::from_bits(std::signbit(f) ? 0xFE00 : 0x7E00);
      return convert<To>(f, saturate);
    } else if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool> &&
                         (std::is_same_v<From, Float8E4M3FN> ||
                          std::is_same_v<From, Float8E5M2>)) {
      return detail::float8_to_int<To>(f);
    } else if constexpr (std::is_same_v<From, Half> &&
                         std::is_same_v<To, std::uint32_t>) {
      // NumPy's half loop is scalar code: f64, then a 64-bit truncation.
      return static_cast<To>(
          detail::truncate_to_signed<std::int64_t>(std::trunc(f)));
    } else {
      return convert<To>(f, saturate);
    }
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_same_v<From, bool>) {
    return convert<To>(static_cast<std::uint8_t>(v ? 1 : 0), saturate);
  } else if constexpr (is_narrow_float_v<To>) {
    if constexpr (std::is_same_v<From, float>) {
      return detail::narrow_from_f32<To>(v, saturate);
    } else if constexpr (std::is_same_v<From, double>) {
      return detail::narrow_from_f64<To>(v, saturate);
    } else if constexpr (std::is_signed_v<From>) {
      return detail::narrow_from_f64<To>(
          fp::i64_to_f64_round_to_odd(static_cast<std::int64_t>(v)), saturate);
    } else {
      return detail::narrow_from_f64<To>(
          fp::u64_to_f64_round_to_odd(static_cast<std::uint64_t>(v)), saturate);
    }
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    return detail::float_to_int<To>(static_cast<double>(v));
  } else {
    // int<->int wraps modulo 2^bits; int->float and f32<->f64 round to
    // nearest even in hardware (one rounding).
    return static_cast<To>(v);
  }
}

}  // namespace tessel

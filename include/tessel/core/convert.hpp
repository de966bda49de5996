// The one definition of how a value of one element type becomes another
// (docs/dtypes.md). Every kernel, item<T>() and Scalar use it.
#pragma once

#include <cmath>
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
inline constexpr bool is_element_type_v =
    std::is_arithmetic_v<T> || is_narrow_float_v<T>;

namespace detail {

// Float to integer as NumPy does on x86-64, but defined on every platform:
// truncate toward zero; narrow targets go through a 32-bit conversion and
// i64/u32 through a 64-bit one, where NaN and out-of-range values become the
// "integer indefinite" minimum; the result then wraps to the target width.
template <class To>
To float_to_int(double x) {
  const double t = std::trunc(x);
  if constexpr (sizeof(To) <= 2 || std::is_same_v<To, std::int32_t>) {
    const bool ok = !std::isnan(t) && t >= -2147483648.0 && t < 2147483648.0;
    const std::int32_t v = ok ? static_cast<std::int32_t>(t)
                              : std::numeric_limits<std::int32_t>::min();
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<To, std::uint64_t>) {
    if (!std::isnan(t) && t >= 0.0 && t < 18446744073709551616.0) {
      return static_cast<std::uint64_t>(t);
    }
    if (!std::isnan(t) && t >= -9223372036854775808.0 && t < 0.0) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(t));
    }
    // x86 converts x >= 2^63 as (x - 2^63) and flips the top bit back; an
    // out-of-range remainder yields the indefinite value, which flips to 0.
    return std::isnan(t) || t < 0.0 ? std::uint64_t{1} << 63 : 0;
  } else {
    const bool ok = !std::isnan(t) && t >= -9223372036854775808.0 &&
                    t < 9223372036854775808.0;
    const std::int64_t v = ok ? static_cast<std::int64_t>(t)
                              : std::numeric_limits<std::int64_t>::min();
    return static_cast<To>(v);
  }
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
  } else {
    return narrow_from_f64<To>(static_cast<double>(f), saturate);
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
  } else if constexpr (is_narrow_float_v<From>) {
    return convert<To>(static_cast<float>(v), saturate);
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

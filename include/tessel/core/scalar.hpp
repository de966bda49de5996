// A single number of any kind, for fill values and tensor-scalar operands.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "tessel/core/convert.hpp"
#include "tessel/core/dtype.hpp"

namespace tessel {

class Scalar {
 public:
  enum class Kind : std::uint8_t { Bool, Int, UInt, Float, Complex };

  Scalar() : Scalar(std::int64_t{0}) {}
  template <class T>
  requires is_element_type_v<T> Scalar(
      T value) {  // NOLINT: implicit, like a number literal
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      i_ = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      kind_ = Kind::Int;
      i_ = value;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::UInt;
      u_ = value;
    } else if constexpr (is_complex_v<T>) {
      kind_ = Kind::Complex;
      d_ = static_cast<double>(value.real());
      imag_ = static_cast<double>(value.imag());
    } else {
      kind_ = Kind::Float;
      d_ = static_cast<double>(value);
    }
  }

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_complex() const { return kind_ == Kind::Complex; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int || kind_ == Kind::UInt; }

  // The value converted with the rules of convert<T>.
  template <class T>
  T to(bool saturate = false) const {
    switch (kind_) {
      case Kind::Bool: return convert<T>(i_ != 0, saturate);
      case Kind::Int: return convert<T>(i_, saturate);
      case Kind::UInt: return convert<T>(u_, saturate);
      case Kind::Float: break;
      case Kind::Complex:
        return convert<T>(std::complex<double>(d_, imag_), saturate);
    }
    return convert<T>(d_, saturate);
  }

  // The dtype a factory infers from this value (PyTorch's rule): bool ->
  // bool, integers -> i64, floats -> f32, complex -> c64.
  DType default_dtype() const;

 private:
  Kind kind_ = Kind::Int;
  union {
    std::int64_t i_;
    std::uint64_t u_;
    double d_;  // a float, or a complex value's real part
  };
  double imag_ = 0.0;
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace tessel

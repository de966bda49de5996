#include "tessel/core/scalar.hpp"

#include <cmath>
#include <ostream>

namespace tessel {

DType Scalar::default_dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::I64;
    case Kind::UInt: return DType::U64;
    case Kind::Float: break;
    case Kind::Complex: return DType::C64;
  }
  return DType::F32;
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return os << (s.to<bool>() ? "True" : "False");
    case Scalar::Kind::Int: return os << s.to<std::int64_t>();
    case Scalar::Kind::UInt: return os << s.to<std::uint64_t>();
    case Scalar::Kind::Float: break;
    case Scalar::Kind::Complex: {
      const auto z = s.to<std::complex<double>>();
      return os << z.real() << (std::signbit(z.imag()) ? "-" : "+")
                << std::abs(z.imag()) << "j";
    }
  }
  return os << s.to<double>();
}

}  // namespace tessel

// Shapes known before any data exists (DESIGN §5): an extent is a
// polynomial over named symbols with integer coefficients — 768, "batch",
// "2*seq", "past + seq", "batch*seq". Products and sums stay exact, so
// flatten, reshape and concat keep their meaning; two extents are equal
// only when their polynomials are (the checker proves, it does not guess).
// Binding values to the symbols gives a concrete Shape, checking each
// symbol's constraints.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessel/core/shape.hpp"

namespace tessel {

class Dim {
 public:
  // A constant extent (implicit, so {"batch", "seq", 768} reads naturally).
  Dim(std::int64_t value = 0);  // NOLINT(google-explicit-constructor)
  // An exact match for int literals, so that Dim(0) is not ambiguous with
  // the null const char*.
  Dim(int value) : Dim(std::int64_t{value}) {}                     // NOLINT
  Dim(long long value) : Dim(static_cast<std::int64_t>(value)) {}  // NOLINT
  // A symbol: any non-empty name ("batch"; E2102 for ""). Names that are
  // not identifiers are shown quoted ('seq-len').
  Dim(const char* symbol);         // NOLINT(google-explicit-constructor)
  Dim(const std::string& symbol);  // NOLINT(google-explicit-constructor)

  bool is_constant() const;
  // The constant's value; E2102 naming the symbols when symbolic.
  std::int64_t value() const;
  // The symbols it mentions, each once, sorted.
  std::vector<std::string> symbols() const;
  // "768", "batch", "2*seq", "batch*seq + 1".
  std::string str() const;

  friend bool operator==(const Dim& a, const Dim& b) {
    return a.terms_ == b.terms_;
  }
  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  // a / b when b is a single term (c*x*y) that divides every term of a
  // exactly; nullopt otherwise.
  std::optional<Dim> divide_exactly(const Dim& b) const;
  // The value with every symbol given; E2102 naming a missing symbol,
  // E2303 on overflow.
  std::int64_t evaluate(
      const std::map<std::string, std::int64_t>& values) const;

 private:
  // Sorted symbol names (repeated for powers) -> coefficient; no zero
  // coefficients, so equal polynomials have equal maps.
  std::map<std::vector<std::string>, std::int64_t> terms_;
};

using SymbolicShape = std::vector<Dim>;

// "(batch, seq, 768)".
std::string shape_string(const SymbolicShape& shape);

// Limits on the value a symbol may take.
struct DimConstraint {
  std::optional<std::int64_t> min;
  std::optional<std::int64_t> max;
  std::optional<std::int64_t> multiple_of;
};

// E2102 naming the symbol when `value` is negative or breaks `constraint`.
void check_dim_constraint(const std::string& symbol, std::int64_t value,
                          const DimConstraint& constraint);

// The concrete shape for these symbol values: every symbol needs a value
// (E2102) within its constraints (E2102 naming it).
Shape bind(const SymbolicShape& shape,
           const std::map<std::string, std::int64_t>& values,
           const std::map<std::string, DimConstraint>& constraints = {});

// A concrete shape as a symbolic one (every extent constant).
SymbolicShape symbolic_shape(const Shape& shape);

}  // namespace tessel

#include "tessel/core/symbolic_shape.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "core/check.hpp"

namespace tessel {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Names that are not identifiers ("seq-len", from another implementation's
// descriptor) are quoted so that they cannot read as arithmetic.
std::string symbol_string(const std::string& s) {
  return is_identifier(s) ? s : "'" + s + "'";
}

std::string term_string(const std::vector<std::string>& symbols,
                        std::int64_t coefficient) {
  if (symbols.empty()) return std::to_string(coefficient);
  std::vector<std::string> shown;
  for (const std::string& s : symbols) shown.push_back(symbol_string(s));
  const std::string product = fmt::format("{}", fmt::join(shown, "*"));
  if (coefficient == 1) return product;
  if (coefficient == -1) return "-" + product;
  return fmt::format("{}*{}", coefficient, product);
}

}  // namespace

Dim::Dim(std::int64_t value) {
  if (value != 0) terms_[{}] = value;
}

Dim::Dim(const std::string& symbol) {
  TESSEL_CHECK(!symbol.empty(), BadShape, "symbolic shape",
               "a symbolic dimension needs a name");
  terms_[{symbol}] = 1;
}

Dim::Dim(const char* symbol) : Dim(std::string(symbol)) {}

bool Dim::is_constant() const {
  return terms_.empty() ||
         (terms_.size() == 1 && terms_.begin()->first.empty());
}

std::int64_t Dim::value() const {
  TESSEL_CHECK(is_constant(), BadShape, "symbolic shape",
               "extent {} is symbolic; bind {} first", str(),
               fmt::join(symbols(), ", "));
  return terms_.empty() ? 0 : terms_.begin()->second;
}

std::vector<std::string> Dim::symbols() const {
  std::set<std::string> names;
  for (const auto& [symbols, c] : terms_)
    names.insert(symbols.begin(), symbols.end());
  return {names.begin(), names.end()};
}

std::string Dim::str() const {
  if (terms_.empty()) return "0";
  // Highest degree first, the constant last: "batch*seq + 2*seq + 1".
  std::vector<std::pair<std::vector<std::string>, std::int64_t>> terms(
      terms_.begin(), terms_.end());
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& a, const auto& b) {
                     return a.first.size() > b.first.size();
                   });
  std::string out;
  for (const auto& [symbols, c] : terms) {
    const std::string t = term_string(symbols, c);
    if (out.empty()) {
      out = t;
    } else if (t[0] == '-') {
      out += " - " + t.substr(1);
    } else {
      out += " + " + t;
    }
  }
  return out;
}

Dim operator+(const Dim& a, const Dim& b) {
  Dim out = a;
  for (const auto& [symbols, c] : b.terms_) {
    const std::int64_t sum = checked_add(out.terms_[symbols], c, "extent");
    if (sum == 0) {
      out.terms_.erase(symbols);
    } else {
      out.terms_[symbols] = sum;
    }
  }
  return out;
}

Dim operator*(const Dim& a, const Dim& b) {
  Dim out;
  for (const auto& [sa, ca] : a.terms_) {
    for (const auto& [sb, cb] : b.terms_) {
      std::vector<std::string> symbols = sa;
      symbols.insert(symbols.end(), sb.begin(), sb.end());
      std::sort(symbols.begin(), symbols.end());
      const std::int64_t sum = checked_add(
          out.terms_[symbols], checked_mul(ca, cb, "extent"), "extent");
      if (sum == 0) {
        out.terms_.erase(symbols);
      } else {
        out.terms_[symbols] = sum;
      }
    }
  }
  return out;
}

std::optional<Dim> Dim::divide_exactly(const Dim& b) const {
  if (b.terms_.size() != 1) return std::nullopt;
  const auto& [divisor, dc] = *b.terms_.begin();
  Dim out;
  for (const auto& [symbols, c] : terms_) {
    // (INT64_MIN / -1 overflows: not exactly divisible in int64.)
    if ((dc == -1 && c == std::numeric_limits<std::int64_t>::min()) ||
        c % dc != 0) {
      return std::nullopt;
    }
    // Remove the divisor's symbols (with multiplicity) from this term.
    std::vector<std::string> rest;
    if (!std::includes(symbols.begin(), symbols.end(), divisor.begin(),
                       divisor.end())) {
      return std::nullopt;
    }
    std::set_difference(symbols.begin(), symbols.end(), divisor.begin(),
                        divisor.end(), std::back_inserter(rest));
    out.terms_[rest] = c / dc;
  }
  return out;
}

std::int64_t Dim::evaluate(
    const std::map<std::string, std::int64_t>& values) const {
  std::int64_t total = 0;
  for (const auto& [symbols, c] : terms_) {
    std::int64_t term = c;
    for (const std::string& s : symbols) {
      const auto it = values.find(s);
      TESSEL_CHECK(it != values.end(), BadShape, "bind",
                   "no value for symbolic dimension '{}'", s);
      term = checked_mul(term, it->second, "extent");
    }
    total = checked_add(total, term, "extent");
  }
  return total;
}

std::string shape_string(const SymbolicShape& shape) {
  std::vector<std::string> parts;
  for (const Dim& d : shape) parts.push_back(d.str());
  if (parts.size() == 1) return fmt::format("({},)", parts[0]);
  return fmt::format("({})", fmt::join(parts, ", "));
}

void check_dim_constraint(const std::string& symbol, std::int64_t value,
                          const DimConstraint& k) {
  TESSEL_CHECK(value >= 0, BadShape, "bind", "'{}' = {} is negative", symbol,
               value);
  TESSEL_CHECK(!k.min || value >= *k.min, BadShape, "bind",
               "'{}' = {} is below its minimum {}", symbol, value, *k.min);
  TESSEL_CHECK(!k.max || value <= *k.max, BadShape, "bind",
               "'{}' = {} is above its maximum {}", symbol, value, *k.max);
  TESSEL_CHECK(
      !k.multiple_of || (*k.multiple_of > 0 && value % *k.multiple_of == 0),
      BadShape, "bind", "'{}' = {} is not a multiple of {}", symbol, value,
      k.multiple_of.value_or(0));
}

Shape bind(const SymbolicShape& shape,
           const std::map<std::string, std::int64_t>& values,
           const std::map<std::string, DimConstraint>& constraints) {
  for (const Dim& d : shape) {
    for (const std::string& s : d.symbols()) {
      const auto v = values.find(s);
      TESSEL_CHECK(v != values.end(), BadShape, "bind",
                   "no value for symbolic dimension '{}' of {}", s,
                   shape_string(shape));
      const auto c = constraints.find(s);
      check_dim_constraint(
          s, v->second, c != constraints.end() ? c->second : DimConstraint{});
    }
  }
  Shape out;
  for (const Dim& d : shape) {
    const std::int64_t extent = d.evaluate(values);
    TESSEL_CHECK(extent >= 0, BadShape, "bind",
                 "extent {} of {} is {} for these values", d.str(),
                 shape_string(shape), extent);
    out.push_back(extent);
  }
  checked_numel(out);
  return out;
}

SymbolicShape symbolic_shape(const Shape& shape) {
  return SymbolicShape(shape.begin(), shape.end());
}

}  // namespace tessel

// The shape rules of the ops, written once over the extent type: `Shape`
// (int64 extents) for the eager ops and `SymbolicShape` (polynomials over
// named symbols) for the symbolic checker (ops/symbolic.hpp). Both get the
// same rule, the same error codes and the same messages.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "core/check.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/core/symbolic_shape.hpp"

namespace tessel::rules {

inline bool is_one(std::int64_t d) { return d == 1; }
inline bool is_one(const Dim& d) { return d == Dim(1); }
inline bool is_minus_one(std::int64_t d) { return d == -1; }
inline bool is_minus_one(const Dim& d) { return d == Dim(-1); }
// An extent that cannot be negative (symbols stand for extents >= 0).
inline bool valid_extent(std::int64_t d) { return d >= 0; }
inline bool valid_extent(const Dim& d) {
  return !d.is_constant() || d.value() >= 0;
}
inline std::string str(std::int64_t d) { return std::to_string(d); }
inline std::string str(const Dim& d) { return d.str(); }
inline std::string str(const Shape& s) { return shape_string(s); }
inline std::string str(const SymbolicShape& s) { return shape_string(s); }
inline std::int64_t product(std::int64_t a, std::int64_t b, const char* op) {
  return checked_mul(a, b, op);
}
inline Dim product(const Dim& a, const Dim& b, const char*) { return a * b; }
inline std::int64_t sum(std::int64_t a, std::int64_t b, const char* op) {
  return checked_add(a, b, op);
}
inline Dim sum(const Dim& a, const Dim& b, const char*) { return a + b; }
inline std::optional<std::int64_t> divide_exactly(std::int64_t a,
                                                  std::int64_t b) {
  if (b == 0 || a % b != 0) return std::nullopt;
  return a / b;
}
inline std::optional<Dim> divide_exactly(const Dim& a, const Dim& b) {
  if (b == Dim()) return std::nullopt;
  return a.divide_exactly(b);
}

// NumPy broadcasting of any number of shapes: trailing axes aligned, an
// extent 1 stretches, equal extents stay. E2101 names the two that clash.
// (Symbolically, "seq" against 768 clashes: it cannot be proven equal.)
template <class S>
S broadcast(std::span<const S> shapes, const char* op) {
  using D = typename S::value_type;
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  S out(rank, D(1));
  // Index of the shape that fixed each output extent, for the error message.
  SmallVector<std::size_t, 6> owner(rank, 0);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const S& s = shapes[k];
    const std::size_t lead = rank - s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      const D& extent = s[i];
      D& current = out[lead + i];
      if (extent == current || is_one(extent)) continue;
      TESSEL_CHECK(
          is_one(current), BroadcastMismatch, op,
          "shapes {} and {} cannot be broadcast: axis {} has extent "
          "{} in one and {} in the other",
          str(shapes[owner[lead + i]]), str(s),
          static_cast<std::int64_t>(lead + i) - static_cast<std::int64_t>(rank),
          str(current), str(extent));
      current = extent;
      owner[lead + i] = k;
    }
  }
  return out;
}

// matmul's result: 1-D operands are promoted (a row, a column) and their
// axis dropped again; batch axes broadcast. E2102 for a rank-0 operand,
// E2103 for inner extents that differ, E2101 for batch axes that clash.
template <class S>
S matmul(const S& a_in, const S& b_in, const char* op) {
  TESSEL_CHECK(a_in.size() > 0 && b_in.size() > 0, BadShape, op,
               "operands need at least one axis, got shapes {} and {}",
               str(a_in), str(b_in));
  using D = typename S::value_type;
  S a;
  if (a_in.size() == 1) a.push_back(D(1));
  for (const D& d : a_in) a.push_back(d);
  S b = b_in;
  if (b.size() == 1) b.push_back(D(1));
  const D& k = a.back();
  const D& kb = b[b.size() - 2];
  TESSEL_CHECK(k == kb, InnerDimMismatch, op,
               "inner dimensions differ: {} @ {} ({} vs {})", str(a_in),
               str(b_in), str(k), str(kb));
  const S batches[] = {S(a.begin(), a.end() - 2), S(b.begin(), b.end() - 2)};
  S shape;
  try {
    shape = broadcast<S>(batches, op);
  } catch (const ShapeError&) {
    detail::fail(ErrorCode::BroadcastMismatch, op,
                 "batch axes of {} and {} cannot be broadcast", str(a_in),
                 str(b_in));
  }
  if (a_in.size() > 1) shape.push_back(a[a.size() - 2]);
  if (b_in.size() > 1) shape.push_back(b.back());
  return shape;
}

// Joining along `axis` (negative counts from the end): every other extent
// equal (E2102), the axis extents summed.
template <class S>
S concat(std::span<const S> shapes, std::int64_t axis, const char* op) {
  TESSEL_CHECK(!shapes.empty(), BadShape, op, "no tensors to concatenate");
  const S& first = shapes.front();
  TESSEL_CHECK(first.size() > 0, BadShape, op,
               "cannot concatenate rank-0 tensors");
  axis = normalize_axis(axis, static_cast<std::int64_t>(first.size()), op);
  const auto a = static_cast<std::size_t>(axis);
  using D = typename S::value_type;
  D total{};
  for (const S& s : shapes) {
    bool ok = s.size() == first.size();
    for (std::size_t d = 0; ok && d < first.size(); ++d) {
      ok = d == a || s[d] == first[d];
    }
    TESSEL_CHECK(ok, BadShape, op, "shapes {} and {} differ outside axis {}",
                 str(first), str(s), axis);
    total = sum(total, s[a], op);
  }
  S out = first;
  out[a] = total;
  return out;
}

// reshape's target with its one -1 extent inferred so that the element
// count stays that of `from`; E2102 when impossible (or, symbolically, not
// provable).
template <class S>
S reshape(S target, const S& from, const char* op) {
  using D = typename S::value_type;
  D count(1);
  for (const D& d : from) count = product(count, d, op);
  std::optional<std::size_t> infer;
  D known(1);
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (is_minus_one(target[i])) {
      TESSEL_CHECK(!infer, BadShape, op, "only one extent may be -1, got {}",
                   str(target));
      infer = i;
      continue;
    }
    TESSEL_CHECK(valid_extent(target[i]), BadShape, op,
                 "invalid extent {} in {}", str(target[i]), str(target));
    known = product(known, target[i], op);
  }
  if (infer) {
    const std::optional<D> rest = divide_exactly(count, known);
    TESSEL_CHECK(rest.has_value(), BadShape, op,
                 "cannot reshape {} ({} elements) into {}", str(from),
                 str(count), str(target));
    target[*infer] = *rest;
    known = product(known, *rest, op);
  }
  TESSEL_CHECK(known == count, BadShape, op,
               "cannot reshape {} ({} elements) into {}", str(from), str(count),
               str(target));
  return target;
}

}  // namespace tessel::rules

#include "tessel/core/shape.hpp"

#include <fmt/format.h>

#include <ostream>

#include "core/check.hpp"
#include "core/shape_rules.hpp"

namespace tessel {

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t product = 0;
  TESSEL_CHECK(!__builtin_mul_overflow(a, b, &product), SizeOverflow, what,
               "{} * {} overflows int64", a, b);
  return product;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t sum = 0;
  TESSEL_CHECK(!__builtin_add_overflow(a, b, &sum), SizeOverflow, what,
               "{} + {} overflows int64", a, b);
  return sum;
}

std::int64_t checked_numel(std::span<const std::int64_t> shape) {
  TESSEL_CHECK(static_cast<std::int64_t>(shape.size()) <= kMaxRank, BadShape,
               "shape", "rank {} exceeds the maximum rank {}", shape.size(),
               kMaxRank);
  std::int64_t count = 1;
  bool empty = false;
  for (auto extent : shape) {
    TESSEL_CHECK(extent >= 0, BadShape, "shape",
                 "negative extent {} in shape {}", extent, shape_string(shape));
    empty = empty || extent == 0;
  }
  // A zero extent makes the tensor empty whatever the other extents are, but
  // the product of the others must still be representable (NumPy rejects
  // (0, 2**40, 2**40) too: strides would overflow).
  for (auto extent : shape) {
    if (extent == 0) continue;
    std::int64_t next = 0;
    TESSEL_CHECK(!__builtin_mul_overflow(count, extent, &next), SizeOverflow,
                 "shape", "element count of {} overflows int64",
                 shape_string(shape));
    count = next;
  }
  return empty ? 0 : count;
}

Strides contiguous_strides(std::span<const std::int64_t> shape) {
  Strides strides(shape.size(), 1);
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

bool is_contiguous(std::span<const std::int64_t> shape,
                   std::span<const std::int64_t> strides) {
  for (auto extent : shape) {
    if (extent == 0) return true;  // no element, nothing to misplace
  }
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

Shape broadcast_shapes(std::span<const Shape> shapes) {
  return rules::broadcast<Shape>(shapes, "broadcast_shapes");
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape both[] = {a, b};
  return broadcast_shapes(std::span<const Shape>(both));
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank,
                            const char* op) {
  TESSEL_CHECK(axis >= -rank && axis < rank, BadShape, op,
               "axis {} is out of range for a tensor of rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::string shape_string(std::span<const std::int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  return os << shape_string(shape);
}

}  // namespace tessel

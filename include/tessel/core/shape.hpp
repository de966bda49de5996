// Shapes and strides (DESIGN §1): extents most significant first, strides in
// elements, every size product overflow-checked.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>

#include "tessel/core/small_vector.hpp"

namespace tessel {

using Shape = SmallVector<std::int64_t, 6>;
using Strides = SmallVector<std::int64_t, 6>;

// The largest rank any tensor may have (NumPy 2's limit).
inline constexpr std::int64_t kMaxRank = 64;

// Number of elements; E2303 when the product overflows int64, E2102 when an
// extent is negative or the rank exceeds kMaxRank.
std::int64_t checked_numel(std::span<const std::int64_t> shape);

// a * b and a + b for sizes; E2303 naming `what` on overflow.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what);

// Row-major strides: stride[r-1] = 1, stride[i] = stride[i+1] * shape[i+1].
Strides contiguous_strides(std::span<const std::int64_t> shape);

// True when `strides` are the row-major strides of `shape`, ignoring the
// strides of extents 0 and 1 (which never move the address).
bool is_contiguous(std::span<const std::int64_t> shape,
                   std::span<const std::int64_t> strides);

// NumPy broadcasting of any number of shapes; E2101 names the two that clash.
Shape broadcast_shapes(std::span<const Shape> shapes);
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Maps a possibly negative axis into [0, rank); E2102 when out of range.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank,
                            const char* op);

// "(2, 3)", "(3,)", "()": Python tuple notation, as in NumPy messages.
std::string shape_string(std::span<const std::int64_t> shape);

std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace tessel

// The two loops every merge method is made of: an element-wise pass over
// all threads, and a sum of per-element terms that gives the same double
// on any thread count (fixed chunks, each summed in order, the chunk sums
// added in order) — so merged bytes never depend on how many threads ran.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/parallel.hpp"

namespace tessel::merge::detail {

inline constexpr std::int64_t kChunk = std::int64_t{1} << 15;

// fn(begin, end) over [0, n) on the pool.
template <class Fn>
void for_ranges(std::int64_t n, Fn&& fn) {
  parallel_for(0, n, kChunk, [&](std::int64_t b, std::int64_t e) { fn(b, e); });
}

// The sum over i in [0, n) of term(i), as doubles.
template <class Term>
double ordered_sum(std::int64_t n, Term&& term) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<std::size_t>(chunks), 0.0);
  parallel_for(0, chunks, 1, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      const std::int64_t end = std::min(n, (c + 1) * kChunk);
      double s = 0.0;
      for (std::int64_t i = c * kChunk; i < end; ++i) s += term(i);
      partial[static_cast<std::size_t>(c)] = s;
    }
  });
  double total = 0.0;
  for (const double s : partial) total += s;
  return total;
}

}  // namespace tessel::merge::detail

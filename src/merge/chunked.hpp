// The two loops every merge method is made of: an element-wise pass over
// all threads, and a sum of per-element terms that gives the same double
// on any thread count (fixed chunks, each summed in order, the chunk sums
// added in order) — so merged bytes never depend on how many threads ran.
#pragma once

#include <algorithm>
#include <array>
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

// The K sums over i in [0, n) of term(i, k), as doubles: each chunk in
// four interleaved accumulators per sum (so the loop vectorises), the
// chunks' sums added in order.
template <int K, class Term>
std::array<double, K> ordered_sums(std::int64_t n, Term&& term) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::array<double, K>> partial(static_cast<std::size_t>(chunks));
  parallel_for(0, chunks, 1, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      const std::int64_t end = std::min(n, (c + 1) * kChunk);
      double acc[K][4] = {};
      std::int64_t i = c * kChunk;
      for (; i + 4 <= end; i += 4) {
        for (int k = 0; k < K; ++k) {
          for (int j = 0; j < 4; ++j) acc[k][j] += term(i + j, k);
        }
      }
      for (; i < end; ++i) {
        for (int k = 0; k < K; ++k) acc[k][0] += term(i, k);
      }
      for (int k = 0; k < K; ++k) {
        partial[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] =
            (acc[k][0] + acc[k][1]) + (acc[k][2] + acc[k][3]);
      }
    }
  });
  std::array<double, K> total{};
  for (const auto& s : partial) {
    for (int k = 0; k < K; ++k) total[k] += s[k];
  }
  return total;
}

// K sums over [0, n) that sum(begin, end, acc) adds into acc[0..K) for
// one fixed chunk at a time (any way it likes, e.g. block by block with
// vector kernels), the chunks' sums then added in order: the same doubles
// on any thread count.
template <int K, class ChunkSum>
std::array<double, K> chunk_sums(std::int64_t n, ChunkSum&& sum) {
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::array<double, K>> partial(static_cast<std::size_t>(chunks));
  parallel_for(0, chunks, 1, [&](std::int64_t cb, std::int64_t ce) {
    for (std::int64_t c = cb; c < ce; ++c) {
      std::array<double, K> acc{};
      sum(c * kChunk, std::min(n, (c + 1) * kChunk), acc.data());
      partial[static_cast<std::size_t>(c)] = acc;
    }
  });
  std::array<double, K> total{};
  for (const auto& s : partial) {
    for (int k = 0; k < K; ++k) total[k] += s[k];
  }
  return total;
}

// The sum over i in [0, n) of term(i), as a double.
template <class Term>
double ordered_sum(std::int64_t n, Term&& term) {
  return ordered_sums<1>(n, [&](std::int64_t i, int) { return term(i); })[0];
}

}  // namespace tessel::merge::detail

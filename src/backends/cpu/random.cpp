// Note [random streams]
// A draw of n values reserves consecutive Philox blocks from the generator;
// value i is a function of its own block only:
//  - 32-bit floats and narrower: block i/4, word i%4, one word per value;
//  - f64 and integers: block i/2, words 2(i%2) and 2(i%2)+1 as 64 bits;
//  - normals use Box-Muller on word pairs: values 2j and 2j+1 share a pair
//    and take its cosine and sine branch (f64: block i/2, words 0-1 and 2-3).
// Uniform values use as many random bits as the dtype has significand
// digits, so they are exact in the dtype and never round up to 1.
#include <cmath>
#include <numbers>

#include "backends/cpu/kernels.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel::cpu {

namespace {

__extension__ using Uint128 = unsigned __int128;

template <class T>
constexpr int significand_digits() {
  if constexpr (std::is_same_v<T, double>)
    return 53;
  else if constexpr (std::is_same_v<T, float>)
    return 24;
  else if constexpr (std::is_same_v<T, Half>)
    return 11;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return 8;
  else if constexpr (std::is_same_v<T, Float8E4M3FN>)
    return 4;
  else
    return 3;
}

template <class T>
constexpr int values_per_block() {
  return std::is_same_v<T, double> ? 2 : 4;
}

// Runs body(value_index, block_words) over the blocks covering [0, n).
template <int PerBlock, class Body>
void for_each_block(std::int64_t n, const Generator& gen,
                    std::uint64_t first_block, Body&& body) {
  const std::int64_t blocks = (n + PerBlock - 1) / PerBlock;
  parallel_for(0, blocks, 4096, [&](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t b = lo; b < hi; ++b) {
      const auto words = gen.block(first_block + static_cast<std::uint64_t>(b));
      const std::int64_t first = b * PerBlock;
      const std::int64_t last = std::min<std::int64_t>(n, first + PerBlock);
      for (std::int64_t i = first; i < last; ++i) body(i, words);
    }
  });
}

std::uint64_t word64(const std::array<std::uint32_t, 4>& w, int pair) {
  return (std::uint64_t{w[2 * pair]} << 32) | w[2 * pair + 1];
}

}  // namespace

void fill_uniform(const KernelOutput& dst, const Generator& gen,
                  std::uint64_t first_block, double low, double high) {
  detail::dispatch_float_type(dst.dtype(), "rand", [&]<class T>() {
    T* out = dst.data<T>();
    constexpr int digits = significand_digits<T>();
    constexpr int per_block = values_per_block<T>();
    const double scale = high - low;
    for_each_block<per_block>(
        dst.numel(), gen, first_block, [&](std::int64_t i, const auto& w) {
          double u = 0.0;
          if constexpr (per_block == 2) {
            u = std::ldexp(
                static_cast<double>(word64(w, static_cast<int>(i % 2)) >>
                                    (64 - digits)),
                -digits);
          } else {
            u = std::ldexp(static_cast<double>(w[i % 4] >> (32 - digits)),
                           -digits);
          }
          out[i] = convert<T>(low == 0.0 && scale == 1.0 ? u : low + u * scale);
        });
  });
}

void fill_normal(const KernelOutput& dst, const Generator& gen,
                 std::uint64_t first_block, double mean, double std) {
  detail::dispatch_float_type(dst.dtype(), "randn", [&]<class T>() {
    T* out = dst.data<T>();
    constexpr int per_block = values_per_block<T>();
    const std::int64_t n = dst.numel();
    const std::int64_t blocks = (n + per_block - 1) / per_block;
    // Values 2j and 2j+1 share one Box-Muller pair: one log, one sqrt and
    // one sincos for both.
    auto emit_pair = [&](std::int64_t i, double u1, double u2) {
      const double r = std::sqrt(-2.0 * std::log(u1));
      const double angle = 2.0 * std::numbers::pi * u2;
      out[i] = convert<T>(mean + std * r * std::cos(angle));
      if (i + 1 < n) out[i + 1] = convert<T>(mean + std * r * std::sin(angle));
    };
    parallel_for(0, blocks, 4096, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t b = lo; b < hi; ++b) {
        const auto w = gen.block(first_block + static_cast<std::uint64_t>(b));
        const std::int64_t first = b * per_block;
        if constexpr (per_block == 2) {
          // u1 in (0, 1] so that the log is finite.
          emit_pair(
              first,
              std::ldexp(static_cast<double>((word64(w, 0) >> 11) + 1), -53),
              std::ldexp(static_cast<double>(word64(w, 1) >> 11), -53));
        } else {
          for (int pair = 0; pair < 2 && first + 2 * pair < n; ++pair) {
            emit_pair(first + 2 * pair,
                      std::ldexp(static_cast<double>(w[2 * pair]) + 1.0, -32),
                      std::ldexp(static_cast<double>(w[2 * pair + 1]), -32));
          }
        }
      }
    });
  });
}

void fill_randint(const KernelOutput& dst, const Generator& gen,
                  std::uint64_t first_block, std::int64_t low,
                  std::int64_t high) {
  detail::dispatch_element_type(dst.dtype(), "randint", [&]<class T>() {
    T* out = dst.data<T>();
    const auto range =
        static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    for_each_block<2>(
        dst.numel(), gen, first_block, [&](std::int64_t i, const auto& w) {
          // Lemire's multiply-shift: the high word of x * range lies in [0,
          // range).
          const auto x =
              static_cast<Uint128>(word64(w, static_cast<int>(i % 2)));
          const auto k = static_cast<std::uint64_t>((x * range) >> 64);
          out[i] = convert<T>(
              static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + k));
        });
  });
}

}  // namespace tessel::cpu

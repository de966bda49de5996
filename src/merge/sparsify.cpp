// Magnitude selections rank |delta| by (value, position): mergekit's
// torch.argsort breaks ties in no documented order, so ties are the one
// place tessel's masks may differ from mergekit's; docs/merge.md.
#include "merge/sparsify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <numeric>

#include "merge/chunked.hpp"
#include "merge/inputs.hpp"
#include "tessel/core/random.hpp"

namespace tessel::merge::detail {

namespace {

// fn(first, deltas, n) for the blocks of [s, e) in order, the deltas
// widened into scratch.
template <class Fn>
void for_delta_blocks(const Elements& x, const Elements& base, std::int64_t s,
                      std::int64_t e, Fn&& fn) {
  float* xb = block_scratch(2);
  float* bb = xb + padded(kBlock);
  for (std::int64_t i0 = s; i0 < e; i0 += kBlock) {
    const std::int64_t len = std::min(kBlock, e - i0);
    x.load(i0, len, xb);
    if (base.defined()) {
      base.load(i0, len, bb);
      for (std::int64_t j = 0; j < len; ++j) xb[j] -= bb[j];
    }
    fn(i0, static_cast<const float*>(xb), len);
  }
}

// fn(i, delta) for i in [s, e) in order.
template <class Fn>
void for_deltas(const Elements& x, const Elements& base, std::int64_t s,
                std::int64_t e, Fn&& fn) {
  for_delta_blocks(x, base, s, e,
                   [&](std::int64_t i0, const float* d, std::int64_t len) {
                     for (std::int64_t j = 0; j < len; ++j) fn(i0 + j, d[j]);
                   });
}

// |delta| as the bits of a non-negative float: their order as unsigned
// integers is the order of the magnitudes, so ranks can be found by
// counting bit patterns (a radix select) instead of sorting. Below 2^31,
// so they compare as signed integers too, which every x86 vector unit has.
std::uint32_t magnitude_key(float delta) {
  return std::bit_cast<std::uint32_t>(delta) & 0x7fffffffu;
}

// fn(first, keys, n) for the blocks of [s, e) in order: each block's keys
// computed in a loop of their own (it vectorises; the histogram updates
// that follow cannot).
template <class Fn>
void for_key_blocks(const Elements& x, const Elements& base, std::int64_t s,
                    std::int64_t e, Fn&& fn) {
  std::vector<std::int32_t> keys(static_cast<std::size_t>(kBlock));
  for_delta_blocks(x, base, s, e,
                   [&](std::int64_t i0, const float* d, std::int64_t len) {
                     std::int32_t* k = keys.data();
                     for (std::int64_t j = 0; j < len; ++j) {
                       k[j] = static_cast<std::int32_t>(magnitude_key(d[j]));
                     }
                     fn(i0, static_cast<const std::int32_t*>(k), len);
                   });
}

// The parts a range is cut into for counting: one per thread, and small
// enough that a part's counts fit the 32-bit histogram bins (which keep a
// part's 65536 bins inside L2).
std::int64_t part_count(std::int64_t n) {
  constexpr std::int64_t kMaxPart = std::int64_t{1} << 31;
  return std::max<std::int64_t>(get_num_threads(),
                                (n + kMaxPart - 1) / kMaxPart);
}

// Runs fn(part, begin, end) over the part_count(n) equal parts of [0, n).
template <class Fn>
void for_parts(std::int64_t n, Fn&& fn) {
  const std::int64_t parts = part_count(n);
  parallel_for(0, parts, 1, [&](std::int64_t pb, std::int64_t pe) {
    for (std::int64_t p = pb; p < pe; ++p)
      fn(p, n * p / parts, n * (p + 1) / parts);
  });
}

// The key at rank r (ascending) and how many keys are smaller: two passes
// of 65536-bin histograms (high half, then the low half within the high
// half's bin), each part of the range counting into its own histogram —
// whose bin of the cut's key then says how many keys equal to it each
// part holds, so ranks among equal keys need no further pass.
struct Cut {
  std::uint32_t key = 0;
  std::int64_t less = 0;         // keys below `key`
  std::int64_t equal_below = 0;  // of the keys equal to it, rank below r
  bool all = false;  // r is past the end: every element ranks below it
  // Keys equal to `key` in the parts before part p (parts + 1 entries).
  std::vector<std::int64_t> equal_before;
};

Cut cut_at(const Elements& x, const Elements& base, std::int64_t n,
           std::int64_t r) {
  const std::int64_t parts = part_count(n);
  if (r >= n) {
    Cut all{0, n, 0, true, {}};
    all.equal_before.assign(static_cast<std::size_t>(parts) + 1, 0);
    return all;
  }
  constexpr std::size_t kBins = 1 << 16;
  std::vector<std::uint32_t> hist(static_cast<std::size_t>(parts) * kBins);
  const auto merged = [&] {
    std::vector<std::int64_t> total(kBins, 0);
    for (std::int64_t p = 0; p < parts; ++p) {
      for (std::size_t b = 0; b < kBins; ++b) {
        total[b] += hist[static_cast<std::size_t>(p) * kBins + b];
      }
    }
    return total;
  };
  // The bin holding rank `want`, and the count below it.
  const auto find = [](const std::vector<std::int64_t>& h, std::int64_t want) {
    std::int64_t below = 0;
    std::size_t b = 0;
    while (below + h[b] <= want) below += h[b++];
    return std::pair(static_cast<std::uint32_t>(b), below);
  };
  for_parts(n, [&](std::int64_t p, std::int64_t b, std::int64_t e) {
    std::uint32_t* h = hist.data() + p * std::int64_t(kBins);
    for_key_blocks(x, base, b, e,
                   [h](std::int64_t, const std::int32_t* k, std::int64_t len) {
                     for (std::int64_t j = 0; j < len; ++j) ++h[k[j] >> 16];
                   });
  });
  // Not structured bindings: clang 14 cannot capture them in a lambda.
  const std::pair<std::uint32_t, std::int64_t> first = find(merged(), r);
  const std::uint32_t high = first.first;
  const std::int64_t below_high = first.second;
  std::fill(hist.begin(), hist.end(), 0);
  for_parts(n, [&](std::int64_t p, std::int64_t b, std::int64_t e) {
    std::uint32_t* h = hist.data() + p * std::int64_t(kBins);
    const auto in_bin = static_cast<std::int32_t>(high);
    for_key_blocks(
        x, base, b, e,
        [h, in_bin](std::int64_t, const std::int32_t* k, std::int64_t len) {
          for (std::int64_t j = 0; j < len; ++j) {
            if ((k[j] >> 16) == in_bin) ++h[k[j] & 0xffff];
          }
        });
  });
  const auto [low, below_low] = find(merged(), r - below_high);
  Cut c;
  c.key = (high << 16) | low;
  c.less = below_high + below_low;
  c.equal_below = r - c.less;
  c.equal_before.assign(static_cast<std::size_t>(parts) + 1, 0);
  for (std::int64_t p = 0; p < parts; ++p) {
    c.equal_before[static_cast<std::size_t>(p) + 1] =
        c.equal_before[static_cast<std::size_t>(p)] +
        hist[static_cast<std::size_t>(p) * kBins + low];
  }
  return c;
}

// Marks (1) the elements whose rank in ascending (|delta|, position) order
// lies in [lo, hi): rank(i) < r when its key is below the cut's, or equal
// with fewer than equal_below equal keys before it (counted within the
// part, offset by the parts before).
std::vector<std::uint8_t> rank_window(const Elements& x, const Elements& base,
                                      std::int64_t n, std::int64_t lo,
                                      std::int64_t hi) {
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n), 0);
  if (lo >= hi) return mask;
  const Cut a = cut_at(x, base, n, lo);
  const Cut b = cut_at(x, base, n, hi);
  const std::vector<std::int64_t>& equal_a = a.equal_before;
  const std::vector<std::int64_t>& equal_b = b.equal_before;
  // Among keys equal to a cut's, position decides: the first equal_below
  // of them rank below it. So within a part, before the one block where
  // that count is reached, the rule is a strict comparison, after it an
  // inclusive one — two loops the compiler vectorises, and only the block
  // holding the switch goes element by element.
  const auto ka = static_cast<std::int32_t>(a.key);
  const auto kb = static_cast<std::int32_t>(b.key);
  for_parts(n, [&](std::int64_t p, std::int64_t s, std::int64_t e) {
    std::int64_t seen_a = equal_a[static_cast<std::size_t>(p)];
    std::int64_t seen_b = equal_b[static_cast<std::size_t>(p)];
    for_key_blocks(
        x, base, s, e,
        [&](std::int64_t i0, const std::int32_t* k, std::int64_t len) {
          std::uint8_t* m = mask.data() + i0;
          std::int64_t count_a = 0, count_b = 0;
          for (std::int64_t j = 0; j < len; ++j) {
            count_a += k[j] == ka;
            count_b += k[j] == kb;
          }
          const bool a_switches =
              seen_a < a.equal_below && seen_a + count_a > a.equal_below;
          const bool b_switches = !b.all && seen_b < b.equal_below &&
                                  seen_b + count_b > b.equal_below;
          if (a_switches || b_switches) {
            for (std::int64_t j = 0; j < len; ++j) {
              const auto key = static_cast<std::uint32_t>(k[j]);
              bool below_a = key < a.key;
              if (key == a.key) below_a = seen_a++ < a.equal_below;
              bool below_b = b.all || key < b.key;
              if (!b.all && key == b.key) below_b = seen_b++ < b.equal_below;
              m[j] = !below_a && below_b;
            }
            return;
          }
          // Kept: above `floor` and below `ceiling`.
          const std::int32_t floor = seen_a >= a.equal_below ? ka - 1 : ka;
          const std::int32_t ceiling = b.all                     ? INT32_MAX
                                       : seen_b >= b.equal_below ? kb
                                                                 : kb + 1;
          for (std::int64_t j = 0; j < len; ++j) {
            m[j] = static_cast<std::uint8_t>((k[j] > floor) & (k[j] < ceiling));
          }
          seen_a += count_a;
          seen_b += count_b;
        });
  });
  return mask;
}

// A uniform draw in [0, 1) per element from (seed, stream, i): the top 24
// bits of word i % 4 of Philox block (i / 4, stream).
template <class KeepIf>
std::vector<std::uint8_t> random_mask(std::int64_t n, const RandomStream& r,
                                      KeepIf&& keep_if) {
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
  const std::array<std::uint32_t, 2> key{
      static_cast<std::uint32_t>(r.seed),
      static_cast<std::uint32_t>(r.seed >> 32)};
  for_ranges((n + 3) / 4, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t blk = b; blk < e; ++blk) {
      const auto w = philox4x32_10(
          {static_cast<std::uint32_t>(blk),
           static_cast<std::uint32_t>(static_cast<std::uint64_t>(blk) >> 32),
           static_cast<std::uint32_t>(r.stream),
           static_cast<std::uint32_t>(r.stream >> 32)},
          key);
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = blk * 4 + k;
        if (i >= n) break;
        const double u = static_cast<double>(w[k] >> 8) * 0x1p-24;
        mask[static_cast<std::size_t>(i)] = keep_if(i, u) ? 1 : 0;
      }
    }
  });
  return mask;
}

// Della's keep probabilities: within each row, density - epsilon for the
// smallest |delta| rising linearly to density + epsilon for the largest.
std::vector<std::uint8_t> della_mask(const Elements& x, const Elements& base,
                                     std::int64_t rows, std::int64_t cols,
                                     const TaskInput& in) {
  const std::int64_t n = rows * cols;
  std::vector<float> prob(static_cast<std::size_t>(n));
  const double lo = in.density - in.epsilon;
  parallel_for(0, rows, 1, [&](std::int64_t rb, std::int64_t re) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(cols));
    std::vector<float> magnitude(static_cast<std::size_t>(cols));
    for (std::int64_t r = rb; r < re; ++r) {
      const std::int64_t row = r * cols;
      for_deltas(x, base, row, row + cols, [&](std::int64_t i, float d) {
        magnitude[static_cast<std::size_t>(i - row)] = std::abs(d);
      });
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::sort(order.begin(), order.end(),
                [&](std::int64_t p, std::int64_t q) {
                  const float mp = magnitude[static_cast<std::size_t>(p)];
                  const float mq = magnitude[static_cast<std::size_t>(q)];
                  return mp < mq || (mp == mq && p < q);
                });
      for (std::int64_t k = 0; k < cols; ++k) {
        // (rank - min rank) / (max rank - min rank); a one-element row
        // (mergekit: 0 / 0) takes the lowest probability.
        const double norm = cols > 1 ? double(k) / double(cols - 1) : 0.0;
        prob[static_cast<std::size_t>(row +
                                      order[static_cast<std::size_t>(k)])] =
            static_cast<float>(lo + norm * 2 * in.epsilon);
      }
    }
  });
  return random_mask(n, in.random, [&](std::int64_t i, double u) {
    return u < prob[static_cast<std::size_t>(i)];
  });
}

}  // namespace

Thinned thin(const Elements& x, const Elements& base, std::int64_t rows,
             std::int64_t cols, Sparsification method, const TaskInput& in,
             bool rescale, const char* label) {
  const std::int64_t n = rows * cols;
  Thinned out;
  if (method != Sparsification::None &&
      !(in.density > 0.0 && in.density <= 1.0)) {
    bad_parameter(label,
                  fmt::format("density = {} is outside (0, 1]", in.density));
  }
  if (method == Sparsification::MagnitudeOutliers &&
      !(in.gamma >= 0.0 && in.gamma <= 1.0)) {
    bad_parameter(label, fmt::format("gamma = {} is outside [0, 1]", in.gamma));
  }
  if (method == Sparsification::DellaMagprune && in.density < 1.0 &&
      !(in.density - in.epsilon > 0.0 && in.density + in.epsilon < 1.0)) {
    bad_parameter(label, fmt::format("density -/+ epsilon ({} -/+ {}) must lie "
                                     "inside (0, 1)",
                                     in.density, in.epsilon));
  }
  if (method == Sparsification::None || in.density >= 1.0 || n == 0) {
    out.keep_all = true;
    return out;
  }
  switch (method) {
    case Sparsification::Magnitude: {
      const std::int64_t k = std::max<std::int64_t>(
          1, static_cast<std::int64_t>(in.density * double(n)));
      out.mask = rank_window(x, base, n, n - k, n);
      break;
    }
    case Sparsification::MagnitudeOutliers: {
      const auto target = static_cast<std::int64_t>(in.density * double(n));
      const auto top = static_cast<std::int64_t>(in.gamma * double(n));
      const std::int64_t bottom = std::max<std::int64_t>(0, n - target - top);
      out.mask = rank_window(x, base, n, bottom, bottom + target);
      break;
    }
    case Sparsification::Random:
      // u = (word >> 8) / 2^24 < density exactly when the 24-bit word is
      // below ceil(density * 2^24) (the product is exact).
      out.random = true;
      out.key[0] = static_cast<std::uint32_t>(in.random.seed);
      out.key[1] = static_cast<std::uint32_t>(in.random.seed >> 32);
      out.stream = in.random.stream;
      out.threshold =
          static_cast<std::uint32_t>(std::ceil(in.density * 0x1p24));
      break;
    case Sparsification::DellaMagprune:
      out.mask = della_mask(x, base, rows, cols, in);
      break;
    case Sparsification::None: break;
  }
  // DARE's draws, made once more for the rescale pass, are kept as bits
  // (an eighth of a byte mask) for the merge pass instead of drawn a third
  // time: Philox is most of a DARE merge's work.
  std::vector<std::uint8_t> bits;
  if (rescale && out.random) {
    bits.assign(static_cast<std::size_t>(padded(n) / 8), 0);
  }
  if (rescale) {
    // mergekit's RescaleNorm.l1: the kept part scaled back to the L1 norm
    // of the whole, unless either norm is below 1e-7.
    const auto norms = chunk_sums<2>(n, [&](std::int64_t begin,
                                            std::int64_t end, double* acc) {
      std::vector<float> keep(static_cast<std::size_t>(padded(kBlock)));
      for_delta_blocks(x, base, begin, end,
                       [&](std::int64_t i0, const float* d, std::int64_t len) {
                         out.keep_factors(i0, len, 1.0f, keep.data());
                         simd::add_l1_sums(d, keep.data(), padded(len), acc);
                         // i0 is a multiple of kBlock, so of 8: whole bytes.
                         if (!bits.empty()) {
                           simd::pack_nonzero(keep.data(), padded(len),
                                              bits.data() + i0 / 8);
                         }
                       });
    });
    const double before = norms[0];
    const double after = norms[1];
    if (before >= 1e-7 && after >= 1e-7) {
      out.scale = static_cast<float>(before / after);
    }
  }
  if (!bits.empty()) {
    out.random = false;
    out.bits = std::move(bits);
  }
  return out;
}

void Thinned::keep_factors(std::int64_t first, std::int64_t n, float kept,
                           float* out) const {
  if (random) {
    simd::random_keep(key, stream, first, padded(n), threshold, kept, out);
    return;
  }
  if (!bits.empty()) {
    // Eight factors per byte of bits from a table of their 0/1 patterns.
    static const auto patterns = [] {
      std::array<std::array<float, 8>, 256> t{};
      for (int b = 0; b < 256; ++b) {
        for (int k = 0; k < 8; ++k) t[b][k] = float((b >> k) & 1);
      }
      return t;
    }();
    const auto bit = [&](std::int64_t i) {
      return (bits[static_cast<std::size_t>(i >> 3)] >> (i & 7)) & 1;
    };
    std::int64_t j = 0;
    for (; j < n && ((first + j) & 7) != 0; ++j) {
      out[j] = bit(first + j) ? kept : 0.0f;
    }
    for (; j + 8 <= n; j += 8) {
      const float* p =
          patterns[bits[static_cast<std::size_t>((first + j) >> 3)]].data();
      for (int k = 0; k < 8; ++k) out[j + k] = p[k] * kept;
    }
    for (; j < n; ++j) out[j] = bit(first + j) ? kept : 0.0f;
  } else {
    const std::uint8_t* m = mask.data() + first;
    for (std::int64_t j = 0; j < n; ++j) out[j] = m[j] ? kept : 0.0f;
  }
  std::fill(out + n, out + padded(n), 0.0f);
}

}  // namespace tessel::merge::detail

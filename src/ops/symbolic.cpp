#include "tessel/ops/symbolic.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/shape_rules.hpp"
#include "ops/conv_window.hpp"

namespace tessel::symbolic {

namespace {

std::int64_t rank_of(const SymbolicShape& s) {
  return static_cast<std::int64_t>(s.size());
}

}  // namespace

SymbolicShape broadcast(const SymbolicShape& a, const SymbolicShape& b) {
  const SymbolicShape both[] = {a, b};
  return rules::broadcast<SymbolicShape>(both, "broadcast");
}

SymbolicShape matmul(const SymbolicShape& a, const SymbolicShape& b) {
  return rules::matmul<SymbolicShape>(a, b, "matmul");
}

SymbolicShape linear(const SymbolicShape& x, const SymbolicShape& weight) {
  return rules::linear<SymbolicShape>(x, weight, "linear");
}

SymbolicShape transpose(const SymbolicShape& s, std::int64_t dim0,
                        std::int64_t dim1) {
  const auto a = normalize_axis(dim0, rank_of(s), "transpose");
  const auto b = normalize_axis(dim1, rank_of(s), "transpose");
  SymbolicShape out = s;
  std::swap(out[static_cast<std::size_t>(a)], out[static_cast<std::size_t>(b)]);
  return out;
}

SymbolicShape transpose(const SymbolicShape& s) {
  return SymbolicShape(s.rbegin(), s.rend());
}

SymbolicShape permute(const SymbolicShape& s,
                      const std::vector<std::int64_t>& dims) {
  SymbolicShape out;
  for (const std::int64_t d : rules::permutation(dims, rank_of(s), "permute")) {
    out.push_back(s[static_cast<std::size_t>(d)]);
  }
  return out;
}

SymbolicShape reshape(const SymbolicShape& s, const SymbolicShape& target) {
  for (const Dim& d : s) {
    TESSEL_CHECK(!d.is_constant() || d.value() >= 0, BadShape, "reshape",
                 "invalid extent {} in {}", d.str(), shape_string(s));
  }
  return rules::reshape<SymbolicShape>(target, s, "reshape");
}

SymbolicShape flatten(const SymbolicShape& s, std::int64_t start,
                      std::int64_t end) {
  return rules::flatten(s, start, end, "flatten");
}

SymbolicShape unsqueeze(const SymbolicShape& s, std::int64_t axis) {
  const auto a = normalize_axis(axis, rank_of(s) + 1, "unsqueeze");
  SymbolicShape out = s;
  out.insert(out.begin() + a, Dim(1));
  return out;
}

SymbolicShape squeeze(const SymbolicShape& s, std::int64_t axis) {
  SymbolicShape out = s;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(
                              rules::squeezed_axis(s, axis, "squeeze")));
  return out;
}

SymbolicShape squeeze(const SymbolicShape& s,
                      const std::vector<std::int64_t>& axes) {
  SymbolicShape out = s;
  for (const std::size_t d : rules::squeezed_axes(s, axes, "squeeze")) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(d));
  }
  return out;
}

SymbolicShape select(const SymbolicShape& s, std::int64_t dim,
                     std::int64_t index) {
  return rules::without_axis(s, rules::selected_axis(s, dim, index, "select"));
}

SymbolicShape slice(const SymbolicShape& s, std::int64_t dim,
                    std::int64_t start, std::int64_t stop, std::int64_t step) {
  const auto d =
      static_cast<std::size_t>(normalize_axis(dim, rank_of(s), "slice"));
  SymbolicShape out = s;
  out[d] = rules::sliced_extent(s[d], start, stop, step, "slice");
  return out;
}

SymbolicShape gather(const SymbolicShape& x, const SymbolicShape& index,
                     std::int64_t axis) {
  return rules::gather(x, index, axis, "gather");
}

SymbolicShape dot(const SymbolicShape& a, const SymbolicShape& b) {
  return rules::dot(a, b, "dot");
}

SymbolicShape conv2d(const SymbolicShape& x, const SymbolicShape& weight,
                     const ConvOptions& options) {
  TESSEL_CHECK(x.size() == 4, BadShape, "conv2d", "needs a 4-D input, got {}",
               shape_string(x));
  return rules::convolution(
      x, weight, ops::convolution_window(options), options.groups,
      options.layout == DataLayout::ChannelsLast, "conv2d");
}

SymbolicShape reduce(const SymbolicShape& s,
                     const std::vector<std::int64_t>& axes, bool keepdims) {
  return rules::reduce(s, axes, keepdims, "reduce");
}

SymbolicShape concat(const std::vector<SymbolicShape>& shapes,
                     std::int64_t axis) {
  return rules::concat<SymbolicShape>(shapes, axis, "concat");
}

SymbolicShape embedding(const SymbolicShape& weight, const SymbolicShape& ids) {
  return rules::embedding(weight, ids, "embedding");
}

SymbolicShape attention(const SymbolicShape& q, const SymbolicShape& k,
                        const SymbolicShape& v) {
  return rules::attention(q, k, v, "scaled_dot_product_attention");
}

}  // namespace tessel::symbolic

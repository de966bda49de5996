#include "tessel/ops/symbolic.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/shape_rules.hpp"

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
  TESSEL_CHECK(weight.size() == 2, BadShape, "linear",
               "weight must be (out, in), got {}", shape_string(weight));
  TESSEL_CHECK(!x.empty(), BadShape, "linear", "input must have an axis");
  TESSEL_CHECK(x.back() == weight[1], InnerDimMismatch, "linear",
               "input {} has {} features but weight {} expects {}",
               shape_string(x), x.back().str(), shape_string(weight),
               weight[1].str());
  SymbolicShape out = x;
  out.back() = weight[0];
  return out;
}

SymbolicShape transpose(const SymbolicShape& s, std::int64_t dim0,
                        std::int64_t dim1) {
  const auto a = normalize_axis(dim0, rank_of(s), "transpose");
  const auto b = normalize_axis(dim1, rank_of(s), "transpose");
  SymbolicShape out = s;
  std::swap(out[static_cast<std::size_t>(a)], out[static_cast<std::size_t>(b)]);
  return out;
}

SymbolicShape permute(const SymbolicShape& s,
                      const std::vector<std::int64_t>& dims) {
  TESSEL_CHECK(dims.size() == s.size(), BadShape, "permute",
               "{} axes given for a tensor of rank {}", dims.size(), s.size());
  std::vector<bool> seen(s.size(), false);
  SymbolicShape out;
  for (const std::int64_t d : dims) {
    const auto axis =
        static_cast<std::size_t>(normalize_axis(d, rank_of(s), "permute"));
    TESSEL_CHECK(!seen[axis], BadShape, "permute",
                 "axis {} repeated in permutation", axis);
    seen[axis] = true;
    out.push_back(s[axis]);
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
  if (s.empty()) return {Dim(1)};
  const auto a =
      static_cast<std::size_t>(normalize_axis(start, rank_of(s), "flatten"));
  const auto b =
      static_cast<std::size_t>(normalize_axis(end, rank_of(s), "flatten"));
  TESSEL_CHECK(a <= b, BadShape, "flatten",
               "start_dim {} comes after end_dim {}", a, b);
  SymbolicShape out(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
  Dim merged(1);
  for (std::size_t d = a; d <= b; ++d) merged = merged * s[d];
  out.push_back(merged);
  out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(b) + 1,
             s.end());
  return out;
}

SymbolicShape unsqueeze(const SymbolicShape& s, std::int64_t axis) {
  const auto a = normalize_axis(axis, rank_of(s) + 1, "unsqueeze");
  SymbolicShape out = s;
  out.insert(out.begin() + a, Dim(1));
  return out;
}

SymbolicShape squeeze(const SymbolicShape& s, std::int64_t axis) {
  const auto a =
      static_cast<std::size_t>(normalize_axis(axis, rank_of(s), "squeeze"));
  TESSEL_CHECK(s[a] == Dim(1), BadShape, "squeeze",
               "axis {} of shape {} has extent {}, not 1", a, shape_string(s),
               s[a].str());
  SymbolicShape out = s;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(a));
  return out;
}

SymbolicShape reduce(const SymbolicShape& s,
                     const std::vector<std::int64_t>& axes, bool keepdims) {
  std::vector<bool> reduced(s.size(), axes.empty());
  for (const std::int64_t axis : axes) {
    const auto a =
        static_cast<std::size_t>(normalize_axis(axis, rank_of(s), "reduce"));
    TESSEL_CHECK(!reduced[a], BadShape, "reduce", "axis {} given twice", axis);
    reduced[a] = true;
  }
  SymbolicShape out;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(s[d]);
    } else if (keepdims) {
      out.push_back(Dim(1));
    }
  }
  return out;
}

SymbolicShape concat(const std::vector<SymbolicShape>& shapes,
                     std::int64_t axis) {
  return rules::concat<SymbolicShape>(shapes, axis, "concat");
}

SymbolicShape embedding(const SymbolicShape& weight, const SymbolicShape& ids) {
  TESSEL_CHECK(weight.size() == 2, BadShape, "embedding",
               "weight must be (vocab, dim), got {}", shape_string(weight));
  SymbolicShape out = ids;
  out.push_back(weight[1]);
  return out;
}

SymbolicShape attention(const SymbolicShape& q, const SymbolicShape& k,
                        const SymbolicShape& v) {
  constexpr const char* kOp = "scaled_dot_product_attention";
  TESSEL_CHECK(q.size() == 4 && k.size() == 4 && v.size() == 4, BadShape, kOp,
               "q, k and v must be (B, H, S, D), got {}, {} and {}",
               shape_string(q), shape_string(k), shape_string(v));
  TESSEL_CHECK(k[0] == q[0] && v[0] == q[0], BadShape, kOp,
               "batch extents differ: {}, {} and {}", shape_string(q),
               shape_string(k), shape_string(v));
  TESSEL_CHECK(v[1] == k[1] && v[2] == k[2], BadShape, kOp,
               "k {} and v {} need the same heads and length", shape_string(k),
               shape_string(v));
  const bool grouped =
      q[1] == k[1] || (q[1].is_constant() && k[1].is_constant() &&
                       k[1].value() >= 1 && q[1].value() % k[1].value() == 0);
  TESSEL_CHECK(grouped, BadShape, kOp,
               "{} query heads are not a multiple of {} key/value heads",
               q[1].str(), k[1].str());
  TESSEL_CHECK(k[3] == q[3], InnerDimMismatch, kOp,
               "q {} and k {} have different head dimensions", shape_string(q),
               shape_string(k));
  return {q[0], q[1], q[2], v[3]};
}

}  // namespace tessel::symbolic

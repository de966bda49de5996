// The ops' shape rules on symbolic shapes (DESIGN §3, §5): the shape a
// computation will have, and its shape errors (E2101, E2102, E2103), before
// any data exists —
//   symbolic::linear({"batch", "seq", 768}, {3072, 768})
//     -> (batch, seq, 3072)
// broadcast, matmul, concat and reshape run the very rules the eager ops
// run (src/core/shape_rules.hpp); the others restate the eager op's
// checks over symbolic extents. An extent must be provably right: "seq"
// against 768 is a mismatch, because nothing says seq == 768. bind()
// (core/symbolic_shape.hpp) turns the result into a concrete Shape.
#pragma once

#include <cstdint>
#include <vector>

#include "tessel/core/symbolic_shape.hpp"
#include "tessel/ops/conv.hpp"

namespace tessel::symbolic {

// Element-wise ops on operands of these shapes (NumPy broadcasting).
SymbolicShape broadcast(const SymbolicShape& a, const SymbolicShape& b);
SymbolicShape matmul(const SymbolicShape& a, const SymbolicShape& b);
// x[..., K] @ weight[N, K]^T.
SymbolicShape linear(const SymbolicShape& x, const SymbolicShape& weight);
SymbolicShape transpose(const SymbolicShape& s, std::int64_t dim0,
                        std::int64_t dim1);
// Every axis reversed (transpose without axes).
SymbolicShape transpose(const SymbolicShape& s);
SymbolicShape permute(const SymbolicShape& s,
                      const std::vector<std::int64_t>& dims);
// One extent may be -1 (inferred when the count divides exactly).
SymbolicShape reshape(const SymbolicShape& s, const SymbolicShape& target);
SymbolicShape flatten(const SymbolicShape& s, std::int64_t start = 0,
                      std::int64_t end = -1);
SymbolicShape unsqueeze(const SymbolicShape& s, std::int64_t axis);
// E2102 unless the extent at `axis` is 1.
SymbolicShape squeeze(const SymbolicShape& s, std::int64_t axis);
// The listed axes (each provably of extent 1, none twice).
SymbolicShape squeeze(const SymbolicShape& s,
                      const std::vector<std::int64_t>& axes);
// Indexing (Tensor::select, Tensor::slice, gather, dot): the axis `dim`
// removed (E2302 when a known extent does not hold `index`); the axis
// sliced (a known extent clamps as NumPy; a symbolic one takes the bounds
// as given, so slice of "seq" from 0 to -1 is seq - 1, and a step > 1 needs
// a known stop - start: E2102); NumPy's take, the index's shape spliced in
// at `axis`; the scalar dot of two vectors of provably equal length
// (E2103).
SymbolicShape select(const SymbolicShape& s, std::int64_t dim,
                     std::int64_t index);
SymbolicShape slice(const SymbolicShape& s, std::int64_t dim,
                    std::int64_t start, std::int64_t stop,
                    std::int64_t step = 1);
SymbolicShape gather(const SymbolicShape& x, const SymbolicShape& index,
                     std::int64_t axis = 0);
SymbolicShape dot(const SymbolicShape& a, const SymbolicShape& b);
// conv2d as the eager op takes it: NCHW input with OIHW weights, or with
// options.layout = ChannelsLast NHWC input with HWCF weights; stride,
// dilation, explicit/VALID/SAME padding and groups. Symbolic spatial
// extents need an exact division by the stride (stride 1, or e.g. 2*h
// over stride 2; E2102 otherwise); kernel extents must be known.
SymbolicShape conv2d(const SymbolicShape& x, const SymbolicShape& weight,
                     const ConvOptions& options = {});
// sum/mean/max/...: empty axes reduce everything.
SymbolicShape reduce(const SymbolicShape& s,
                     const std::vector<std::int64_t>& axes, bool keepdims);
SymbolicShape concat(const std::vector<SymbolicShape>& shapes,
                     std::int64_t axis);
// embedding(weight (vocab, dim), ids) -> (ids..., dim).
SymbolicShape embedding(const SymbolicShape& weight, const SymbolicShape& ids);
// scaled_dot_product_attention: q (B, Hq, Sq, D), k (B, Hkv, Sk, D),
// v (B, Hkv, Sk, Dv) -> (B, Hq, Sq, Dv); Hq a multiple of Hkv (provably:
// equal, or constants that divide).
SymbolicShape attention(const SymbolicShape& q, const SymbolicShape& k,
                        const SymbolicShape& v);

}  // namespace tessel::symbolic

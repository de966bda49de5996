// Each ONNX op expressed with tessel's public API, following the ONNX
// operator specification (opset of the corpus). Result dtypes are cast to
// ONNX's where tessel widens (e.g. integer sums), so comparisons are exact.
#include "onnx_ops.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessel::onnx {

const Tensor& Node::in(std::size_t i) const {
  if (!has(i))
    throw std::runtime_error("missing required input " + std::to_string(i));
  return *inputs[i];
}

std::int64_t Node::attr_int(const std::string& name,
                            std::int64_t fallback) const {
  return attributes.contains(name) ? attributes[name].get<std::int64_t>()
                                   : fallback;
}

double Node::attr_float(const std::string& name, double fallback) const {
  return attributes.contains(name) ? attributes[name].get<double>() : fallback;
}

std::string Node::attr_string(const std::string& name,
                              const std::string& fallback) const {
  return attributes.contains(name) ? attributes[name].get<std::string>()
                                   : fallback;
}

std::optional<std::vector<std::int64_t>> Node::attr_ints(
    const std::string& name) const {
  if (!attributes.contains(name)) return std::nullopt;
  return attributes[name].get<std::vector<std::int64_t>>();
}

DType dtype_of_onnx_code(std::int64_t code) {
  switch (code) {
    case 1: return DType::F32;
    case 2: return DType::U8;
    case 3: return DType::I8;
    case 4: return DType::U16;
    case 5: return DType::I16;
    case 6: return DType::I32;
    case 7: return DType::I64;
    case 9: return DType::Bool;
    case 10: return DType::F16;
    case 11: return DType::F64;
    case 12: return DType::U32;
    case 13: return DType::U64;
    case 16: return DType::BF16;
    case 17: return DType::F8E4M3FN;
    case 19: return DType::F8E5M2;
    case 21: return DType::U4;
    case 22: return DType::I4;
    default: break;
  }
  throw NotMapped("ONNX type " + std::to_string(code) +
                  " is not a tessel dtype");
}

std::optional<DType> dtype_of_onnx_name(const std::string& name) {
  static const std::map<std::string, DType> names = {
      {"float", DType::F32},
      {"double", DType::F64},
      {"float16", DType::F16},
      {"bfloat16", DType::BF16},
      {"float8e4m3fn", DType::F8E4M3FN},
      {"float8e5m2", DType::F8E5M2},
      {"int4", DType::I4},
      {"uint4", DType::U4},
      {"int8", DType::I8},
      {"int16", DType::I16},
      {"int32", DType::I32},
      {"int64", DType::I64},
      {"uint8", DType::U8},
      {"uint16", DType::U16},
      {"uint32", DType::U32},
      {"uint64", DType::U64},
      {"bool", DType::Bool},
  };
  const auto it = names.find(name);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

namespace {

std::vector<std::int64_t> ints_of(const Tensor& t) {
  const Tensor c = t.to(DType::I64).contiguous();
  return {c.const_data<std::int64_t>(),
          c.const_data<std::int64_t>() + c.numel()};
}

Axes axes_of(const std::vector<std::int64_t>& v) {
  return Axes(v.begin(), v.end());
}

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

Mapping unary(Tensor (*f)(const Tensor&)) {
  return [f](const Node& n) { return one(f(n.in(0))); };
}

// ONNX keeps the first input's dtype where tessel widens (i8 + i8) or
// computes in float.
Mapping binary_as_first(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](const Node& n) {
    return one(f(n.in(0), n.in(1)).to(n.in(0).dtype()));
  };
}

Mapping variadic(Tensor (*f)(const Tensor&, const Tensor&), bool mean = false) {
  return [f, mean](const Node& n) {
    Tensor acc = n.in(0);
    for (std::size_t i = 1; i < n.inputs.size(); ++i) acc = f(acc, n.in(i));
    if (mean) acc = div(acc, static_cast<double>(n.inputs.size()));
    return one(acc.to(n.in(0).dtype()));
  };
}

Axes reduce_axes(const Node& n, bool* noop) {
  std::vector<std::int64_t> axes;
  if (n.has(1))
    axes = ints_of(n.in(1));
  else if (auto a = n.attr_ints("axes"))
    axes = *a;
  *noop = axes.empty() && n.attr_int("noop_with_empty_axes", 0) == 1;
  return axes_of(axes);
}

Mapping reduction(Tensor (*f)(const Tensor&, Axes, bool),
                  bool keep_dtype = true) {
  return [f, keep_dtype](const Node& n) {
    bool noop = false;
    const Axes axes = reduce_axes(n, &noop);
    if (noop) return one(n.in(0));
    const Tensor r = f(n.in(0), axes, n.attr_int("keepdims", 1) != 0);
    return one(keep_dtype ? r.to(n.in(0).dtype()) : r);
  };
}

Tensor reduce_l1(const Tensor& x, Axes a, bool k) { return norm(x, 1.0, a, k); }

// ONNX (opset 18) defines max/min over an empty set as the identity, -Inf
// and +Inf; tessel refuses it (E2102), so the mapping supplies the value.
Tensor empty_or(Tensor (*f)(const Tensor&, Axes, bool), double identity,
                const Tensor& x, Axes axes, bool keep) {
  bool empty_extent = false;
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    const bool reduced =
        axes.empty() ||
        std::find_if(axes.begin(), axes.end(), [&](std::int64_t a) {
          return normalize_axis(a, x.rank(), "reduce") == d;
        }) != axes.end();
    empty_extent = empty_extent || (reduced && x.shape()[d] == 0);
  }
  if (!empty_extent) return f(x, axes, keep);
  return full(sum(zeros(x.shape()), axes, keep).shape(), identity, x.dtype());
}
Tensor reduce_max(const Tensor& x, Axes a, bool k) {
  return empty_or(max, -INFINITY, x, a, k);
}
Tensor reduce_min(const Tensor& x, Axes a, bool k) {
  return empty_or(min, INFINITY, x, a, k);
}
Tensor reduce_l2(const Tensor& x, Axes a, bool k) { return norm(x, 2.0, a, k); }

Mapping arg_reduction(bool is_max) {
  return [is_max](const Node& n) {
    const Tensor& x = n.in(0);
    const std::int64_t axis = n.attr_int("axis", 0);
    const bool keep = n.attr_int("keepdims", 1) != 0;
    if (n.attr_int("select_last_index", 0) == 0) {
      return one(is_max ? argmax(x, axis, keep) : argmin(x, axis, keep));
    }
    // The last extreme is the first one of the reversed axis.
    const std::int64_t extent =
        x.shape()[normalize_axis(axis, x.rank(), "argmax")];
    const Tensor flipped = flip(x, {axis});
    const Tensor first =
        is_max ? argmax(flipped, axis, keep) : argmin(flipped, axis, keep);
    return one(sub(full({}, extent - 1), first));
  };
}

// ONNX softmax family (opset 13): along one axis.
Mapping softmax_like(Tensor (*f)(const Tensor&, std::int64_t)) {
  return [f](const Node& n) { return one(f(n.in(0), n.attr_int("axis", -1))); };
}

// Slices with ONNX's clamping rules and negative steps.
Tensor onnx_slice(const Tensor& x, std::vector<std::int64_t> starts,
                  std::vector<std::int64_t> ends,
                  std::vector<std::int64_t> axes,
                  std::vector<std::int64_t> steps) {
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  Tensor out = x;
  for (std::size_t k = 0; k < axes.size(); ++k) {
    const auto a = normalize_axis(axes[k], x.rank(), "Slice");
    const std::int64_t n = out.shape()[a];
    const std::int64_t step = steps[k];
    std::int64_t s = starts[k] < 0 ? starts[k] + n : starts[k];
    std::int64_t e = ends[k] < 0 ? ends[k] + n : ends[k];
    std::vector<std::int64_t> positions;
    if (step > 0) {
      s = std::clamp<std::int64_t>(s, 0, n);
      e = std::clamp<std::int64_t>(e, 0, n);
      for (std::int64_t i = s; i < e; i += step) positions.push_back(i);
    } else {
      s = std::clamp<std::int64_t>(s, 0, n - 1);
      e = std::clamp<std::int64_t>(e, -1, n - 1);
      for (std::int64_t i = s; i > e; i += step) positions.push_back(i);
    }
    out = index_select(out, a, from_vector(positions));
  }
  return out;
}

Tensor cast_to(const Tensor& x, DType to, std::int64_t saturate) {
  const bool f8 = to == DType::F8E4M3FN || to == DType::F8E5M2;
  return x.to(to, {.saturate = f8 && saturate != 0});
}

std::map<std::string, Mapping> build() {
  std::map<std::string, Mapping> m;
  // Element-wise, one input.
  m["Abs"] = unary(abs);
  m["Neg"] = unary(neg);
  m["Ceil"] = unary(ceil);
  m["Floor"] = unary(floor);
  m["Round"] = unary(round);
  m["Sign"] = unary(sign);
  m["Sqrt"] = unary(sqrt);
  m["Reciprocal"] = unary(reciprocal);
  m["Exp"] = unary(exp);
  m["Log"] = unary(log);
  m["Sin"] = unary(sin);
  m["Cos"] = unary(cos);
  m["Tanh"] = unary(tanh);
  m["Sigmoid"] = unary(sigmoid);
  m["Erf"] = unary(erf);
  m["Relu"] = unary(relu);
  m["Not"] = unary(logical_not);
  m["IsNaN"] = unary(isnan);
  m["Identity"] = [](const Node& n) { return one(n.in(0)); };
  m["IsInf"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    Tensor hit = isinf(x);
    if (n.attr_int("detect_negative", 1) == 0)
      hit = logical_and(hit, gt(x, 0.0));
    if (n.attr_int("detect_positive", 1) == 0)
      hit = logical_and(hit, lt(x, 0.0));
    return one(hit);
  };
  m["LeakyRelu"] = [](const Node& n) {
    return one(
        leaky_relu(n.in(0), n.attr_float("alpha", 0.01)).to(n.in(0).dtype()));
  };
  m["Elu"] = [](const Node& n) {
    return one(elu(n.in(0), n.attr_float("alpha", 1.0)).to(n.in(0).dtype()));
  };
  m["Selu"] = [](const Node& n) {
    const double alpha = n.attr_float("alpha", 1.67326319217681884765625);
    const double gamma = n.attr_float("gamma", 1.05070102214813232421875);
    const Tensor& x = n.in(0);
    const Tensor neg_part = mul(expm1(x), alpha);
    return one(mul(where(gt(x, 0.0), x, neg_part), gamma).to(x.dtype()));
  };
  m["Gelu"] = [](const Node& n) {
    const bool tanh_form = n.attr_string("approximate", "none") == "tanh";
    return one(gelu(n.in(0), tanh_form ? GeluApproximation::Tanh
                                       : GeluApproximation::None));
  };
  m["Clip"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const Tensor lo = n.has(1) ? *n.inputs[1] : Tensor();
    const Tensor hi = n.has(2) ? *n.inputs[2] : Tensor();
    return one(clip(x, lo, hi).to(x.dtype()));
  };
  m["Cast"] = [](const Node& n) {
    return one(cast_to(n.in(0), dtype_of_onnx_code(n.attr_int("to", 1)),
                       n.attr_int("saturate", 1)));
  };
  m["CastLike"] = [](const Node& n) {
    return one(cast_to(n.in(0), n.in(1).dtype(), n.attr_int("saturate", 1)));
  };
  // Element-wise, two or more inputs.
  m["Add"] = binary_as_first(add);
  m["Sub"] = binary_as_first(sub);
  m["Mul"] = binary_as_first(mul);
  m["Div"] = [](const Node& n) {
    const Tensor& a = n.in(0);
    // Integer Div truncates toward zero; f64 holds every operand exactly.
    if (!is_floating_point(a.dtype())) {
      return one(
          trunc(div(a.to(DType::F64), n.in(1).to(DType::F64))).to(a.dtype()));
    }
    return one(div(a, n.in(1)).to(a.dtype()));
  };
  m["Pow"] = binary_as_first(pow);
  m["Equal"] = [](const Node& n) { return one(eq(n.in(0), n.in(1))); };
  m["Greater"] = [](const Node& n) { return one(gt(n.in(0), n.in(1))); };
  m["GreaterOrEqual"] = [](const Node& n) { return one(ge(n.in(0), n.in(1))); };
  m["Less"] = [](const Node& n) { return one(lt(n.in(0), n.in(1))); };
  m["LessOrEqual"] = [](const Node& n) { return one(le(n.in(0), n.in(1))); };
  m["And"] = [](const Node& n) { return one(logical_and(n.in(0), n.in(1))); };
  m["Or"] = [](const Node& n) { return one(logical_or(n.in(0), n.in(1))); };
  m["Xor"] = [](const Node& n) { return one(logical_xor(n.in(0), n.in(1))); };
  m["Max"] = variadic(maximum);
  m["Min"] = variadic(minimum);
  m["Sum"] = variadic(add);
  m["Mean"] = variadic(add, true);
  m["Where"] = [](const Node& n) {
    return one(where(n.in(0), n.in(1), n.in(2)));
  };
  // Reductions.
  m["ReduceSum"] = reduction(sum);
  m["ReduceMean"] = reduction(mean);
  m["ReduceProd"] = reduction(prod);
  m["ReduceMax"] = reduction(reduce_max);
  m["ReduceMin"] = reduction(reduce_min);
  m["ReduceSumSquare"] = reduction(sum_squares);
  m["ReduceL1"] = reduction(reduce_l1);
  m["ReduceL2"] = reduction(reduce_l2);
  m["ReduceLogSumExp"] = reduction(logsumexp);
  m["ArgMax"] = arg_reduction(true);
  m["ArgMin"] = arg_reduction(false);
  m["CumSum"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const std::int64_t axis = ints_of(n.in(1)).at(0);
    return one(cumsum(x, axis, n.attr_int("exclusive", 0) != 0,
                      n.attr_int("reverse", 0) != 0)
                   .to(x.dtype()));
  };
  m["Softmax"] = softmax_like(softmax);
  m["LogSoftmax"] = softmax_like(log_softmax);
  m["Hardmax"] = softmax_like(hardmax);
  // Shapes and layout.
  m["Shape"] = [](const Node& n) {
    const auto rank = n.in(0).rank();
    std::int64_t start = n.attr_int("start", 0);
    std::int64_t end = n.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<std::int64_t>(start, 0, rank);
    end = std::clamp<std::int64_t>(end, 0, rank);
    std::vector<std::int64_t> dims;
    for (std::int64_t d = start; d < end; ++d)
      dims.push_back(n.in(0).shape()[d]);
    return one(from_vector(dims));
  };
  m["Size"] = [](const Node& n) {
    return one(full({}, n.in(0).numel(), DType::I64));
  };
  m["Reshape"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    std::vector<std::int64_t> shape = ints_of(n.in(1));
    if (n.attr_int("allowzero", 0) == 0) {
      for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0) shape[d] = x.shape()[d];
      }
    }
    return one(x.reshape(Shape(shape)));
  };
  m["Flatten"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const std::int64_t axis = n.attr_int("axis", 1);
    const std::int64_t a = axis < 0 ? axis + x.rank() : axis;
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < a; ++d) outer *= x.shape()[d];
    return one(
        x.reshape({outer, x.numel() / std::max<std::int64_t>(outer, 1)}));
  };
  m["Transpose"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    std::vector<std::int64_t> perm(static_cast<std::size_t>(x.rank()));
    std::iota(perm.rbegin(), perm.rend(), 0);
    if (auto p = n.attr_ints("perm")) perm = *p;
    return one(x.permute(std::span<const std::int64_t>(perm)).contiguous());
  };
  m["Squeeze"] = [](const Node& n) {
    Tensor x = n.in(0);
    if (!n.has(1)) return one(x.squeeze());
    auto axes = ints_of(n.in(1));
    for (auto& a : axes) a = normalize_axis(a, x.rank(), "Squeeze");
    std::sort(axes.rbegin(), axes.rend());
    for (auto a : axes) x = x.squeeze(a);
    return one(x);
  };
  m["Unsqueeze"] = [](const Node& n) {
    Tensor x = n.in(0);
    auto axes = ints_of(n.in(1));
    const auto rank = x.rank() + static_cast<std::int64_t>(axes.size());
    for (auto& a : axes) a = normalize_axis(a, rank, "Unsqueeze");
    std::sort(axes.begin(), axes.end());
    for (auto a : axes) x = x.unsqueeze(a);
    return one(x);
  };
  m["Expand"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const Shape target = broadcast_shapes(x.shape(), Shape(ints_of(n.in(1))));
    return one(x.expand(target).contiguous());
  };
  m["Concat"] = [](const Node& n) {
    std::vector<Tensor> parts;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) parts.push_back(n.in(i));
    return one(concat(parts, n.attr_int("axis", 0)));
  };
  m["Split"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const std::int64_t axis = n.attr_int("axis", 0);
    const auto outputs = static_cast<std::int64_t>(n.outputs);
    std::vector<std::int64_t> sizes;
    if (n.has(1)) {
      sizes = ints_of(n.in(1));
    } else if (auto s = n.attr_ints("split")) {
      sizes = *s;
    } else {
      // Equal pieces of ceil(extent / outputs), the last one smaller.
      const std::int64_t extent =
          x.shape()[normalize_axis(axis, x.rank(), "Split")];
      const std::int64_t step = (extent + outputs - 1) / outputs;
      for (std::int64_t at = 0; at < extent; at += step)
        sizes.push_back(std::min(step, extent - at));
    }
    auto pieces = split(x, sizes, axis);
    for (auto& p : pieces) p = p.contiguous();
    return pieces;
  };
  m["Slice"] = [](const Node& n) {
    return one(
        onnx_slice(n.in(0), ints_of(n.in(1)), ints_of(n.in(2)),
                   n.has(3) ? ints_of(n.in(3)) : std::vector<std::int64_t>{},
                   n.has(4) ? ints_of(n.in(4)) : std::vector<std::int64_t>{}));
  };
  m["Tile"] = [](const Node& n) {
    return one(tile(n.in(0), ints_of(n.in(1))));
  };
  m["Trilu"] = [](const Node& n) {
    const std::int64_t k = n.has(1) ? ints_of(n.in(1)).at(0) : 0;
    return one(n.attr_int("upper", 1) != 0 ? triu(n.in(0), k)
                                           : tril(n.in(0), k));
  };
  m["Pad"] = [](const Node& n) {
    const Tensor& x = n.in(0);
    const auto pads = ints_of(n.in(1));
    std::vector<std::int64_t> axes(static_cast<std::size_t>(x.rank()));
    std::iota(axes.begin(), axes.end(), 0);
    if (n.has(3)) axes = ints_of(n.in(3));
    std::vector<std::pair<std::int64_t, std::int64_t>> per_axis(
        static_cast<std::size_t>(x.rank()));
    for (std::size_t k = 0; k < axes.size(); ++k) {
      const auto a =
          static_cast<std::size_t>(normalize_axis(axes[k], x.rank(), "Pad"));
      per_axis[a] = {pads[k], pads[k + axes.size()]};
    }
    const std::string mode = n.attr_string("mode", "constant");
    const PadMode pm = mode == "reflect" ? PadMode::Reflect
                       : mode == "edge"  ? PadMode::Edge
                       : mode == "wrap"  ? PadMode::Wrap
                                         : PadMode::Constant;
    const Scalar value = n.has(2) ? n.in(2).item_scalar() : Scalar(0);
    return one(pad(x, per_axis, pm, value));
  };
  m["Range"] = [](const Node& n) {
    const Tensor& start = n.in(0);
    return one(arange(start.item_scalar(), n.in(1).item_scalar(),
                      n.in(2).item_scalar(), start.dtype()));
  };
  // Indexing.
  m["Gather"] = [](const Node& n) {
    return one(gather(n.in(0), n.in(1), n.attr_int("axis", 0)));
  };
  m["GatherElements"] = [](const Node& n) {
    return one(gather_elements(n.in(0), n.in(1), n.attr_int("axis", 0)));
  };
  m["GatherND"] = [](const Node& n) {
    return one(gather_nd(n.in(0), n.in(1), n.attr_int("batch_dims", 0)));
  };
  m["ScatterElements"] = [](const Node& n) {
    const std::string r = n.attr_string("reduction", "none");
    const ScatterReduce reduce = r == "add"   ? ScatterReduce::Add
                                 : r == "mul" ? ScatterReduce::Mul
                                 : r == "max" ? ScatterReduce::Max
                                 : r == "min" ? ScatterReduce::Min
                                              : ScatterReduce::None;
    return one(
        scatter(n.in(0), n.attr_int("axis", 0), n.in(1), n.in(2), reduce));
  };
  m["TopK"] = [](const Node& n) {
    const auto k = ints_of(n.in(1)).at(0);
    const TopK r =
        topk(n.in(0), k, n.attr_int("axis", -1), n.attr_int("largest", 1) != 0,
             n.attr_int("sorted", 1) != 0);
    return std::vector<Tensor>{r.values, r.indices};
  };
  // Linear algebra.
  m["MatMul"] = [](const Node& n) {
    return one(matmul(n.in(0), n.in(1)).to(n.in(0).dtype()));
  };
  m["Gemm"] = [](const Node& n) {
    Tensor a = n.in(0), b = n.in(1);
    if (n.attr_int("transA", 0) != 0) a = a.transpose(0, 1);
    if (n.attr_int("transB", 0) != 0) b = b.transpose(0, 1);
    Tensor y = mul(matmul(a, b), n.attr_float("alpha", 1.0));
    if (n.has(2)) y = add(y, mul(n.in(2), n.attr_float("beta", 1.0)));
    return one(y.to(n.in(0).dtype()));
  };
  m["Einsum"] = [](const Node& n) {
    std::vector<Tensor> operands;
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      operands.push_back(n.in(i));
    return one(einsum(n.attr_string("equation", ""), operands));
  };
  m["MatMulInteger"] = [](const Node& n) {
    // (a - a_zero) @ (b - b_zero) in i32; the zero points are per tensor
    // here (rank <= 1).
    const Tensor a = n.has(2)
                         ? sub(n.in(0).to(DType::I32), n.in(2).to(DType::I32))
                         : n.in(0).to(DType::I32);
    const Tensor b = n.has(3)
                         ? sub(n.in(1).to(DType::I32), n.in(3).to(DType::I32))
                         : n.in(1).to(DType::I32);
    return one(matmul(a, b));
  };
  add_nn_mappings(m);
  return m;
}

}  // namespace

const std::map<std::string, Mapping>& mappings() {
  static const std::map<std::string, Mapping> table = build();
  return table;
}

}  // namespace tessel::onnx

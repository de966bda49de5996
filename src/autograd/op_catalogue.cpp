// The op catalogue (tessel/autograd/op_catalogue.hpp): the element-wise
// tables turned into rows, one call per other op, and the probe that
// measures which dtypes each admits.
#include "tessel/autograd/op_catalogue.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "autograd/elementwise_gradients.hpp"
#include "tessel/tessel.hpp"

namespace tessel {

namespace {

// The probe operand's value: a Tensor for Tensor calls, the Variable's
// value for Variable calls (for operands that are Tensors in both).
const Tensor& tensor_of(const Tensor& x) { return x; }
const Tensor& tensor_of(const Variable& x) { return x.value(); }

Tensor i64s(std::initializer_list<std::int64_t> values, Shape shape) {
  return from_vector<std::int64_t>(values, std::move(shape));
}

// A 4-D (1, 1, 2, 2) view of the 2x2 probe operand: one image, one
// channel.
template <class V>
V image(const V& x) {
  return x.reshape({1, 1, 2, 2});
}

PoolOptions pool_1x1() {
  PoolOptions o;
  o.kernel = {1, 1};
  return o;
}

struct Row {
  const char* name;
  const char* core_v1;  // nullptr when not in Core v1
  const char* kind;
  int operands;
  int optional_operands;
  bool variadic;
  bool differentiable;
  std::function<void(const Tensor&)> run;
};

// A row from a call written once as a generic lambda over the operand type:
// it runs on Tensors for the dtype probe and is differentiable when it also
// accepts a Variable (the trailing decltype makes an absent overload a
// substitution failure, not an error).
template <class Call>
Row row(const char* name, const char* core_v1, const char* kind, int operands,
        int optional_operands, bool variadic, Call call) {
  return {name,
          core_v1,
          kind,
          operands,
          optional_operands,
          variadic,
          std::is_invocable_v<Call, const Variable&>,
          [call](const Tensor& x) { (void)call(x); }};
}

#define TESSEL_CALL(expr) [](const auto& x) -> decltype(expr) { return expr; }
#define TESSEL_ROW(name, core, kind, operands, expr) \
  row(name, core, kind, operands, 0, false, TESSEL_CALL(expr))
#define TESSEL_ROW_OPTIONAL(name, core, kind, operands, optional, expr) \
  row(name, core, kind, operands, optional, false, TESSEL_CALL(expr))
#define TESSEL_ROW_VARIADIC(name, kind, expr) \
  row(name, nullptr, kind, 1, 0, true, TESSEL_CALL(expr))

std::vector<Row> other_rows() {
  return {
      // Views and shape edits.
      TESSEL_ROW("reshape", "reshape", "view", 1, x.reshape({4})),
      TESSEL_ROW("transpose", "transpose", "view", 1, x.transpose()),
      TESSEL_ROW("permute", nullptr, "view", 1, x.permute({1, 0})),
      TESSEL_ROW("unsqueeze", "expand_dims", "view", 1, x.unsqueeze(0)),
      TESSEL_ROW("squeeze", "squeeze", "view", 1, x.unsqueeze(0).squeeze({0})),
      TESSEL_ROW("select", "index", "view", 1, x.select(0, 1)),
      TESSEL_ROW("slice", "slice", "view", 1, x.slice(0, 0, 1)),
      TESSEL_ROW("expand", nullptr, "view", 1,
                 x.unsqueeze(0).expand({3, 2, 2})),
      TESSEL_ROW("flatten", nullptr, "view", 1, x.flatten()),
      TESSEL_ROW("contiguous", nullptr, "view", 1, x.transpose().contiguous()),
      // Reductions and scans.
      TESSEL_ROW("sum", "sum", "reduction", 1, sum(x)),
      TESSEL_ROW("mean", "mean", "reduction", 1, mean(x)),
      TESSEL_ROW("prod", nullptr, "reduction", 1, prod(x)),
      TESSEL_ROW("max", nullptr, "reduction", 1, max(x)),
      TESSEL_ROW("min", nullptr, "reduction", 1, min(x)),
      TESSEL_ROW("var", nullptr, "reduction", 1, var(x)),
      TESSEL_ROW("std", nullptr, "reduction", 1, std(x)),
      TESSEL_ROW("norm", nullptr, "reduction", 1, norm(x)),
      TESSEL_ROW("sum_squares", nullptr, "reduction", 1, sum_squares(x)),
      TESSEL_ROW("logsumexp", nullptr, "reduction", 1, logsumexp(x)),
      TESSEL_ROW("any", nullptr, "reduction", 1, any(x)),
      TESSEL_ROW("all", nullptr, "reduction", 1, all(x)),
      TESSEL_ROW("argmax", nullptr, "reduction", 1, argmax(x)),
      TESSEL_ROW("argmin", nullptr, "reduction", 1, argmin(x)),
      TESSEL_ROW("softmax", nullptr, "reduction", 1, softmax(x)),
      TESSEL_ROW("log_softmax", nullptr, "reduction", 1, log_softmax(x)),
      TESSEL_ROW("cumsum", nullptr, "scan", 1, cumsum(x, 0)),
      TESSEL_ROW("cumprod", nullptr, "scan", 1, cumprod(x, 0)),
      TESSEL_ROW("equal", nullptr, "comparison", 2, equal(x, x)),
      TESSEL_ROW("allclose", nullptr, "comparison", 2, allclose(x, x)),
      // Indexing, joining and reordering.
      TESSEL_ROW("gather", "gather", "indexing", 2,
                 gather(x, i64s({1, 0, 1}, {3}))),
      TESSEL_ROW("index_select", nullptr, "indexing", 2,
                 index_select(x, 1, i64s({1}, {1}))),
      TESSEL_ROW("gather_elements", nullptr, "indexing", 2,
                 gather_elements(x, i64s({1, 0, 0, 1}, {2, 2}), 0)),
      TESSEL_ROW("take_along_axis", nullptr, "indexing", 2,
                 take_along_axis(x, i64s({1, 0}, {2, 1}), 1)),
      TESSEL_ROW("gather_nd", nullptr, "indexing", 2,
                 gather_nd(x, i64s({0, 1}, {1, 2}))),
      TESSEL_ROW("scatter", nullptr, "indexing", 3,
                 scatter(x, 0, i64s({1, 0, 0, 1}, {2, 2}), x)),
      TESSEL_ROW("scatter_add", nullptr, "indexing", 3,
                 scatter_add(x, 0, i64s({1, 0, 0, 1}, {2, 2}), x)),
      TESSEL_ROW("masked_fill", nullptr, "indexing", 2,
                 masked_fill(x, eye(2, std::nullopt, DType::Bool), 0)),
      TESSEL_ROW("where", nullptr, "indexing", 3,
                 where(eye(2, std::nullopt, DType::Bool), x, x)),
      TESSEL_ROW("nonzero", nullptr, "indexing", 1, nonzero(x)),
      TESSEL_ROW("one_hot", nullptr, "indexing", 1, one_hot(x, 3)),
      TESSEL_ROW("searchsorted", nullptr, "indexing", 2,
                 searchsorted(x.flatten(), x.flatten())),
      TESSEL_ROW_VARIADIC("concat", "joining",
                          concat(std::vector<std::decay_t<decltype(x)>>{x, x})),
      TESSEL_ROW_VARIADIC("stack", "joining",
                          stack(std::vector<std::decay_t<decltype(x)>>{x, x})),
      TESSEL_ROW("split", nullptr, "joining", 1, split(x, {1, 1})),
      TESSEL_ROW("chunk", nullptr, "joining", 1, chunk(x, 2)),
      TESSEL_ROW("pad", nullptr, "reordering", 1, pad(x, {{1, 0}})),
      TESSEL_ROW("tile", nullptr, "reordering", 1, tile(x, {2})),
      TESSEL_ROW("repeat", nullptr, "reordering", 1, repeat(x, 2)),
      TESSEL_ROW("flip", nullptr, "reordering", 1, flip(x)),
      TESSEL_ROW("roll", nullptr, "reordering", 1, roll(x, {1})),
      TESSEL_ROW("tril", nullptr, "reordering", 1, tril(x)),
      TESSEL_ROW("triu", nullptr, "reordering", 1, triu(x)),
      TESSEL_ROW("sort", nullptr, "sorting", 1, sort(x)),
      TESSEL_ROW("argsort", nullptr, "sorting", 1, argsort(x)),
      TESSEL_ROW("topk", nullptr, "sorting", 1, topk(x, 1)),
      TESSEL_ROW_OPTIONAL("clip", nullptr, "element-wise", 1, 0,
                          clip(x, Scalar(0), Scalar(1))),
      // Linear algebra.
      TESSEL_ROW("matmul", "matmul", "linear algebra", 2, matmul(x, x)),
      TESSEL_ROW("dot", "dot", "linear algebra", 2,
                 dot(x.flatten(), x.flatten())),
      TESSEL_ROW("outer", nullptr, "linear algebra", 2,
                 outer(x.flatten(), x.flatten())),
      TESSEL_ROW_OPTIONAL("linear", nullptr, "linear algebra", 2, 1,
                          linear(x, x)),
      TESSEL_ROW("hadamard_transform", nullptr, "linear algebra", 1,
                 hadamard_transform(x)),
      TESSEL_ROW_VARIADIC(
          "einsum", "linear algebra",
          einsum("ij,jk->ik", std::vector<std::decay_t<decltype(x)>>{x, x})),
      TESSEL_ROW("linalg.cholesky", nullptr, "decomposition", 1,
                 linalg::cholesky(x)),
      TESSEL_ROW("linalg.qr", nullptr, "decomposition", 1, linalg::qr(x)),
      TESSEL_ROW("linalg.eigh", nullptr, "decomposition", 1, linalg::eigh(x)),
      TESSEL_ROW("linalg.eigvalsh", nullptr, "decomposition", 1,
                 linalg::eigvalsh(x)),
      TESSEL_ROW("linalg.svd", nullptr, "decomposition", 1, linalg::svd(x)),
      TESSEL_ROW("linalg.svdvals", nullptr, "decomposition", 1,
                 linalg::svdvals(x)),
      TESSEL_ROW("linalg.solve", nullptr, "decomposition", 2,
                 linalg::solve(x, x)),
      TESSEL_ROW("linalg.inv", nullptr, "decomposition", 1, linalg::inv(x)),
      TESSEL_ROW("linalg.det", nullptr, "decomposition", 1, linalg::det(x)),
      TESSEL_ROW("linalg.slogdet", nullptr, "decomposition", 1,
                 linalg::slogdet(x)),
      // Convolution, pooling, normalisation, attention, embeddings.
      TESSEL_ROW_OPTIONAL("conv2d", "conv2d", "convolution", 2, 1,
                          conv2d(image(x), image(x))),
      TESSEL_ROW_OPTIONAL("conv_transpose2d", nullptr, "convolution", 2, 1,
                          conv_transpose2d(image(x), image(x))),
      TESSEL_ROW("max_pool2d", nullptr, "pooling", 1,
                 max_pool2d(image(x), pool_1x1())),
      TESSEL_ROW("avg_pool2d", nullptr, "pooling", 1,
                 avg_pool2d(image(x), pool_1x1())),
      TESSEL_ROW("global_avg_pool", nullptr, "pooling", 1,
                 global_avg_pool(image(x))),
      TESSEL_ROW_OPTIONAL("layer_norm", nullptr, "normalisation", 1, 2,
                          layer_norm(x)),
      TESSEL_ROW_OPTIONAL("rms_norm", nullptr, "normalisation", 1, 1,
                          rms_norm(x)),
      TESSEL_ROW_OPTIONAL("group_norm", nullptr, "normalisation", 1, 2,
                          group_norm(image(x), 1)),
      TESSEL_ROW_OPTIONAL("instance_norm", nullptr, "normalisation", 1, 2,
                          instance_norm(image(x))),
      TESSEL_ROW_OPTIONAL(
          "batch_norm", nullptr, "normalisation", 3, 2,
          batch_norm(image(x), tensor_of(x).reshape({4}).slice(0, 0, 1),
                     tensor_of(x).reshape({4}).slice(0, 0, 1))),
      TESSEL_ROW("scaled_dot_product_attention", nullptr, "attention", 3,
                 scaled_dot_product_attention(image(x), image(x), image(x))),
      TESSEL_ROW("embedding", nullptr, "embedding", 2,
                 embedding(x, i64s({1, 0}, {2}))),
      TESSEL_ROW("rope", nullptr, "embedding", 2,
                 rope(image(x), i64s({0, 1}, {2}))),
      // Fourier transforms and complex parts.
      TESSEL_ROW("fft.fft", nullptr, "fft", 1, fft::fft(x)),
      TESSEL_ROW("fft.ifft", nullptr, "fft", 1, fft::ifft(x)),
      TESSEL_ROW("fft.rfft", nullptr, "fft", 1, fft::rfft(x)),
      TESSEL_ROW("fft.irfft", nullptr, "fft", 1, fft::irfft(x)),
      TESSEL_ROW("fft.hfft", nullptr, "fft", 1, fft::hfft(x)),
      TESSEL_ROW("fft.ihfft", nullptr, "fft", 1, fft::ihfft(x)),
      TESSEL_ROW("fft.fftn", nullptr, "fft", 1, fft::fftn(x)),
      TESSEL_ROW("real", nullptr, "complex", 1, real(x)),
      TESSEL_ROW("imag", nullptr, "complex", 1, imag(x)),
      TESSEL_ROW("conj", nullptr, "complex", 1, conj(x)),
      TESSEL_ROW("view_as_real", nullptr, "complex", 1, view_as_real(x)),
      TESSEL_ROW("make_complex", nullptr, "complex", 2, make_complex(x, x)),
  };
}

#undef TESSEL_ROW_VARIADIC
#undef TESSEL_ROW_OPTIONAL
#undef TESSEL_ROW
#undef TESSEL_CALL

// The seed's order of its 17 operators.
constexpr std::array<const char*, 17> kCoreV1Order = {
    "relu",  "add",     "sub",       "mul",         "div",     "sum",
    "mean",  "reshape", "transpose", "expand_dims", "squeeze", "index",
    "slice", "gather",  "matmul",    "dot",         "conv2d"};

// An element-wise row's Core v1 name (the seed names those as tessel does).
const char* core_v1_name(std::string_view name) {
  for (const char* core : kCoreV1Order) {
    if (name == core) return core;
  }
  return nullptr;
}

// The value dtypes a call admits: it runs on eye(2) of each (identity is
// invertible and positive definite, so decompositions succeed wherever
// they admit the dtype). E2201 is "not admitted"; any other error is a
// wrong probe call and propagates.
std::vector<DType> admitted_dtypes(
    const std::function<void(const Tensor&)>& run, const char* name) {
  std::vector<DType> admitted;
  for (const DType d : catalogue_dtypes()) {
    const Tensor x = eye(2).to(d);
    try {
      run(x);
      admitted.push_back(d);
    } catch (const DTypeError&) {
    } catch (const Error& e) {
      // A bug in this file, not in the caller's input: no tessel code.
      throw std::logic_error(std::string("op_catalogue: the probe call of ") +
                             name + " on " + std::string(dtype_name(d)) +
                             " failed: " + e.what());
    }
  }
  return admitted;
}

std::vector<OpDescription> build_catalogue() {
  std::vector<OpDescription> out;
  auto add_row = [&](std::string name, const char* core, std::string kind,
                     int operands, int optional, bool variadic,
                     bool differentiable,
                     const std::function<void(const Tensor&)>& run) {
    OpDescription d;
    d.name = std::move(name);
    if (core != nullptr) d.core_v1 = core;
    d.kind = std::move(kind);
    d.operands = operands;
    d.optional_operands = optional;
    d.variadic = variadic;
    d.differentiable = differentiable;
    d.dtypes = admitted_dtypes(run, d.name.c_str());
    out.push_back(std::move(d));
  };
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    add_row(op_info(op).name, core_v1_name(op_info(op).name), "element-wise", 1,
            0, false, autograd::has_gradient(op),
            [op](const Tensor& x) { (void)unary(op, x, default_params(op)); });
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    add_row(op_info(op).name, core_v1_name(op_info(op).name), "element-wise", 2,
            0, false, autograd::has_gradient(op),
            [op](const Tensor& x) { (void)binary(op, x, x); });
  }
  for (const Row& r : other_rows()) {
    add_row(r.name, r.core_v1, r.kind, r.operands, r.optional_operands,
            r.variadic, r.differentiable, r.run);
  }
  return out;
}

}  // namespace

std::vector<DType> catalogue_dtypes() {
  std::vector<DType> out;
  for (const DTypeTraits& t : kDTypeTraits) {
    if (t.kind != DTypeKind::Quantized && t.bits >= 8) out.push_back(t.dtype);
  }
  return out;
}

const std::vector<OpDescription>& op_catalogue() {
  static const std::vector<OpDescription> catalogue = build_catalogue();
  return catalogue;
}

std::vector<OpDescription> core_v1_ops() {
  std::vector<OpDescription> out;
  for (const char* name : kCoreV1Order) {
    for (const OpDescription& d : op_catalogue()) {
      if (d.core_v1 == name) out.push_back(d);
    }
  }
  return out;
}

}  // namespace tessel

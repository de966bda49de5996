// The public ops of the C++ API as module functions, NumPy's argument
// names where NumPy has the function (axis, keepdims). Element-wise ops
// come from the op tables (op_list.hpp): a new row is a new function here
// without touching this file. Large inputs run with the GIL released.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

bool large(const Tensor& t) { return t.numel() >= kReleaseGilElements; }

// The op as a module function and as a Tensor method (t.sum(axis=1) is
// tessel.sum(t, axis=1), NumPy's and PyTorch's two spellings). `first`
// annotates the tensor parameter, which the method form takes as self.
template <class F, class First, class... Rest>
void def_both(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F&& f,
              const First& first, const Rest&... rest) {
  m.def(name, f, first, rest...);
  cls.def(name, f, rest...);
}

template <class Body>
Tensor run(const Tensor& x, Body&& body) {
  return without_gil_if(large(x), std::forward<Body>(body));
}

std::vector<Tensor> to_tensors(nb::handle sequence) {
  std::vector<Tensor> tensors;
  for (nb::handle item : nb::borrow<nb::sequence>(sequence))
    tensors.push_back(to_tensor(item));
  return tensors;
}

// Ints that may be negative (shifts, reshape's -1), as a vector: the
// shape reader without its extent check.
std::vector<std::int64_t> to_int_vector(nb::handle value) {
  const Shape s = to_shape(value, /*allow_inferred=*/true);
  return {s.begin(), s.end()};
}

// A binary op on two operands of which either may be a Python scalar.
Tensor binary_any(BinaryOp op, nb::handle a, nb::handle b) {
  const BinaryOverloads& overloads = binary_overloads(op);
  if (is_python_scalar(b) && !is_python_scalar(a)) {
    const Tensor x = to_tensor(a);
    const Scalar s = to_scalar(b);
    return run(x, [&] { return overloads.tensor_scalar(x, s); });
  }
  if (is_python_scalar(a) && !is_python_scalar(b)) {
    const Tensor y = to_tensor(b);
    const Scalar s = to_scalar(a);
    return run(y, [&] { return overloads.scalar_tensor(s, y); });
  }
  const Tensor x = to_tensor(a);
  const Tensor y = to_tensor(b);
  return without_gil_if(large(x) || large(y),
                        [&] { return binary_standard(op, x, y); });
}

void bind_elementwise(nb::module_& m, nb::class_<Tensor>& cls) {
#define TESSEL_BIND_UNARY(e, name, result, inputs, kind, kernel)      \
  if (std::string_view(#kind) == "Plain") {                           \
    def_both(                                                         \
        m, cls, #name,                                                \
        [](nb::handle x) {                                            \
          const Tensor t = to_tensor(x);                              \
          return run(t, [&] {                                         \
            return unary(UnaryOp::e, t, default_params(UnaryOp::e));  \
          });                                                         \
        },                                                            \
        nb::arg("x"), "Element-wise " #name " (tessel::" #name ")."); \
  }
  TESSEL_FOR_EACH_UNARY_OP(TESSEL_BIND_UNARY)
#undef TESSEL_BIND_UNARY

  m.def(
      "leaky_relu",
      [](nb::handle x, double slope) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return leaky_relu(t, slope); });
      },
      nb::arg("x"),
      nb::arg("negative_slope") = default_params(UnaryOp::LeakyRelu).a,
      "x where x > 0, negative_slope * x elsewhere.");
  m.def(
      "elu",
      [](nb::handle x, double alpha) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return elu(t, alpha); });
      },
      nb::arg("x"), nb::arg("alpha") = default_params(UnaryOp::Elu).a,
      "x where x > 0, alpha * (exp(x) - 1) elsewhere.");
  m.def(
      "gelu",
      [](nb::handle x, const std::string& approximate) {
        const Tensor t = to_tensor(x);
        if (approximate != "none" && approximate != "tanh") {
          throw_error(ErrorCode::BadShape,
                      "[gelu] approximate must be 'none' or 'tanh', got '" +
                          approximate + "'");
        }
        const auto mode = approximate == "tanh" ? GeluApproximation::Tanh
                                                : GeluApproximation::None;
        return run(t, [&] { return gelu(t, mode); });
      },
      nb::arg("x"), nb::arg("approximate") = "none",
      "x * Phi(x) with the exact normal CDF (approximate='tanh' for the tanh "
      "form).");
  m.def(
      "gelu_tanh",
      [](nb::handle x) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return gelu_tanh(t); });
      },
      nb::arg("x"), "GELU with the tanh approximation.");
  m.def(
      "softplus",
      [](nb::handle x, double beta, double threshold) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return softplus(t, beta, threshold); });
      },
      nb::arg("x"), nb::arg("beta") = default_params(UnaryOp::Softplus).a,
      nb::arg("threshold") = default_params(UnaryOp::Softplus).b,
      "log(1 + exp(beta * x)) / beta, or x where beta * x > threshold "
      "(PyTorch's).");

#define TESSEL_BIND_BINARY(e, name, result, inputs, kind, kernel) \
  m.def(                                                          \
      #name,                                                      \
      [](nb::handle a, nb::handle b) {                            \
        return binary_any(BinaryOp::e, a, b);                     \
      },                                                          \
      nb::arg("x1"), nb::arg("x2"),                               \
      "Element-wise " #name " with broadcasting (tessel::" #name ").");
  TESSEL_FOR_EACH_BINARY_OP(TESSEL_BIND_BINARY)
#undef TESSEL_BIND_BINARY

  m.def(
      "where",
      [](nb::handle cond, nb::handle a, nb::handle b) {
        const Tensor c = to_tensor(cond);
        if (is_python_scalar(a) && is_python_scalar(b))
          return where(c, to_scalar(a), to_scalar(b));
        if (is_python_scalar(a)) return where(c, to_scalar(a), to_tensor(b));
        if (is_python_scalar(b)) return where(c, to_tensor(a), to_scalar(b));
        const Tensor xy[] = {to_tensor(a), to_tensor(b)};
        return keep_int8(where(c, xy[0], xy[1]), xy);
      },
      nb::arg("condition"), nb::arg("x1"), nb::arg("x2"),
      "condition ? x1 : x2, broadcasting.");
  def_both(
      m, cls, "clip",
      [](nb::handle x, nb::handle min, nb::handle max) {
        const Tensor t = to_tensor(x);
        if ((min.is_none() || is_python_scalar(min)) &&
            (max.is_none() || is_python_scalar(max))) {
          std::optional<Scalar> lo, hi;
          if (!min.is_none()) lo = to_scalar(min);
          if (!max.is_none()) hi = to_scalar(max);
          return run(t, [&] { return clip(t, lo, hi); });
        }
        // Tensor bounds: minimum(maximum(x, min), max), in x's dtype (the
        // array API's rule for clip).
        Tensor r = t;
        if (!min.is_none())
          r = binary_standard(BinaryOp::Maximum, r, to_tensor(min));
        if (!max.is_none())
          r = binary_standard(BinaryOp::Minimum, r, to_tensor(max));
        return r.to(t.dtype());
      },
      nb::arg("x"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(),
      "min(max(x, min), max) element-wise (NaN passes); either bound may be "
      "None; tensor bounds broadcast and the result keeps x's dtype.");
  m.def(
      "fma",
      [](nb::handle a, nb::handle b, nb::handle c) {
        return fma(to_tensor(a), to_tensor(b), to_tensor(c));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c"), "a * b + c with one rounding.");
}

void bind_reductions(nb::module_& m, nb::class_<Tensor>& cls) {
#define TESSEL_BIND_REDUCTION(name, doc)                                       \
  def_both(                                                                    \
      m, cls, #name,                                                           \
      [](nb::handle x, nb::handle axis, bool keepdims) {                       \
        const Tensor t = to_tensor(x);                                         \
        const Axes axes = to_axes(axis);                                       \
        return run(t, [&] { return tessel::name(t, axes, keepdims); });        \
      },                                                                       \
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false, \
      doc);
  TESSEL_BIND_REDUCTION(mean, "Mean over `axis`.")
  TESSEL_BIND_REDUCTION(max, "Maximum over `axis`; NaN propagates.")
  TESSEL_BIND_REDUCTION(min, "Minimum over `axis`; NaN propagates.")
  TESSEL_BIND_REDUCTION(any, "Whether any element is true (non-zero).")
  TESSEL_BIND_REDUCTION(all, "Whether every element is true (non-zero).")
  TESSEL_BIND_REDUCTION(logsumexp, "log(sum(exp(x))), computed stably.")
  TESSEL_BIND_REDUCTION(sum_squares, "Sum of x**2.")
#undef TESSEL_BIND_REDUCTION
  // sum and prod take the array API's `dtype`: the input is converted to it
  // first, so the accumulation runs in it, and the result has it.
#define TESSEL_BIND_ACCUMULATION(name, doc)                                  \
  def_both(                                                                  \
      m, cls, #name,                                                         \
      [](nb::handle x, nb::handle axis, nb::handle dtype, bool keepdims) {   \
        Tensor t = to_tensor(x);                                             \
        const Axes axes = to_axes(axis);                                     \
        if (dtype.is_none())                                                 \
          return run(t, [&] { return tessel::name(t, axes, keepdims); });    \
        const DType d = to_dtype(dtype);                                     \
        return run(                                                          \
            t, [&] { return tessel::name(t.to(d), axes, keepdims).to(d); }); \
      },                                                                     \
      nb::arg("x"), nb::arg("axis") = nb::none(),                            \
      nb::arg("dtype") = nb::none(), nb::arg("keepdims") = false, doc);
  TESSEL_BIND_ACCUMULATION(
      sum,
      "Sum over `axis` (every axis when None), accumulated in f32 or wider; "
      "integers and bool sum in int64 (uint64 for unsigned) unless `dtype` "
      "is given.")
  TESSEL_BIND_ACCUMULATION(prod, "Product over `axis`, accumulated as sum is.")
#undef TESSEL_BIND_ACCUMULATION
  def_both(
      m, cls, "var",
      [](nb::handle x, nb::handle axis, double correction, bool keepdims) {
        const Tensor t = to_tensor(x);
        const Axes axes = to_axes(axis);
        return run(t, [&] { return var(t, axes, correction, keepdims); });
      },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false,
      "Variance; correction=1 for the sample variance.");
  def_both(
      m, cls, "std",
      [](nb::handle x, nb::handle axis, double correction, bool keepdims) {
        const Tensor t = to_tensor(x);
        const Axes axes = to_axes(axis);
        return run(t,
                   [&] { return tessel::std(t, axes, correction, keepdims); });
      },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false,
      "Standard deviation; correction=1 for the sample one.");
  def_both(
      m, cls, "norm",
      [](nb::handle x, double ord, nb::handle axis, bool keepdims) {
        const Tensor t = to_tensor(x);
        const Axes axes = to_axes(axis);
        return run(t, [&] { return norm(t, ord, axes, keepdims); });
      },
      nb::arg("x"), nb::arg("ord") = 2.0, nb::arg("axis") = nb::none(),
      nb::arg("keepdims") = false, "Vector norm of order 1, 2 or inf.");
  def_both(
      m, cls, "argmax",
      [](nb::handle x, std::optional<std::int64_t> axis, bool keepdims) {
        return argmax(to_tensor(x), axis, keepdims);
      },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "Index (int64) of the first maximum along axis, or into the flattened "
      "tensor; NaN counts as the maximum.");
  def_both(
      m, cls, "argmin",
      [](nb::handle x, std::optional<std::int64_t> axis, bool keepdims) {
        return argmin(to_tensor(x), axis, keepdims);
      },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
      "Index (int64) of the first minimum along axis, or into the flattened "
      "tensor; NaN counts as the minimum.");
  def_both(
      m, cls, "cumsum",
      [](nb::handle x, std::int64_t axis, bool exclusive, bool reverse) {
        return cumsum(to_tensor(x), axis, exclusive, reverse);
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("exclusive") = false,
      nb::arg("reverse") = false,
      "Running sum along axis (exclusive: start from 0; reverse: from the "
      "end).");
  def_both(
      m, cls, "cumprod",
      [](nb::handle x, std::int64_t axis, bool exclusive, bool reverse) {
        return cumprod(to_tensor(x), axis, exclusive, reverse);
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("exclusive") = false,
      nb::arg("reverse") = false,
      "Running product along axis (exclusive: start from 1; reverse: from the "
      "end).");
  def_both(
      m, cls, "softmax",
      [](nb::handle x, std::int64_t axis) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return softmax(t, axis); });
      },
      nb::arg("x"), nb::arg("axis") = -1,
      "exp(x) / sum(exp(x)) along axis, computed stably in f32 or wider.");
  def_both(
      m, cls, "log_softmax",
      [](nb::handle x, std::int64_t axis) {
        const Tensor t = to_tensor(x);
        return run(t, [&] { return log_softmax(t, axis); });
      },
      nb::arg("x"), nb::arg("axis") = -1,
      "log(softmax(x)) along axis, computed stably.");
  m.def(
      "allclose",
      [](nb::handle a, nb::handle b, double rtol, double atol, bool equal_nan) {
        return allclose(to_tensor(a), to_tensor(b), rtol, atol, equal_nan);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rtol") = 1e-5,
      nb::arg("atol") = 1e-8, nb::arg("equal_nan") = false,
      "NumPy's allclose: |a - b| <= atol + rtol * |b| everywhere, compared in "
      "f64.");
  m.def(
      "array_equal",
      [](nb::handle a, nb::handle b) {
        return equal(to_tensor(a), to_tensor(b));
      },
      nb::arg("a"), nb::arg("b"),
      "Same shape and every element equal (NumPy's array_equal; `equal` is "
      "element-wise).");
}

void bind_linalg(nb::module_& m, nb::class_<Tensor>& cls) {
  def_both(
      m, cls, "matmul",
      [](nb::handle a, nb::handle b) {
        const Tensor xy[] = {to_tensor(a), to_tensor(b)};
        return keep_int8(
            without_gil_if(true, [&] { return matmul(xy[0], xy[1]); }), xy);
      },
      nb::arg("x1"), nb::arg("x2"),
      "NumPy's matmul: batched, broadcasting, 1-d promoted.");
  m.def(
      "dot",
      [](nb::handle a, nb::handle b) {
        return dot(to_tensor(a), to_tensor(b));
      },
      nb::arg("x1"), nb::arg("x2"),
      "Inner product of two 1-d tensors (a rank-0 result).");
  m.def(
      "outer",
      [](nb::handle a, nb::handle b) {
        const Tensor xy[] = {to_tensor(a), to_tensor(b)};
        return keep_int8(outer(xy[0], xy[1]), xy);
      },
      nb::arg("x1"), nb::arg("x2"), "Outer product of two 1-d tensors.");
  m.def(
      "linear",
      [](nb::handle x, nb::handle weight, nb::handle bias) {
        const Tensor t = to_tensor(x), w = to_tensor(weight);
        const Tensor b = bias.is_none() ? Tensor{} : to_tensor(bias);
        return without_gil_if(true, [&] { return linear(t, w, b); });
      },
      nb::arg("x"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      "x @ weight.T + bias.");
  m.def(
      "einsum",
      [](const std::string& equation, nb::args operands) {
        const std::vector<Tensor> tensors = to_tensors(operands);
        return without_gil_if(true, [&] { return einsum(equation, tensors); });
      },
      nb::arg("equation"), nb::arg("operands"),
      "Einstein summation over one or two operands ('ij,jk->ik', "
      "'bij,bkj->bik', 'ii->i').");
  m.def(
      "hadamard_transform",
      [](nb::handle x, std::int64_t block) {
        const Tensor t = to_tensor(x);
        return without_gil_if(true,
                              [&] { return hadamard_transform(t, block); });
      },
      nb::arg("x"), nb::arg("block") = 0,
      "The orthonormal Walsh-Hadamard transform of each run of `block` "
      "values along the last axis (0: the whole axis), x @ H / sqrt(block) "
      "in Sylvester's order.");
}

void bind_shape_ops(nb::module_& m, nb::class_<Tensor>& cls) {
  m.def(
      "concat",
      [](nb::handle tensors, std::optional<std::int64_t> axis) {
        std::vector<Tensor> parts = to_tensors(tensors);
        if (!axis) {
          for (Tensor& t : parts) t = t.reshape({t.numel()});
        }
        return keep_int8(concat(parts, axis.value_or(0)), parts);
      },
      nb::arg("arrays"), nb::arg("axis") = 0,
      "Joins tensors along an existing axis (flattened first when axis is "
      "None).");
  m.def(
      "stack",
      [](nb::handle tensors, std::int64_t axis) {
        const std::vector<Tensor> parts = to_tensors(tensors);
        return keep_int8(stack(parts, axis), parts);
      },
      nb::arg("arrays"), nb::arg("axis") = 0,
      "Joins tensors along a new axis.");
  m.def(
      "reshape",
      [](nb::handle x, nb::handle shape, nb::handle copy_arg) {
        // None, False or True as -1, 0, 1 (std::optional<bool> trips GCC
        // 12's maybe-uninitialized warning here).
        const int copy = copy_arg.is_none()
                             ? -1
                             : static_cast<int>(nb::cast<bool>(copy_arg));
        const Tensor t = to_tensor(x);
        // reshape may infer one extent (-1): the C++ op checks it.
        Tensor out = t.reshape(to_shape(shape, /*allow_inferred=*/true));
        const bool copied = !out.shares_storage_with(t) && t.numel() > 0;
        if (copy == 0 && copied) {
          throw_error(ErrorCode::NotContiguous,
                      "[reshape] copy=False, but the strides of the input " +
                          shape_string(t.shape()) +
                          " allow no view of the new shape");
        }
        if (copy == 1 && !copied) out = out.clone();
        return out;
      },
      nb::arg("x"), nb::arg("shape"), nb::arg("copy") = nb::none(),
      "A view with the new shape when the strides allow it, else a copy "
      "(copy=True: always a copy; copy=False: a view or E2301); one extent "
      "may be -1.");
  m.def(
      "permute_dims",
      [](nb::handle x, nb::handle axes) {
        const std::vector<std::int64_t> dims = to_int_vector(axes);
        return to_tensor(x).permute(
            std::span<const std::int64_t>(dims.data(), dims.size()));
      },
      nb::arg("x"), nb::arg("axes"),
      "A view with the axes in the given order.");
  m.def(
      "broadcast_to",
      [](nb::handle x, nb::handle shape) {
        return to_tensor(x).expand(to_shape(shape));
      },
      nb::arg("x"), nb::arg("shape"),
      "A stride-0 view broadcast to shape (NumPy's rules).");
  m.def(
      "expand_dims",
      [](nb::handle x, std::int64_t axis) {
        return to_tensor(x).unsqueeze(axis);
      },
      nb::arg("x"), nb::arg("axis") = 0,
      "A view with a new axis of extent 1 at axis.");
  m.def(
      "squeeze",
      [](nb::handle x, nb::handle axis) {
        const Tensor t = to_tensor(x);
        return axis.is_none() ? t.squeeze() : squeeze_axes(t, axis);
      },
      nb::arg("x"), nb::arg("axis") = nb::none(),
      "A view without the size-1 axes given (an int or a tuple; every "
      "size-1 axis when None); E2102 for an axis whose extent is not 1.");
  def_both(
      m, cls, "flip",
      [](nb::handle x, nb::handle axis) {
        return flip(to_tensor(x), to_axes(axis));
      },
      nb::arg("x"), nb::arg("axis") = nb::none(),
      "Reverses the order along axis (every axis when None); a copy.");
  m.def(
      "roll",
      [](nb::handle x, nb::handle shift, nb::handle axis) {
        return roll(to_tensor(x), to_int_vector(shift), to_axes(axis));
      },
      nb::arg("x"), nb::arg("shift"), nb::arg("axis") = nb::none(),
      "Shifts elements along axis cyclically (the flattened tensor when axis "
      "is None).");
  m.def(
      "tile",
      [](nb::handle x, nb::handle reps) {
        return tile(to_tensor(x), to_int_vector(reps));
      },
      nb::arg("x"), nb::arg("repetitions"),
      "Repeats the whole tensor repetitions times along each axis.");
  m.def(
      "repeat",
      [](nb::handle x, nb::handle repeats, std::optional<std::int64_t> axis) {
        const Tensor t = to_tensor(x);
        if (PyLong_Check(repeats.ptr()))
          return repeat(t, nb::cast<std::int64_t>(repeats), axis);
        const Tensor counts = to_tensor(repeats);
        if (!axis) return repeat(t.reshape({t.numel()}), counts, 0);
        return repeat(t, counts, *axis);
      },
      nb::arg("x"), nb::arg("repeats"), nb::arg("axis") = nb::none(),
      "Repeats each element along axis (the flattened tensor when None): "
      "`repeats` times, or repeats[i] times for the i-th when it is a "
      "tensor.");
  def_both(
      m, cls, "tril",
      [](nb::handle x, std::int64_t k) { return tril(to_tensor(x), k); },
      nb::arg("x"), nb::arg("k") = 0,
      "The lower triangle of the last two axes (diagonal offset k); zeros "
      "above.");
  def_both(
      m, cls, "triu",
      [](nb::handle x, std::int64_t k) { return triu(to_tensor(x), k); },
      nb::arg("x"), nb::arg("k") = 0,
      "The upper triangle of the last two axes (diagonal offset k); zeros "
      "below.");
  def_both(
      m, cls, "sort",
      [](nb::handle x, std::int64_t axis, bool descending, bool /*stable*/) {
        return sort(to_tensor(x), axis, descending);
      },
      nb::arg("x"), nb::arg("axis") = -1, nb::arg("descending") = false,
      nb::arg("stable") = true,
      "Sorted values along axis (always stable, whatever `stable` says; "
      "descending=True for largest first; NaN last).");
  def_both(
      m, cls, "argsort",
      [](nb::handle x, std::int64_t axis, bool descending, bool /*stable*/) {
        return argsort(to_tensor(x), axis, descending);
      },
      nb::arg("x"), nb::arg("axis") = -1, nb::arg("descending") = false,
      nb::arg("stable") = true,
      "Indices (int64) that sort along axis (always stable: equal elements "
      "keep their order, also when descending).");
  m.def(
      "nonzero",
      [](nb::handle x) {
        const Tensor t = to_tensor(x);
        if (t.rank() == 0) {
          throw_error(ErrorCode::BadShape,
                      "[nonzero] a rank-0 tensor has no coordinates (the "
                      "array API refuses it; use t.reshape(1))");
        }
        const Tensor coords = nonzero(t);
        nb::list columns;
        for (std::int64_t d = 0; d < t.rank(); ++d)
          columns.append(nb::cast(coords.select(1, d)));
        return nb::tuple(columns);
      },
      nb::arg("x"),
      "The coordinates of the non-zero elements, one int64 array per axis "
      "(NumPy's and the array API's nonzero); NaN counts as non-zero.");
  m.def(
      "searchsorted",
      [](nb::handle x1, nb::handle x2, const std::string& side,
         nb::handle sorter) {
        if (side != "left" && side != "right") {
          throw_error(ErrorCode::BadShape,
                      "[searchsorted] side must be 'left' or 'right', got '" +
                          side + "'");
        }
        Tensor sorted = to_tensor(x1);
        if (!sorter.is_none())
          sorted = index_select(sorted, 0, to_tensor(sorter));
        return searchsorted(
            sorted, to_tensor(x2),
            side == "left" ? SearchSide::Left : SearchSide::Right);
      },
      nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("side") = "left",
      nb::arg("sorter") = nb::none(),
      "Where each of x2 would go into the ascending 1-D x1 (x1[sorter] when "
      "given) to keep it sorted: before equal elements (side='left') or "
      "after them; int64 of x2's shape.");
  m.def(
      "gather",
      [](nb::handle x, nb::handle index, std::int64_t axis) {
        return gather(to_tensor(x), to_tensor(index), axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0,
      "Rows picked by integer indices along axis; the index shape replaces "
      "that axis.");
  m.def(
      "take",
      [](nb::handle x, nb::handle index, std::optional<std::int64_t> axis) {
        const Tensor idx = to_tensor(index);
        const Tensor t = to_tensor(x);
        if (!axis) return index_select(t.reshape({t.numel()}), 0, idx);
        return index_select(t, *axis, idx);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = nb::none(),
      "Picks `indices` (1-d) along `axis` (of the flattened tensor when "
      "None).");
  m.def(
      "take_along_axis",
      [](nb::handle x, nb::handle index, std::int64_t axis) {
        return take_along_axis(to_tensor(x), to_tensor(index), axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = -1,
      "NumPy's take_along_axis: indices of the same rank pick along axis.");
  m.def(
      "masked_fill",
      [](nb::handle x, nb::handle mask, nb::handle value) {
        return masked_fill(to_tensor(x), to_tensor(mask), to_scalar(value));
      },
      nb::arg("x"), nb::arg("mask"), nb::arg("value"),
      "value where mask is true, x elsewhere (mask broadcasts).");
}

// "NCHW"-style layouts: channels first (PyTorch, ONNX) or last (NHWC).
DataLayout to_layout(const std::string& layout) {
  if (layout == "channels_first") return DataLayout::ChannelsFirst;
  if (layout == "channels_last") return DataLayout::ChannelsLast;
  throw_error(ErrorCode::BadShape,
              "[conv] layout must be 'channels_first' or "
              "'channels_last', got '" +
                  layout + "'");
}

PadMode to_pad_mode(const std::string& mode) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "wrap") return PadMode::Wrap;
  throw_error(ErrorCode::BadShape,
              "[pad] mode must be 'constant', 'reflect', "
              "'edge' or 'wrap', got '" +
                  mode + "'");
}

std::vector<std::int64_t> optional_ints(nb::handle value) {
  return value.is_none() ? std::vector<std::int64_t>{} : to_int_vector(value);
}

void bind_more_ops(nb::module_& m) {
  m.def(
      "conv",
      [](nb::handle x, nb::handle weight, nb::handle bias, nb::handle stride,
         nb::handle padding, nb::handle dilation, std::int64_t groups,
         const std::string& layout) {
        const Tensor t = to_tensor(x), w = to_tensor(weight);
        const Tensor b = bias.is_none() ? Tensor{} : to_tensor(bias);
        ConvOptions options;
        options.stride = optional_ints(stride);
        options.padding = optional_ints(padding);
        options.dilation = optional_ints(dilation);
        options.groups = groups;
        options.layout = to_layout(layout);
        return without_gil_if(true, [&] { return conv(t, w, b, options); });
      },
      nb::arg("x"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      nb::arg("stride") = nb::none(), nb::arg("padding") = nb::none(),
      nb::arg("dilation") = nb::none(), nb::arg("groups") = 1,
      nb::arg("layout") = "channels_first",
      "N-d convolution (oneDNN): x (N, C, *spatial), weight (F, C/groups, "
      "*kernel); stride/padding/dilation per axis or one value for all.");
  for (const char* name : {"max_pool", "avg_pool"}) {
    const bool is_max = std::string(name) == "max_pool";
    m.def(
        name,
        [is_max](nb::handle x, nb::handle kernel, nb::handle stride,
                 nb::handle padding, bool ceil_mode,
                 const std::string& layout) {
          const Tensor t = to_tensor(x);
          PoolOptions options;
          options.kernel = to_int_vector(kernel);
          options.stride = optional_ints(stride);
          options.padding = optional_ints(padding);
          options.ceil_mode = ceil_mode;
          options.layout = to_layout(layout);
          return run(t, [&] {
            return is_max ? max_pool(t, options) : avg_pool(t, options);
          });
        },
        nb::arg("x"), nb::arg("kernel"), nb::arg("stride") = nb::none(),
        nb::arg("padding") = nb::none(), nb::arg("ceil_mode") = false,
        nb::arg("layout") = "channels_first",
        is_max
            ? "Max pooling over the spatial axes (stride defaults to the "
              "kernel)."
            : "Average pooling over the spatial axes (padding not counted).");
  }
  m.def(
      "pad",
      [](nb::handle x, nb::handle pad_width, const std::string& mode,
         nb::handle value) {
        std::vector<std::pair<std::int64_t, std::int64_t>> pads;
        for (nb::handle axis : nb::borrow<nb::sequence>(pad_width)) {
          const std::vector<std::int64_t> both = to_int_vector(axis);
          if (both.size() != 2) {
            throw_error(ErrorCode::BadShape,
                        "[pad] each axis needs (before, after)");
          }
          pads.emplace_back(both[0], both[1]);
        }
        return pad(to_tensor(x), pads, to_pad_mode(mode), to_scalar(value));
      },
      nb::arg("x"), nb::arg("pad_width"), nb::arg("mode") = "constant",
      nb::arg("constant_values") = 0,
      "NumPy's pad with one (before, after) pair per axis; modes constant, "
      "reflect, edge, wrap.");
  m.def(
      "split",
      [](nb::handle x, nb::handle sizes, std::int64_t axis) {
        return split(to_tensor(x), to_int_vector(sizes), axis);
      },
      nb::arg("x"), nb::arg("sizes"), nb::arg("axis") = 0,
      "Views of consecutive pieces of the given sizes along axis.");
  m.def(
      "topk",
      [](nb::handle x, std::int64_t k, std::int64_t axis, bool largest) {
        TopK result = topk(to_tensor(x), k, axis, largest);
        return nb::make_tuple(result.values, result.indices);
      },
      nb::arg("x"), nb::arg("k"), nb::arg("axis") = -1,
      nb::arg("largest") = true,
      "(values, indices) of the k largest (or smallest) along axis, sorted.");
  m.def(
      "one_hot",
      [](nb::handle indices, std::int64_t depth, nb::handle dtype) {
        return one_hot(to_tensor(indices), depth, -1, 1, 0,
                       dtype.is_none() ? DType::I64 : to_dtype(dtype));
      },
      nb::arg("indices"), nb::arg("depth"), nb::arg("dtype") = nb::none(),
      "One-hot vectors along a new last axis.");
  m.def(
      "scatter_add",
      [](nb::handle x, std::int64_t axis, nb::handle index,
         nb::handle updates) {
        return scatter_add(to_tensor(x), axis, to_tensor(index),
                           to_tensor(updates));
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("indices"), nb::arg("updates"),
      "A copy of x with updates added at indices along axis (PyTorch's "
      "scatter_add).");
  m.def(
      "scatter",
      [](nb::handle x, std::int64_t axis, nb::handle index,
         nb::handle updates) {
        return scatter(to_tensor(x), axis, to_tensor(index),
                       to_tensor(updates));
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("indices"), nb::arg("updates"),
      "A copy of x with updates written at indices along axis.");
}

void bind_nn_ops(nb::module_& m) {
  m.def(
      "layer_norm",
      [](nb::handle x, nb::handle weight, nb::handle bias, double eps) {
        const Tensor t = to_tensor(x);
        const Tensor w = weight.is_none() ? Tensor{} : to_tensor(weight);
        const Tensor b = bias.is_none() ? Tensor{} : to_tensor(bias);
        return run(t, [&] { return layer_norm(t, w, b, eps); });
      },
      nb::arg("x"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      "Normalises the last axis, then scales and shifts.");
  m.def(
      "rms_norm",
      [](nb::handle x, nb::handle weight, double eps) {
        const Tensor t = to_tensor(x);
        const Tensor w = weight.is_none() ? Tensor{} : to_tensor(weight);
        return run(t, [&] { return rms_norm(t, w, eps); });
      },
      nb::arg("x"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6,
      "x / sqrt(mean(x**2) + eps) * weight over the last axis.");
  m.def(
      "scaled_dot_product_attention",
      [](nb::handle q, nb::handle k, nb::handle v, bool is_causal) {
        const Tensor tq = to_tensor(q), tk = to_tensor(k), tv = to_tensor(v);
        AttentionOptions options;
        options.causal = is_causal;
        return without_gil_if(true, [&] {
          return scaled_dot_product_attention(tq, tk, tv, options);
        });
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"),
      nb::arg("is_causal") = false,
      "softmax(q k^T / sqrt(d)) v over (batch, heads, seq, dim); is_causal "
      "masks the future; grouped heads allowed.");
  m.def(
      "embedding",
      [](nb::handle weight, nb::handle ids) {
        return embedding(to_tensor(weight), to_tensor(ids));
      },
      nb::arg("weight"), nb::arg("ids"),
      "Rows of `weight` picked by integer `ids`.");
}

}  // namespace

void bind_ops(nb::module_& m, nb::class_<Tensor>& cls) {
  bind_elementwise(m, cls);
  bind_reductions(m, cls);
  bind_linalg(m, cls);
  bind_shape_ops(m, cls);
  bind_nn_ops(m);
  bind_more_ops(m);
}

}  // namespace tessel::python

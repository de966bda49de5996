// Autograd from Python: tessel.Variable (a tensor with a gradient and a
// place in the backward graph, the C++ Variable), the differentiable ops
// in the submodule tessel.autograd, the losses, no_grad and the
// optimisers. As in C++, a Variable is a separate type: tensors are plain
// data and never record a graph; a Tensor operand of an autograd op is a
// constant.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessel::python {

namespace {

// A Variable operand: itself, or any tensor-like value as a constant.
Variable to_variable(nb::handle value) {
  if (nb::isinstance<Variable>(value)) return nb::cast<Variable>(value);
  return Variable(to_tensor(value), false);
}

std::vector<Variable> to_variables(nb::handle sequence) {
  std::vector<Variable> out;
  for (nb::handle item : nb::borrow<nb::sequence>(sequence))
    out.push_back(to_variable(item));
  return out;
}

std::vector<Variable> parameter_list(nb::handle parameters) {
  std::vector<Variable> out;
  for (nb::handle item : nb::borrow<nb::iterable>(parameters)) {
    if (!nb::isinstance<Variable>(item)) {
      PyErr_Format(PyExc_TypeError,
                   "[optimizer] parameters must be tessel.Variable, got %s",
                   python_type_name(item).c_str());
      throw nb::python_error();
    }
    out.push_back(nb::cast<Variable>(item));
  }
  return out;
}

Reduction to_reduction(const std::string& name) {
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  if (name == "none") return Reduction::None;
  throw_error(
      ErrorCode::BadShape,
      "[loss] reduction must be 'mean', 'sum' or 'none', got '" + name + "'");
}

using VarScalarFn = Variable (*)(const Variable&, Scalar);
using ScalarVarFn = Variable (*)(Scalar, const Variable&);

struct VariableBinaryEntry {
  VarScalarFn var_scalar;
  ScalarVarFn scalar_var;
  Variable (*var_var)(const Variable&, const Variable&);
};

const VariableBinaryEntry& variable_binary(BinaryOp op) {
  static const VariableBinaryEntry entries[] = {
#define TESSEL_VARIABLE_ENTRY(e, name, result, inputs, kind, kernel) \
  {static_cast<VarScalarFn>(&tessel::name),                          \
   static_cast<ScalarVarFn>(&tessel::name),                          \
   static_cast<Variable (*)(const Variable&, const Variable&)>(      \
       &tessel::name)},
      TESSEL_FOR_EACH_BINARY_OP(TESSEL_VARIABLE_ENTRY)
#undef TESSEL_VARIABLE_ENTRY
  };
  return entries[static_cast<int>(op)];
}

Variable binary_variable(BinaryOp op, nb::handle a, nb::handle b) {
  const VariableBinaryEntry& entry = variable_binary(op);
  if (is_python_scalar(b) && !is_python_scalar(a))
    return entry.var_scalar(to_variable(a), to_scalar(b));
  if (is_python_scalar(a) && !is_python_scalar(b))
    return entry.scalar_var(to_scalar(a), to_variable(b));
  return entry.var_var(to_variable(a), to_variable(b));
}

nb::typed<nb::object, Variable> variable_operator(BinaryOp op, nb::handle self,
                                                  nb::handle other,
                                                  bool reflected) {
  if (!(nb::isinstance<Variable>(other) || nb::isinstance<Tensor>(other) ||
        is_python_scalar(other) || nb::hasattr(other, "__dlpack__"))) {
    return nb::borrow(Py_NotImplemented);
  }
  return nb::cast(reflected ? binary_variable(op, other, self)
                            : binary_variable(op, self, other));
}

Variable index_variable(const Variable& v, nb::handle key) {
  // Ints and positive-step slices: the differentiable views select and
  // slice. Anything else needs a copy and its own gradient rule.
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle item : nb::borrow<nb::tuple>(key)) items.push_back(item);
  } else {
    items.push_back(key);
  }
  Variable out = v;
  std::int64_t axis = 0;
  for (nb::handle item : items) {
    PyObject* o = item.ptr();
    if (PySlice_Check(o)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw nb::python_error();
      if (step <= 0) {
        throw_error(ErrorCode::BadShape,
                    "[Variable.__getitem__] negative steps are not "
                    "differentiable views; use autograd.flip");
      }
      PySlice_AdjustIndices(static_cast<Py_ssize_t>(out.shape()[axis]), &start,
                            &stop, step);
      out = out.slice(axis, start, stop, step);
      ++axis;
    } else if (PyIndex_Check(o) && !PyBool_Check(o)) {
      out = out.select(axis, to_index(item, "index"));
    } else if (item.is_none()) {
      out = out.unsqueeze(axis);
      ++axis;
    } else {
      throw_error(ErrorCode::BadDType,
                  "[Variable.__getitem__] only ints, slices and None "
                  "index a Variable; use autograd.gather for arrays");
    }
  }
  return out;
}

// `with tessel.no_grad():` — the C++ NoGradGuard for the block.
struct NoGrad {
  std::unique_ptr<NoGradGuard> guard;
};

void bind_variable(nb::module_& m) {
  auto cls = nb::class_<Variable>(
      m, "Variable",
      "A tensor that records the ops applied to it, for backward().");
  cls.def(
         "__init__",
         [](Variable* self, nb::handle value, bool requires_grad) {
           new (self) Variable(to_tensor(value), requires_grad);
         },
         nb::arg("value"), nb::arg("requires_grad") = false)
      .def_prop_ro("value", &Variable::value, "The current value (a Tensor).")
      .def_prop_ro(
          "grad",
          [](const Variable& v) -> nb::object {
            const Tensor& g = v.grad();
            return g.defined() ? nb::cast(g) : nb::none();
          },
          "The accumulated gradient, or None before backward().")
      .def_prop_ro("requires_grad", &Variable::requires_grad)
      .def_prop_ro("is_leaf", &Variable::is_leaf)
      .def_prop_ro(
          "shape",
          [](const Variable& v) { return nb::cast(v.value()).attr("shape"); })
      .def_prop_ro("dtype",
                   [](const Variable& v) { return dtype_object(v.dtype()); })
      .def_prop_ro("ndim", &Variable::rank)
      .def_prop_ro("size", &Variable::numel)
      .def(
          "backward",
          [](const Variable& v, nb::handle grad, bool retain_graph) {
            const Tensor g = grad.is_none() ? Tensor{} : to_tensor(grad);
            nb::gil_scoped_release release;
            v.backward(g, retain_graph);
          },
          nb::arg("grad") = nb::none(), nb::arg("retain_graph") = false,
          "Accumulates d(self)/d(leaf) into every leaf's .grad (self must be a "
          "scalar unless grad is given).")
      .def("zero_grad", &Variable::zero_grad, "Clears .grad (to None).")
      .def("detach", &Variable::detach, "The same value, cut from the graph.")
      .def(
          "item",
          [](const Variable& v) {
            return scalar_to_python(v.value().item_scalar());
          },
          "The one element of a one-element tensor as a Python number.")
      .def(
          "reshape",
          [](const Variable& v, nb::args shape) {
            return v.reshape(to_shape(
                shape.size() == 1 && !PyIndex_Check(shape[0].ptr()) ? shape[0]
                                                                    : shape,
                true));
          },
          "A view (or copy) of the variable with a new shape; differentiable.")
      .def(
          "permute",
          [](const Variable& v, nb::args dims) {
            const Shape d = to_shape(
                dims.size() == 1 && !PyIndex_Check(dims[0].ptr()) ? dims[0]
                                                                  : dims,
                true);
            return v.permute(std::span<const std::int64_t>(d.data(), d.size()));
          },
          "A view with the axes in the given order: t.permute(2, 0, 1).")
      .def("transpose", &transpose_either<Variable>,
           nb::arg("dim0") = nb::none(), nb::arg("dim1") = nb::none(),
           "A view with axes dim0 and dim1 swapped; every axis reversed when "
           "neither is given.")
      .def("unsqueeze", &Variable::unsqueeze, nb::arg("axis"),
           "A view with a new axis of extent 1 at axis.")
      .def("squeeze", &squeeze_axes<Variable>, nb::arg("axis"),
           "A view without the given size-1 axes (an int or a tuple); E2102 "
           "for an axis whose extent is not 1.")
      .def("flatten", &Variable::flatten, nb::arg("start_dim") = 0,
           nb::arg("end_dim") = -1,
           "A view (or copy) with axes start_dim..end_dim merged into one.")
      .def("contiguous", &Variable::contiguous,
           "The tensor itself when row-major, else a row-major copy.")
      .def(
          "astype",
          [](const Variable& v, nb::handle dtype) {
            return v.to(to_dtype(dtype));
          },
          "The variable cast to dtype; differentiable for float dtypes.")
      .def("__getitem__", &index_variable)
      .def("__neg__", [](const Variable& v) { return neg(v); })
      .def("__matmul__",
           [](nb::handle a, nb::handle b) {
             return matmul(to_variable(a), to_variable(b));
           })
      .def("__rmatmul__",
           [](nb::handle a, nb::handle b) {
             return matmul(to_variable(b), to_variable(a));
           })
      .def("__repr__", [](const Variable& v) {
        return "tessel.Variable(" +
               nb::cast<std::string>(nb::repr(nb::cast(v.value()))) +
               (v.requires_grad() ? ", requires_grad=True)" : ")");
      });
#define TESSEL_VARIABLE_OPERATOR(py, op)                     \
  cls.def(                                                   \
      "__" py "__",                                          \
      [](nb::handle a, nb::handle b) {                       \
        return variable_operator(BinaryOp::op, a, b, false); \
      },                                                     \
      nb::arg("other").none());                              \
  cls.def(                                                   \
      "__r" py "__",                                         \
      [](nb::handle a, nb::handle b) {                       \
        return variable_operator(BinaryOp::op, a, b, true);  \
      },                                                     \
      nb::arg("other").none());
  TESSEL_VARIABLE_OPERATOR("add", Add)
  TESSEL_VARIABLE_OPERATOR("sub", Sub)
  TESSEL_VARIABLE_OPERATOR("mul", Mul)
  TESSEL_VARIABLE_OPERATOR("truediv", Div)
  TESSEL_VARIABLE_OPERATOR("pow", Pow)
#undef TESSEL_VARIABLE_OPERATOR

  nb::class_<NoGrad>(m, "no_grad",
                     "Context manager: no graph is recorded inside.")
      .def(nb::init<>())
      .def("__enter__",
           [](NoGrad& g) { g.guard = std::make_unique<NoGradGuard>(); })
      .def("__exit__", [](NoGrad& g, nb::args) { g.guard.reset(); });
}

void bind_autograd_functions(nb::module_& ag) {
#define TESSEL_AG_UNARY(e, name, result, inputs, kind, kernel)            \
  if (std::string_view(#kind) == "Plain") {                               \
    ag.def(                                                               \
        #name, [](nb::handle x) { return tessel::name(to_variable(x)); }, \
        nb::arg("x"), "Differentiable element-wise " #name ".");          \
  }
  TESSEL_FOR_EACH_UNARY_OP(TESSEL_AG_UNARY)
#undef TESSEL_AG_UNARY
#define TESSEL_AG_BINARY(e, name, result, inputs, kind, kernel) \
  ag.def(                                                       \
      #name,                                                    \
      [](nb::handle a, nb::handle b) {                          \
        return binary_variable(BinaryOp::e, a, b);              \
      },                                                        \
      nb::arg("x1"), nb::arg("x2"),                             \
      "Differentiable element-wise " #name ", broadcasting.");
  TESSEL_FOR_EACH_BINARY_OP(TESSEL_AG_BINARY)
#undef TESSEL_AG_BINARY

#define TESSEL_AG_REDUCTION(name)                                              \
  ag.def(                                                                      \
      #name,                                                                   \
      [](nb::handle x, nb::handle axis, bool keepdims) {                       \
        return tessel::name(to_variable(x), to_axes(axis), keepdims);          \
      },                                                                       \
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false, \
      "Differentiable " #name " over axis (every axis when None).");
  TESSEL_AG_REDUCTION(sum)
  TESSEL_AG_REDUCTION(prod)
  TESSEL_AG_REDUCTION(mean)
  TESSEL_AG_REDUCTION(max)
  TESSEL_AG_REDUCTION(min)
  TESSEL_AG_REDUCTION(logsumexp)
  TESSEL_AG_REDUCTION(sum_squares)
#undef TESSEL_AG_REDUCTION
  ag.def(
      "var",
      [](nb::handle x, nb::handle axis, double correction, bool keepdims) {
        return var(to_variable(x), to_axes(axis), correction, keepdims);
      },
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
      nb::arg("keepdims") = false,
      "Differentiable variance over axis; correction=1 for the sample "
      "variance.");
  ag.def(
      "softmax",
      [](nb::handle x, std::int64_t axis) {
        return softmax(to_variable(x), axis);
      },
      nb::arg("x"), nb::arg("axis") = -1, "Differentiable softmax along axis.");
  ag.def(
      "log_softmax",
      [](nb::handle x, std::int64_t axis) {
        return log_softmax(to_variable(x), axis);
      },
      nb::arg("x"), nb::arg("axis") = -1,
      "Differentiable log-softmax along axis.");
  ag.def(
      "matmul",
      [](nb::handle a, nb::handle b) {
        const Variable x = to_variable(a), y = to_variable(b);
        nb::gil_scoped_release release;
        return matmul(x, y);
      },
      nb::arg("x1"), nb::arg("x2"), "Differentiable matmul (NumPy's rules).");
  ag.def(
      "linear",
      [](nb::handle x, nb::handle w, nb::handle b) {
        return linear(to_variable(x), to_variable(w),
                      b.is_none() ? Variable{} : to_variable(b));
      },
      nb::arg("x"), nb::arg("weight"), nb::arg("bias") = nb::none(),
      "Differentiable x @ weight.T + bias.");
  ag.def(
      "hadamard_transform",
      [](nb::handle x, std::int64_t block) {
        return hadamard_transform(to_variable(x), block);
      },
      nb::arg("x"), nb::arg("block") = 0,
      "Differentiable orthonormal Walsh-Hadamard transform over runs of "
      "the last axis (its gradient is the same transform).");
  ag.def(
      "where",
      [](nb::handle cond, nb::handle a, nb::handle b) {
        return where(to_tensor(cond), to_variable(a), to_variable(b));
      },
      nb::arg("condition"), nb::arg("x1"), nb::arg("x2"),
      "condition ? x1 : x2, differentiable in x1 and x2.");
  ag.def(
      "concat",
      [](nb::handle xs, std::int64_t axis) {
        return concat(to_variables(xs), axis);
      },
      nb::arg("tensors"), nb::arg("axis") = 0,
      "Differentiable concatenation along axis.");
  ag.def(
      "stack",
      [](nb::handle xs, std::int64_t axis) {
        return stack(to_variables(xs), axis);
      },
      nb::arg("tensors"), nb::arg("axis") = 0,
      "Differentiable stacking along a new axis.");
  ag.def(
      "flip",
      [](nb::handle x, nb::handle axis) {
        return flip(to_variable(x), to_axes(axis));
      },
      nb::arg("x"), nb::arg("axis") = nb::none(),
      "Differentiable reversal along axis (every axis when None).");
  ag.def(
      "gather",
      [](nb::handle x, nb::handle index, std::int64_t axis) {
        return gather(to_variable(x), to_tensor(index), axis);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = 0,
      "Differentiable gather of rows by integer indices along axis.");
  ag.def(
      "embedding",
      [](nb::handle w, nb::handle ids) {
        return embedding(to_variable(w), to_tensor(ids));
      },
      nb::arg("weight"), nb::arg("ids"),
      "Rows of weight picked by integer ids; the gradient scatters back.");
  ag.def(
      "layer_norm",
      [](nb::handle x, nb::handle w, nb::handle b, double eps) {
        return layer_norm(to_variable(x),
                          w.is_none() ? Variable{} : to_variable(w),
                          b.is_none() ? Variable{} : to_variable(b), eps);
      },
      nb::arg("x"), nb::arg("weight") = nb::none(),
      nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5,
      "Differentiable layer norm over the last axis.");
  ag.def(
      "rms_norm",
      [](nb::handle x, nb::handle w, double eps) {
        return rms_norm(to_variable(x),
                        w.is_none() ? Variable{} : to_variable(w), eps);
      },
      nb::arg("x"), nb::arg("weight") = nb::none(), nb::arg("eps") = 1e-6,
      "Differentiable RMS norm over the last axis.");
  ag.def(
      "scaled_dot_product_attention",
      [](nb::handle q, nb::handle k, nb::handle v, bool is_causal) {
        AttentionOptions options;
        options.causal = is_causal;
        return scaled_dot_product_attention(to_variable(q), to_variable(k),
                                            to_variable(v), options);
      },
      nb::arg("query"), nb::arg("key"), nb::arg("value"),
      nb::arg("is_causal") = false,
      "Differentiable fused attention (is_causal masks the future).");
  ag.def(
      "cross_entropy",
      [](nb::handle logits, nb::handle targets, std::int64_t ignore_index,
         double label_smoothing, const std::string& reduction) {
        CrossEntropyOptions options;
        options.ignore_index = ignore_index;
        options.label_smoothing = label_smoothing;
        options.reduction = to_reduction(reduction);
        return cross_entropy(to_variable(logits), to_tensor(targets), options);
      },
      nb::arg("logits"), nb::arg("targets"), nb::arg("ignore_index") = -100,
      nb::arg("label_smoothing") = 0.0, nb::arg("reduction") = "mean",
      "PyTorch's cross_entropy over the last axis of logits, integer targets.");
  ag.def(
      "nll_loss",
      [](nb::handle log_probs, nb::handle targets, std::int64_t ignore_index,
         const std::string& reduction) {
        return nll_loss(to_variable(log_probs), to_tensor(targets),
                        ignore_index, to_reduction(reduction));
      },
      nb::arg("log_probs"), nb::arg("targets"), nb::arg("ignore_index") = -100,
      nb::arg("reduction") = "mean",
      "Negative log-likelihood of log-probabilities (..., C) at integer "
      "targets.");
  ag.def(
      "mse_loss",
      [](nb::handle input, nb::handle target, const std::string& reduction) {
        return mse_loss(to_variable(input), to_variable(target),
                        to_reduction(reduction));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction") = "mean",
      "Mean (or sum, or none) of the squared differences.");
}

void bind_optimizers(nb::module_& m) {
  nb::class_<Optimizer>(m, "Optimizer",
                        "Base of the optimisers: step(), zero_grad(), lr.")
      .def(
          "step",
          [](Optimizer& o) {
            nb::gil_scoped_release release;
            o.step();
          },
          "Updates every parameter from its .grad.")
      .def("zero_grad", &Optimizer::zero_grad,
           "Clears every parameter's .grad.")
      .def_prop_rw("lr", &Optimizer::lr, &Optimizer::set_lr)
      .def_prop_ro("steps_taken", &Optimizer::steps_taken);
  nb::class_<SGD, Optimizer>(m, "SGD").def(
      "__init__",
      [](SGD* self, nb::handle params, double lr, double momentum,
         double dampening, bool nesterov, double weight_decay) {
        new (self)
            SGD(parameter_list(params),
                SgdOptions{lr, momentum, dampening, nesterov, weight_decay});
      },
      nb::arg("params"), nb::arg("lr") = 0.01, nb::arg("momentum") = 0.0,
      nb::arg("dampening") = 0.0, nb::arg("nesterov") = false,
      nb::arg("weight_decay") = 0.0);
  nb::class_<Adam, Optimizer>(m, "Adam").def(
      "__init__",
      [](Adam* self, nb::handle params, double lr,
         std::pair<double, double> betas, double eps, double weight_decay) {
        new (self)
            Adam(parameter_list(params),
                 AdamOptions{lr, betas.first, betas.second, eps, weight_decay});
      },
      nb::arg("params"), nb::arg("lr") = 1e-3,
      nb::arg("betas") = std::pair<double, double>{0.9, 0.999},
      nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0);
  nb::class_<AdamW, Adam>(m, "AdamW")
      .def(
          "__init__",
          [](AdamW* self, nb::handle params, double lr,
             std::pair<double, double> betas, double eps, double weight_decay) {
            new (self) AdamW(
                parameter_list(params),
                AdamOptions{lr, betas.first, betas.second, eps, weight_decay});
          },
          nb::arg("params"), nb::arg("lr") = 1e-3,
          nb::arg("betas") = std::pair<double, double>{0.9, 0.999},
          nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.01);
  m.def(
      "clip_grad_norm",
      [](nb::handle params, double max_norm) {
        return clip_grad_norm(parameter_list(params), max_norm);
      },
      nb::arg("params"), nb::arg("max_norm"),
      "Scales the gradients to a joint L2 norm <= max_norm; "
      "returns the norm before clipping.");
}

}  // namespace

void bind_autograd(nb::module_& m) {
  bind_variable(m);
  nb::module_ ag =
      m.def_submodule("autograd", "Differentiable ops on tessel.Variable.");
  bind_autograd_functions(ag);
  bind_optimizers(ag);
}

}  // namespace tessel::python

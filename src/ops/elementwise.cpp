// The element-wise op layer: validation, promotion, broadcasting, output
// allocation, then one call into the CPU kernels.
#include "tessel/ops/elementwise.hpp"

#include "core/check.hpp"
#include "ops/operands.hpp"
#include "tessel/ops/factories.hpp"

namespace tessel {

namespace {

template <class Op>
void check_inputs(Op op_id, DType dtype, const char* op) {
  const OpInfo& info = op_info(op_id);
  TESSEL_CHECK(!is_complex(dtype) || accepts_complex(op_id), BadDType, op,
               "is not defined for complex tensors ({})", dtype_name(dtype));
  switch (info.inputs) {
    case InputKind::Any: return;
    case InputKind::NonBool:
      TESSEL_CHECK(dtype != DType::Bool, BadDType, op,
                   "not defined for bool tensors{}",
                   std::string_view(op) == "sub"   ? " (use logical_xor)"
                   : std::string_view(op) == "neg" ? " (use logical_not)"
                                                   : "");
      return;
    case InputKind::Integral:
      TESSEL_CHECK(is_integral(dtype) || dtype == DType::Bool, BadDType, op,
                   "needs integer or bool tensors, got {}", dtype_name(dtype));
      return;
    case InputKind::Integer:
      TESSEL_CHECK(is_integral(dtype), BadDType, op,
                   "needs integer tensors, got {}", dtype_name(dtype));
      return;
  }
}

// Whether a result of dtype `from` may be stored into a tensor of dtype
// `to` (PyTorch's rule: never complex -> real, never float -> integer or
// bool, never integer -> bool).
bool can_store(DType from, DType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating_point(from) && !is_floating_point(to) && !is_complex(to))
    return false;
  if (is_integral(from) && to == DType::Bool) return false;
  return true;
}

bool same_view(const Tensor& a, const Tensor& b) {
  return a.shares_storage_with(b) && a.storage_offset() == b.storage_offset() &&
         a.strides() == b.strides() && a.shape() == b.shape() &&
         a.dtype() == b.dtype();
}

bool has_self_overlap(const Tensor& t) {
  for (std::size_t d = 0; d < t.shape().size(); ++d) {
    if (t.shape()[d] > 1 && t.strides()[d] == 0) return true;
  }
  return false;
}

// Computes into `out` (a given output tensor): directly when its dtype is
// the result dtype and it does not partly overlap an input, else through a
// temporary and a cast.
template <class Compute>
Tensor into(Tensor out, const Shape& shape, DType dtype,
            std::initializer_list<const Tensor*> inputs, const char* op,
            Compute compute) {
  TESSEL_CHECK(out.shape() == shape, BadShape, op,
               "the output has shape {} but the result has shape {}",
               shape_string(out.shape()), shape_string(shape));
  TESSEL_CHECK(!has_self_overlap(out), BadShape, op,
               "the output {} with strides {} has several elements in one "
               "memory location (a broadcast view); it cannot be written",
               shape_string(out.shape()), shape_string(out.strides()));
  TESSEL_CHECK(can_store(dtype, out.dtype()), BadDType, op,
               "the result dtype {} cannot be stored in a {} output",
               dtype_name(dtype), dtype_name(out.dtype()));
  bool direct = out.dtype() == dtype && is_byte_addressable(dtype);
  for (const Tensor* in : inputs) {
    if (in->shares_storage_with(out) && !same_view(*in, out)) direct = false;
  }
  TESSEL_CHECK(out.storage().writable(), IoFailure, op,
               "the output's memory is read-only ({})",
               origin_name(out.storage().origin()));
  if (direct) {
    compute(out);
  } else {
    Tensor tmp = empty(shape, dtype, out.device());
    compute(tmp);
    out.copy_(tmp);
  }
  return out;
}

// Casts (its own shape, so broadcast operands stay small) then broadcasts.
Tensor prepare(const Tensor& t, DType dtype, const Shape& shape) {
  // The common case as it is: a view per operand is a heap allocation,
  // which on a small tensor costs more than the arithmetic.
  if (t.dtype() == dtype && t.shape() == shape) return t;
  return t.to(dtype).expand(shape);
}

DType compute_dtype(const OpInfo& info, DType promoted) {
  return info.result == ResultKind::Float ? float_result_type(promoted)
                                          : promoted;
}

DType output_dtype(const OpInfo& info, DType compute) {
  return info.result == ResultKind::Bool ? DType::Bool : compute;
}

// abs of a complex tensor is its real magnitude.
DType output_dtype(UnaryOp op, DType compute) {
  if (op == UnaryOp::Abs) return complex_component_type(compute);
  return output_dtype(op_info(op), compute);
}

// ---- unary ----

Tensor unary_into(UnaryOp op, const UnaryParams& params, const Tensor& x,
                  const Tensor* out) {
  const OpInfo& info = op_info(op);
  const ops::CheckedOperands checked(info.name, x);
  check_inputs(op, x.dtype(), info.name);
  TESSEL_CHECK(op != UnaryOp::Softplus || params.a != 0.0, BadShape, info.name,
               "beta must not be 0");
  // Packed and block operands count as f32 (DESIGN §1 rule 4).
  const DType in_dtype =
      is_byte_addressable(x.dtype()) ? x.dtype() : DType::F32;
  const DType compute = compute_dtype(info, in_dtype);
  const DType result = output_dtype(op, compute);
  auto kernel = [&](const Tensor& dst) {
    if (dst.numel() > 0)
      ops::backend_of(dst).unary(op, params, dst, x.to(compute));
  };
  if (out == nullptr) {
    Tensor result_tensor = empty(x.shape(), result, x.device());
    kernel(result_tensor);
    return result_tensor;
  }
  return into(*out, x.shape(), result, {&x}, info.name, kernel);
}

Tensor unary_out(UnaryOp op, const Tensor& out, const Tensor& x,
                 UnaryParams params = {}) {
  return unary_into(op, params, x, &out);
}

// ---- binary ----

Tensor binary_into(BinaryOp op, const Tensor& a, const Tensor& b,
                   std::optional<DType> scalar_dtype, const Tensor* out) {
  const OpInfo& info = op_info(op);
  const ops::CheckedOperands checked(info.name, {&a, &b});
  const DType promoted = scalar_dtype
                             ? *scalar_dtype
                             : promote_types(a.dtype(), b.dtype(), info.name);
  check_inputs(op, promoted, info.name);
  const DType compute = compute_dtype(info, promoted);
  const DType result = output_dtype(info, compute);
  // The kernels compute narrow floats in f32 and round once: a step to the
  // next f32 would round back to the operand.
  TESSEL_CHECK(op != BinaryOp::Nextafter || compute == DType::F32 ||
                   compute == DType::F64,
               BadDType, info.name,
               "steps between float32 or float64 values, not {} (cast to "
               "float32 first)",
               dtype_name(compute));
  const Shape shape = [&] {
    if (a.shape() == b.shape()) return a.shape();
    try {
      return broadcast_shapes(a.shape(), b.shape());
    } catch (const ShapeError&) {
      detail::fail(ErrorCode::BroadcastMismatch, info.name,
                   "shapes {} and {} cannot be broadcast together",
                   shape_string(a.shape()), shape_string(b.shape()));
    }
  }();
  auto kernel = [&](const Tensor& dst) {
    if (dst.numel() == 0) return;
    ops::backend_of(dst).binary(op, dst, prepare(a, compute, shape),
                                prepare(b, compute, shape));
  };
  if (out == nullptr) {
    Tensor result_tensor = empty(shape, result, a.device());
    kernel(result_tensor);
    return result_tensor;
  }
  return into(*out, shape, result, {&a, &b}, info.name, kernel);
}

Tensor apply_binary(BinaryOp op, const Tensor& a, const Tensor& b,
                    std::optional<DType> scalar_dtype = std::nullopt) {
  return binary_into(op, a, b, scalar_dtype, nullptr);
}

Tensor binary_out(BinaryOp op, const Tensor& out, const Tensor& a,
                  const Tensor& b,
                  std::optional<DType> scalar_dtype = std::nullopt) {
  return binary_into(op, a, b, scalar_dtype, &out);
}

// A Python-number operand, on the device of the tensor it meets.
Tensor scalar_tensor(const Scalar& s, DType dtype, Device device) {
  return full({}, s, dtype, device);
}

}  // namespace

DType scalar_result_type(DType t, const Scalar& s) {
  if (!is_byte_addressable(t)) t = DType::F32;
  // A complex number makes the result complex at the tensor's precision
  // (f64 + 1j is c128, f32 or an integer tensor + 1j is c64: NumPy 2).
  if (is_complex(t)) return t;
  if (s.is_complex()) return complex_type_for(float_result_type(t));
  if (is_floating_point(t)) return t;
  if (s.is_floating_point()) return DType::F32;
  if (t == DType::Bool && s.is_integral()) return DType::I64;
  return t;
}

Tensor unary(UnaryOp op, const Tensor& x, const UnaryParams& params) {
  return unary_into(op, params, x, nullptr);
}
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  return apply_binary(op, a, b);
}

std::optional<UnaryOp> unary_op_from_name(std::string_view name) {
  for (int i = 0; i < kUnaryOpCount; ++i) {
    if (name == kUnaryOps[i].name) return static_cast<UnaryOp>(i);
  }
  return std::nullopt;
}
std::optional<BinaryOp> binary_op_from_name(std::string_view name) {
  for (int i = 0; i < kBinaryOpCount; ++i) {
    if (name == kBinaryOps[i].name) return static_cast<BinaryOp>(i);
  }
  return std::nullopt;
}

// ---- generated unary and binary entry points ----

#define TESSEL_DEFINE_UNARY(e, name, result, inputs, kind, kernel) \
  TESSEL_DEFINE_UNARY_##kind(e, name)
#define TESSEL_DEFINE_UNARY_Plain(e, name)                          \
  Tensor name(const Tensor& x) { return unary(UnaryOp::e, x, {}); } \
  Tensor name##_out(const Tensor& out, const Tensor& x) {           \
    return unary_out(UnaryOp::e, out, x);                           \
  }
#define TESSEL_DEFINE_UNARY_Param(e, name)
TESSEL_FOR_EACH_UNARY_OP(TESSEL_DEFINE_UNARY)
#undef TESSEL_DEFINE_UNARY_Param
#undef TESSEL_DEFINE_UNARY_Plain
#undef TESSEL_DEFINE_UNARY

#define TESSEL_DEFINE_BINARY(e, name, result, inputs, kind, kernel)          \
  Tensor name(const Tensor& a, const Tensor& b) {                            \
    return apply_binary(BinaryOp::e, a, b);                                  \
  }                                                                          \
  Tensor name(const Tensor& a, Scalar b) {                                   \
    ops::check_operand(#name, a);                                            \
    const DType t = scalar_result_type(a.dtype(), b);                        \
    return apply_binary(BinaryOp::e, a, scalar_tensor(b, t, a.device()), t); \
  }                                                                          \
  Tensor name(Scalar a, const Tensor& b) {                                   \
    ops::check_operand(#name, b);                                            \
    const DType t = scalar_result_type(b.dtype(), a);                        \
    return apply_binary(BinaryOp::e, scalar_tensor(a, t, b.device()), b, t); \
  }                                                                          \
  Tensor name##_out(const Tensor& out, const Tensor& a, const Tensor& b) {   \
    return binary_out(BinaryOp::e, out, a, b);                               \
  }                                                                          \
  Tensor name##_(const Tensor& self, const Tensor& other) {                  \
    return binary_out(BinaryOp::e, self, self, other);                       \
  }                                                                          \
  Tensor name##_(const Tensor& self, Scalar other) {                         \
    ops::check_operand(#name "_", self);                                     \
    const DType t = scalar_result_type(self.dtype(), other);                 \
    return binary_out(BinaryOp::e, self, self,                               \
                      scalar_tensor(other, t, self.device()), t);            \
  }
TESSEL_FOR_EACH_BINARY_OP(TESSEL_DEFINE_BINARY)
#undef TESSEL_DEFINE_BINARY

// ---- parameterised unary ops ----

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary(UnaryOp::LeakyRelu, x, {negative_slope, 0.0});
}
Tensor elu(const Tensor& x, double alpha) {
  return unary(UnaryOp::Elu, x, {alpha, 0.0});
}
Tensor gelu(const Tensor& x, GeluApproximation approximation) {
  return unary(approximation == GeluApproximation::Tanh ? UnaryOp::GeluTanh
                                                        : UnaryOp::Gelu,
               x, {});
}
Tensor gelu_tanh(const Tensor& x) { return unary(UnaryOp::GeluTanh, x, {}); }
Tensor softplus(const Tensor& x, double beta, double threshold) {
  return unary(UnaryOp::Softplus, x, {beta, threshold});
}

Tensor clip(const Tensor& x, std::optional<Scalar> min,
            std::optional<Scalar> max) {
  Tensor r = x;
  if (min) r = maximum(r, *min);
  if (max) r = minimum(r, *max);
  return min || max ? r : x.clone();
}

Tensor clip(const Tensor& x, const Tensor& min, const Tensor& max) {
  Tensor r = x;
  if (min.defined()) r = maximum(r, min);
  if (max.defined()) r = minimum(r, max);
  return min.defined() || max.defined() ? r : x.clone();
}

#define TESSEL_DEFINE_INPLACE(name, e) \
  Tensor name##_(const Tensor& x) { return unary_out(UnaryOp::e, x, x); }
TESSEL_DEFINE_INPLACE(neg, Neg)
TESSEL_DEFINE_INPLACE(abs, Abs)
TESSEL_DEFINE_INPLACE(relu, Relu)
TESSEL_DEFINE_INPLACE(exp, Exp)
TESSEL_DEFINE_INPLACE(sqrt, Sqrt)
TESSEL_DEFINE_INPLACE(tanh, Tanh)
TESSEL_DEFINE_INPLACE(sigmoid, Sigmoid)
#undef TESSEL_DEFINE_INPLACE

// ---- ternary ----

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const ops::CheckedOperands checked("where", {&cond, &a, &b});
  const DType dtype = promote_types(a.dtype(), b.dtype(), "where");
  const Shape shapes[] = {cond.shape(), a.shape(), b.shape()};
  Shape shape;
  try {
    shape = broadcast_shapes(shapes);
  } catch (const ShapeError&) {
    detail::fail(ErrorCode::BroadcastMismatch, "where",
                 "condition {}, x {} and y {} cannot be broadcast together",
                 shape_string(cond.shape()), shape_string(a.shape()),
                 shape_string(b.shape()));
  }
  Tensor out = empty(shape, dtype, a.device());
  if (out.numel() > 0) {
    ops::backend_of(out).where(out, prepare(cond, DType::Bool, shape),
                               prepare(a, dtype, shape),
                               prepare(b, dtype, shape));
  }
  return out;
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  const ops::CheckedOperands checked("where", b);
  return where(
      cond, scalar_tensor(a, scalar_result_type(b.dtype(), a), b.device()), b);
}
Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  const ops::CheckedOperands checked("where", a);
  return where(cond, a,
               scalar_tensor(b, scalar_result_type(a.dtype(), b), a.device()));
}
Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  const DType dtype =
      promote_types(a.default_dtype(), b.default_dtype(), "where");
  const ops::CheckedOperands checked("where", cond);
  return where(cond, scalar_tensor(a, dtype, cond.device()),
               scalar_tensor(b, dtype, cond.device()));
}

Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c) {
  const ops::CheckedOperands checked("fma", {&a, &b, &c});
  const DType dtype = promote_types(promote_types(a.dtype(), b.dtype(), "fma"),
                                    c.dtype(), "fma");
  const Shape shapes[] = {a.shape(), b.shape(), c.shape()};
  Shape shape;
  try {
    shape = broadcast_shapes(shapes);
  } catch (const ShapeError&) {
    detail::fail(ErrorCode::BroadcastMismatch, "fma",
                 "shapes {}, {} and {} cannot be broadcast together",
                 shape_string(a.shape()), shape_string(b.shape()),
                 shape_string(c.shape()));
  }
  Tensor out = empty(shape, dtype, a.device());
  if (out.numel() > 0) {
    ops::backend_of(out).fma(out, prepare(a, dtype, shape),
                             prepare(b, dtype, shape),
                             prepare(c, dtype, shape));
  }
  return out;
}

// ---- operators ----

Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator!(const Tensor& x) { return logical_not(x); }
Tensor operator~(const Tensor& x) { return bitwise_not(x); }

#define TESSEL_DEFINE_OPERATOR(symbol, name)                               \
  Tensor operator symbol(const Tensor& a, const Tensor& b) {               \
    return name(a, b);                                                     \
  }                                                                        \
  Tensor operator symbol(const Tensor& a, Scalar b) { return name(a, b); } \
  Tensor operator symbol(Scalar a, const Tensor& b) { return name(a, b); }
TESSEL_DEFINE_OPERATOR(+, add)
TESSEL_DEFINE_OPERATOR(-, sub)
TESSEL_DEFINE_OPERATOR(*, mul)
TESSEL_DEFINE_OPERATOR(/, div)
TESSEL_DEFINE_OPERATOR(%, remainder)
TESSEL_DEFINE_OPERATOR(==, eq)
TESSEL_DEFINE_OPERATOR(!=, ne)
TESSEL_DEFINE_OPERATOR(<, lt)
TESSEL_DEFINE_OPERATOR(<=, le)
TESSEL_DEFINE_OPERATOR(>, gt)
TESSEL_DEFINE_OPERATOR(>=, ge)
TESSEL_DEFINE_OPERATOR(&, bitwise_and)
TESSEL_DEFINE_OPERATOR(|, bitwise_or)
TESSEL_DEFINE_OPERATOR(^, bitwise_xor)
#undef TESSEL_DEFINE_OPERATOR

Tensor& operator+=(Tensor& self, const Tensor& other) {
  add_(self, other);
  return self;
}
Tensor& operator-=(Tensor& self, const Tensor& other) {
  sub_(self, other);
  return self;
}
Tensor& operator*=(Tensor& self, const Tensor& other) {
  mul_(self, other);
  return self;
}
Tensor& operator/=(Tensor& self, const Tensor& other) {
  div_(self, other);
  return self;
}
Tensor& operator+=(Tensor& self, Scalar other) {
  add_(self, other);
  return self;
}
Tensor& operator-=(Tensor& self, Scalar other) {
  sub_(self, other);
  return self;
}
Tensor& operator*=(Tensor& self, Scalar other) {
  mul_(self, other);
  return self;
}
Tensor& operator/=(Tensor& self, Scalar other) {
  div_(self, other);
  return self;
}

}  // namespace tessel

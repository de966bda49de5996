#include "backends/cpu/complex_kernels.hpp"
#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/elementwise_kernels.hpp"
#include "backends/cpu/scalar_ops.hpp"
#include "backends/cpu/strided_loop.hpp"
#include "core/dispatch.hpp"

namespace tessel::cpu {

namespace {

// Which (op, storage type) pairs exist: float-valued ops run on floats only
// (the op layer casts integers to f32 first), bitwise_not on integers.
template <UnaryOp OP, class T>
constexpr bool unary_applies() {
  const auto& info = op_info(OP);
  if (info.result == ResultKind::Float) return is_float_v<compute_t<T>>;
  if (info.inputs == InputKind::Integral) return !is_float_v<compute_t<T>>;
  if (info.inputs == InputKind::NonBool) return !std::is_same_v<T, bool>;
  return true;
}

template <UnaryOp OP, class T, class Out>
void unary_run(const UnaryParams& p, std::array<char*, 2>& ptr,
               const std::array<std::int64_t, 2>& stride, std::int64_t n) {
  using C = compute_t<T>;
  const bool contiguous = stride[0] == sizeof(Out) && stride[1] == sizeof(T);
  if constexpr (std::is_same_v<Out, T> && has_simd_storage<T>() &&
                simd::has_unary(OP)) {
    if (contiguous) {
      simd::unary(OP, p, simd_storage<T>(), ptr[1], ptr[0], n);
      return;
    }
  }
  if (contiguous) {
    auto* out = reinterpret_cast<Out*>(ptr[0]);
    const auto* in = reinterpret_cast<const T*>(ptr[1]);
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = convert<Out>(scalar_unary<C>(OP, convert<C>(in[k]), p));
    }
    return;
  }
  for (std::int64_t k = 0; k < n; ++k) {
    const T x = *reinterpret_cast<const T*>(ptr[1] + k * stride[1]);
    *reinterpret_cast<Out*>(ptr[0] + k * stride[0]) =
        convert<Out>(scalar_unary<C>(OP, convert<C>(x), p));
  }
}

}  // namespace

void unary(UnaryOp op, const UnaryParams& params, const KernelOutput& out,
           const KernelInput& in) {
  const Strides os = out.byte_strides();
  const Strides is = in.byte_strides();
  const std::array<std::span<const std::int64_t>, 2> strides{
      std::span<const std::int64_t>(os), std::span<const std::int64_t>(is)};
  const std::array<char*, 2> base{base_pointer(out), base_pointer(in)};
  if (is_complex(in.dtype())) {
    complex_unary(op, out, in);
    return;
  }
  detail::dispatch_element_type(in.dtype(), op_info(op).name, [&]<class T>() {
    switch (op) {
#define TESSEL_UNARY_CASE(e, name, result, inputs, kind, kernel)               \
  case UnaryOp::e:                                                             \
    if constexpr (unary_applies<UnaryOp::e, T>()) {                            \
      using Out =                                                              \
          std::conditional_t<ResultKind::result == ResultKind::Bool, bool, T>; \
      for_each_strided<2>(out.shape(), base, strides,                          \
                          [&params](auto& p, const auto& s, std::int64_t n) {  \
                            unary_run<UnaryOp::e, T, Out>(params, p, s, n);    \
                          });                                                  \
    }                                                                          \
    return;
      TESSEL_FOR_EACH_UNARY_OP(TESSEL_UNARY_CASE)
#undef TESSEL_UNARY_CASE
    }
  });
}

}  // namespace tessel::cpu

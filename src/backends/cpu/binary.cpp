#include "backends/cpu/complex_kernels.hpp"
#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/elementwise_kernels.hpp"
#include "backends/cpu/scalar_ops.hpp"
#include "backends/cpu/strided_loop.hpp"
#include "core/dispatch.hpp"

namespace tessel::cpu {

namespace {

template <BinaryOp OP, class T>
constexpr bool binary_applies() {
  const auto& info = op_info(OP);
  constexpr bool is_bool = std::is_same_v<T, bool>;
  constexpr bool is_float = is_float_v<compute_t<T>>;
  if (info.result == ResultKind::Float) return is_float;  // div
  if (info.inputs == InputKind::Integral) return !is_float;
  if (info.inputs == InputKind::NonBool) return !is_bool;
  return true;
}

template <BinaryOp OP, class T, class Out>
void binary_run(std::array<char*, 3>& ptr, const std::array<std::int64_t, 3>& s,
                std::int64_t n) {
  using C = compute_t<T>;
  const bool out_dense = s[0] == sizeof(Out);
  const bool a_dense = s[1] == sizeof(T);
  const bool b_dense = s[2] == sizeof(T);
  const bool a_scalar = s[1] == 0;
  const bool b_scalar = s[2] == 0;
  if constexpr (std::is_same_v<Out, T> && has_simd_storage<T>() &&
                simd::has_binary(OP)) {
    if (out_dense && (a_dense || a_scalar) && (b_dense || b_scalar)) {
      simd::binary(OP, simd_storage<T>(), ptr[1], a_scalar, ptr[2], b_scalar,
                   ptr[0], n);
      return;
    }
  }
  auto* out = reinterpret_cast<Out*>(ptr[0]);
  const auto* a = reinterpret_cast<const T*>(ptr[1]);
  const auto* b = reinterpret_cast<const T*>(ptr[2]);
  auto apply = [](T x, T y) {
    return convert<Out>(scalar_binary<C>(OP, convert<C>(x), convert<C>(y)));
  };
  // Dense and broadcast-scalar runs get their own loops so that the
  // compiler can vectorise them.
  if (out_dense && a_dense && b_dense) {
    for (std::int64_t k = 0; k < n; ++k) out[k] = apply(a[k], b[k]);
  } else if (out_dense && a_dense && b_scalar) {
    const T y = b[0];
    for (std::int64_t k = 0; k < n; ++k) out[k] = apply(a[k], y);
  } else if (out_dense && a_scalar && b_dense) {
    const T x = a[0];
    for (std::int64_t k = 0; k < n; ++k) out[k] = apply(x, b[k]);
  } else {
    for (std::int64_t k = 0; k < n; ++k) {
      *reinterpret_cast<Out*>(ptr[0] + k * s[0]) =
          apply(*reinterpret_cast<const T*>(ptr[1] + k * s[1]),
                *reinterpret_cast<const T*>(ptr[2] + k * s[2]));
    }
  }
}

}  // namespace

void binary(BinaryOp op, const KernelOutput& out, const KernelInput& a,
            const KernelInput& b) {
  const Strides os = out.byte_strides();
  const Strides as = a.byte_strides();
  const Strides bs = b.byte_strides();
  const std::array<std::span<const std::int64_t>, 3> strides{
      std::span<const std::int64_t>(os), std::span<const std::int64_t>(as),
      std::span<const std::int64_t>(bs)};
  const std::array<char*, 3> base{base_pointer(out), base_pointer(a),
                                  base_pointer(b)};
  if (is_complex(a.dtype())) {
    complex_binary(op, out, a, b);
    return;
  }
  detail::dispatch_element_type(a.dtype(), op_info(op).name, [&]<class T>() {
    switch (op) {
#define TESSEL_BINARY_CASE(e, name, result, inputs, kind, kernel)              \
  case BinaryOp::e:                                                            \
    if constexpr (binary_applies<BinaryOp::e, T>()) {                          \
      using Out =                                                              \
          std::conditional_t<ResultKind::result == ResultKind::Bool, bool, T>; \
      for_each_strided<3>(out.shape(), base, strides,                          \
                          binary_run<BinaryOp::e, T, Out>);                    \
    }                                                                          \
    return;
      TESSEL_FOR_EACH_BINARY_OP(TESSEL_BINARY_CASE)
#undef TESSEL_BINARY_CASE
    }
  });
}

}  // namespace tessel::cpu

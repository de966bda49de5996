#include <cmath>

#include "backends/cpu/elementwise_common.hpp"
#include "backends/cpu/elementwise_kernels.hpp"
#include "backends/cpu/strided_loop.hpp"
#include "core/dispatch.hpp"

namespace tessel::cpu {

namespace {

template <class F>
void for_each_4(const KernelOutput& out, const KernelInput& x,
                const KernelInput& y, const KernelInput& z, F&& loop) {
  const Strides s0 = out.byte_strides();
  const Strides s1 = x.byte_strides();
  const Strides s2 = y.byte_strides();
  const Strides s3 = z.byte_strides();
  const std::array<std::span<const std::int64_t>, 4> strides{
      std::span<const std::int64_t>(s0), std::span<const std::int64_t>(s1),
      std::span<const std::int64_t>(s2), std::span<const std::int64_t>(s3)};
  for_each_strided<4>(
      out.shape(),
      {base_pointer(out), base_pointer(x), base_pointer(y), base_pointer(z)},
      strides, loop);
}

template <class T>
const T& at(const char* p, std::int64_t k, std::int64_t stride) {
  return *reinterpret_cast<const T*>(p + k * stride);
}

}  // namespace

void where(const KernelOutput& out, const KernelInput& cond,
           const KernelInput& a, const KernelInput& b) {
  detail::dispatch_any_element_type(out.dtype(), "where", [&]<class T>() {
    for_each_4(out, cond, a, b, [](auto& p, const auto& s, std::int64_t n) {
      for (std::int64_t k = 0; k < n; ++k) {
        *reinterpret_cast<T*>(p[0] + k * s[0]) = at<bool>(p[1], k, s[1])
                                                     ? at<T>(p[2], k, s[2])
                                                     : at<T>(p[3], k, s[3]);
      }
    });
  });
}

void fma(const KernelOutput& out, const KernelInput& a, const KernelInput& b,
         const KernelInput& c) {
  detail::dispatch_element_type(out.dtype(), "fma", [&]<class T>() {
    using C = compute_t<T>;
    for_each_4(out, a, b, c, [](auto& p, const auto& s, std::int64_t n) {
      for (std::int64_t k = 0; k < n; ++k) {
        const C x = convert<C>(at<T>(p[1], k, s[1]));
        const C y = convert<C>(at<T>(p[2], k, s[2]));
        const C z = convert<C>(at<T>(p[3], k, s[3]));
        C r;
        if constexpr (std::is_floating_point_v<C>) {
          r = std::fma(x, y, z);
        } else if constexpr (std::is_same_v<C, bool>) {
          r = (x && y) || z;
        } else {
          using U = std::make_unsigned_t<C>;
          r = static_cast<C>(static_cast<U>(x) * static_cast<U>(y) +
                             static_cast<U>(z));
        }
        *reinterpret_cast<T*>(p[0] + k * s[0]) = convert<T>(r);
      }
    });
  });
}

}  // namespace tessel::cpu

#include "tessel/core/numerics.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/check.hpp"
#include "core/dispatch.hpp"
#include "tessel/core/parallel.hpp"

namespace tessel {

namespace {

bool enabled_from_environment() {
  const char* env = std::getenv("TESSEL_CHECK_NUMERICS");
  return env != nullptr && std::strcmp(env, "0") != 0 && env[0] != '\0';
}

std::atomic<bool>& flag() {
  static std::atomic<bool> enabled{enabled_from_environment()};
  return enabled;
}

// Whether any of n IEEE values of `Bits` (their exponent field `mask`) is
// Inf or NaN: all exponent bits set. Branch-free over the bits, so the
// compiler vectorises it; the scan runs on every output of a checked op,
// so it must cost a fraction of the op.
template <class Bits>
bool any_nonfinite_bits(const void* data, std::int64_t n, Bits mask) {
  const auto* bits = static_cast<const Bits*>(data);
  constexpr std::int64_t kChunk = 1 << 16;
  std::atomic<bool> found{false};
  parallel_for(0, (n + kChunk - 1) / kChunk, 1,
               [&](std::int64_t lo, std::int64_t hi) {
                 unsigned any = 0;
                 const std::int64_t end = std::min(n, hi * kChunk);
                 for (std::int64_t i = lo * kChunk; i < end; ++i)
                   any |= static_cast<unsigned>((bits[i] & mask) == mask);
                 if (any != 0) found = true;
               });
  return found;
}

// false when the contiguous `t` certainly holds only finite values; true
// when it may not (the element-wise search then finds where).
bool may_hold_nonfinite(const Tensor& t) {
  const void* p = t.raw_data();
  const std::int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::F32:
      return any_nonfinite_bits<std::uint32_t>(p, n, 0x7f800000u);
    case DType::F64:
      return any_nonfinite_bits<std::uint64_t>(p, n, 0x7ff0000000000000ull);
    case DType::BF16: return any_nonfinite_bits<std::uint16_t>(p, n, 0x7f80u);
    case DType::F16: return any_nonfinite_bits<std::uint16_t>(p, n, 0x7c00u);
    default: return true;  // 8-bit floats: the element-wise search
  }
}

}  // namespace

void set_check_numerics(bool enabled) { flag() = enabled; }
bool check_numerics() { return flag(); }

std::int64_t first_non_finite(const Tensor& t) {
  // A meta tensor has no values to check.
  if (!is_floating_point(t.dtype()) || t.numel() == 0 || t.device().is_meta()) {
    return -1;
  }
  const Tensor c = t.contiguous();
  if (!may_hold_nonfinite(c)) return -1;
  std::int64_t first = -1;
  detail::dispatch_float_type(c.dtype(), "first_non_finite", [&]<class T>() {
    const T* data = c.const_data<T>();
    for (std::int64_t i = 0; i < c.numel() && first < 0; ++i) {
      if (!std::isfinite(static_cast<double>(data[i]))) first = i;
    }
  });
  return first;
}

void check_finite(const Tensor& t, const char* op) {
  if (!check_numerics()) return;
  const std::int64_t i = first_non_finite(t);
  if (i < 0) return;
  const Tensor c = t.contiguous();
  double v = 0;
  detail::dispatch_float_type(c.dtype(), op, [&]<class T>() {
    v = static_cast<double>(c.const_data<T>()[i]);
  });
  // The first bad element as a multi-index.
  Shape index(t.shape().size(), 0);
  std::int64_t rest = i;
  for (std::size_t d = index.size(); d-- > 0;) {
    index[d] = rest % t.shape()[d];
    rest /= t.shape()[d];
  }
  detail::fail(ErrorCode::NonFinite, op,
               "produced {} at index {} of an output of shape {} ({})", v,
               shape_string(index), shape_string(t.shape()),
               dtype_name(t.dtype()));
}

}  // namespace tessel

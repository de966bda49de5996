#include "tessel/core/numerics.hpp"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/check.hpp"
#include "core/dispatch.hpp"

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

}  // namespace

void set_check_numerics(bool enabled) { flag() = enabled; }
bool check_numerics() { return flag(); }

void check_finite(const Tensor& t, const char* op) {
  // A meta tensor has no values to check.
  if (!check_numerics() || !is_floating_point(t.dtype()) || t.numel() == 0 ||
      t.device().is_meta()) {
    return;
  }
  const Tensor c = t.contiguous();
  detail::dispatch_float_type(c.dtype(), op, [&]<class T>() {
    const T* data = c.const_data<T>();
    for (std::int64_t i = 0; i < c.numel(); ++i) {
      const double v = static_cast<double>(data[i]);
      if (std::isfinite(v)) continue;
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
  });
}

}  // namespace tessel

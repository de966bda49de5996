#include "tessel/core/build_info.hpp"

#include <fmt/format.h>
#include <hwy/targets.h>

namespace tessel {

BuildInfo build_info() {
  BuildInfo info;
  info.version = TESSEL_VERSION;
  info.build_type = TESSEL_BUILD_TYPE;
#if defined(__clang__)
  info.compiler = fmt::format("Clang {}.{}.{}", __clang_major__,
                              __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  info.compiler = fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__,
                              __GNUC_PATCHLEVEL__);
#else
  info.compiler = "unknown";
#endif
#if defined(__SANITIZE_ADDRESS__)
  info.sanitizers = true;
#endif
  return info;
}

SimdInfo simd_info() {
  SimdInfo info;
  // Highway orders targets so that a lower bit is a better target.
  for (const auto target : hwy::SupportedAndGeneratedTargets()) {
    info.supported.emplace_back(hwy::TargetName(target));
  }
  if (!info.supported.empty()) info.dispatched = info.supported.front();
  return info;
}

}  // namespace tessel

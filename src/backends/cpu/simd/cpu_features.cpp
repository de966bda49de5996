#include "backends/cpu/simd/cpu_features.hpp"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tessel::cpu::simd {

std::atomic<unsigned> withheld_cpu_features{0};

namespace {

// The tile state is large (8 KiB), so Linux hands it only to processes
// that ask (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, kernel
// 5.16 on); the grant holds for every thread of the process.
bool amx_int8_granted() {
#if defined(__x86_64__) && defined(__linux__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
  if ((d & kAmxTile) == 0 || (d & kAmxInt8) == 0) return false;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) {
    return false;  // no OSXSAVE: XCR0 cannot be read
  }
  unsigned xcr0 = 0, xcr0_high = 0;
  asm volatile("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
  constexpr unsigned kTileState = 3u << 17;  // XTILECFG and XTILEDATA
  if ((xcr0 & kTileState) != kTileState) return false;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace

bool cpu_has_amx_int8() {
  static const bool granted = amx_int8_granted();
  return granted && !cpu_feature_withheld(kFeatureAmxInt8);
}

}  // namespace tessel::cpu::simd

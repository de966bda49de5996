// CPU features Highway's targets do not imply but kernels branch on at run
// time. AVX512-VNNI (vpdpbusd), AVX512-VBMI (byte permutes) and GFNI (bit
// matrices on bytes) are not part of Highway's AVX3 target, so the 512-bit
// quantised dot and tile kernels ask here (CPUID once per process, then
// what a test withholds); the decode kernels ask the vendor.
#pragma once

#include <atomic>

// Whether the Highway target being compiled is one of x86's AVX-512
// targets, for the kernels written for Highway's AVX3 (the macro is
// expanded at each #if, so once per target foreach_target.h compiles).
// Highway numbers better targets lower, and every x86 target below AVX3
// (AVX3_DL; AVX3_ZEN4 and AVX3_SPR in releases after 1.0.3) includes
// AVX3's F/VL/DQ/BW. Testing HWY_TARGET == HWY_AVX3 left those targets
// on the 256-bit kernels: a build that compiles AVX3_DL (1.0.3 with
// HWY_WANT_AVX3_DL) dispatched an Ice Lake or Sapphire Rapids there.
// (Highway 1.0.3's AVX3_DL target string, set_macros-inl.h, also enables
// AVX-VNNI, the VEX form, which Ice Lake and Zen 4 lack: unless the
// target's run-time check asks for it, which this pass did not verify, a
// compiler may encode a 256-bit VNNI product there that those CPUs cannot
// run. Debian's build does not compile AVX3_DL.)
#define TESSEL_HWY_TARGET_AVX512 (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3)

// The targets of the 512-bit kernels that need AVX512-VNNI (and VBMI, and
// GFNI): the target being compiled (HWY_TARGET_STR, expanded where the
// macro is used) plus what the kernel needs beyond it. Use them only inside
// a per-target namespace where TESSEL_HWY_TARGET_AVX512 holds: elsewhere
// HWY_TARGET_STR is undefined or another target's. Clang lets a function's
// own target attribute replace the one Highway's target pragma would have
// applied (GCC adds them up), and inlines a function only into one with
// all of its features. With a list of their own features the kernels
// lacked the pragma's PCLMUL and AES, so under clang no helper of the
// per-target namespace (compiled with the pragma) was inlined into them:
// `load_i32` was called through the PLT, and the kernels ran 1.7-4.8x
// slower than GCC's (BENCHMARKS.md, twenty-third pass).
//
// The kernels also use BMI2 (pdep), F16C and FMA, which come from Highway's
// string unless a build disables them.
#if defined(HWY_DISABLE_BMI2_FMA) || defined(HWY_DISABLE_F16C)
#error "tessel's x86 kernels need BMI2, FMA and F16C in Highway's targets"
#endif
#define TESSEL_AVX512_VNNI_TARGET \
  __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
#define TESSEL_AVX512_VBMI_TARGET \
  __attribute__((target(HWY_TARGET_STR ",avx512vnni,avx512vbmi")))
#define TESSEL_AVX512_ICL_TARGET \
  __attribute__((target(HWY_TARGET_STR ",avx512vnni,avx512vbmi,gfni")))

namespace tessel::cpu::simd {

// Features a test withholds, so that a CPU which has them all also runs
// the kernels older ones take: Cascade Lake has VNNI without VBMI, GFNI or
// AMX, Skylake-SP none of the four, Ice Lake and Zen 4 all but AMX. Read on
// each dispatch (a relaxed load beside the cached CPUID answer), never per row.
enum CpuFeatureBits : unsigned {
  kFeatureAvx512Vnni = 1u,
  kFeatureAvx512Vbmi = 2u,
  kFeatureGfni = 4u,
  kFeatureAmxInt8 = 8u,
};
extern std::atomic<unsigned> withheld_cpu_features;

// Withholds exactly `bits` (CpuFeatureBits; replacing what was withheld
// before) until the guard goes out of scope. Create it only while no
// kernel runs: gemm_tile_rows, the packer and the GEMM kernel each ask for
// the features (gemm::vnni512_kernel), and must get the same answer
// within a call.
class WithholdCpuFeaturesForTest {
 public:
  explicit WithholdCpuFeaturesForTest(unsigned bits)
      : before_(withheld_cpu_features.exchange(bits)) {}
  ~WithholdCpuFeaturesForTest() { withheld_cpu_features.store(before_); }
  WithholdCpuFeaturesForTest(const WithholdCpuFeaturesForTest&) = delete;
  WithholdCpuFeaturesForTest& operator=(const WithholdCpuFeaturesForTest&) =
      delete;

 private:
  unsigned before_;
};

inline bool cpu_feature_withheld(unsigned bit) {
  return (withheld_cpu_features.load(std::memory_order_relaxed) & bit) != 0;
}

inline bool cpu_has_avx512_vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni && !cpu_feature_withheld(kFeatureAvx512Vnni);
#else
  return false;
#endif
}

inline bool cpu_has_avx512_vbmi() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi && !cpu_feature_withheld(kFeatureAvx512Vbmi);
#else
  return false;
#endif
}

inline bool cpu_has_gfni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool gfni = __builtin_cpu_supports("gfni");
  return gfni && !cpu_feature_withheld(kFeatureGfni);
#else
  return false;
#endif
}

// AMX's integer tile products (tdpbsud; Sapphire Rapids on): the CPU has
// the tile and int8 units, the OS saves the tile state (XCR0), and Linux
// granted this process that state (arch_prctl), asked once, on the first
// call, for every thread of the process. A kernel that takes the tiles
// must ask here first: without the grant the first tile instruction kills
// the process. (Linux refuses the grant where a thread already runs on an
// alternate signal stack too small for the tile state; the kernels then
// keep to VNNI.)
bool cpu_has_amx_int8();

// The decode GEMV streams its rows differently on AMD and Intel cores
// (row_streaming in gemv_simd.cpp: software prefetches and the bf16
// layout, measured on Zen 4 and Sapphire Rapids).
inline bool cpu_is_amd() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool amd = __builtin_cpu_is("amd");
  return amd;
#else
  return false;
#endif
}

}  // namespace tessel::cpu::simd

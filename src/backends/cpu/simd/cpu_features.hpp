// CPU features Highway's targets do not imply but kernels branch on at run
// time. AVX512-VNNI (vpdpbusd), AVX512-VBMI (byte permutes) and GFNI (bit
// matrices on bytes) are not part of Highway's AVX3 target, so the 512-bit
// quantised dot and tile kernels ask here, once per process; the decode
// kernels ask the vendor.
#pragma once

namespace tessel::cpu::simd {

inline bool cpu_has_avx512_vnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni;
#else
  return false;
#endif
}

inline bool cpu_has_avx512_vbmi() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  return vbmi;
#else
  return false;
#endif
}

inline bool cpu_has_gfni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool gfni = __builtin_cpu_supports("gfni");
  return gfni;
#else
  return false;
#endif
}

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

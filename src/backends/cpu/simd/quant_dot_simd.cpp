// Compiled once per Highway target. See quant_dot_simd.hpp for the contract.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backends/cpu/simd/quant_dot_simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
// Must come after foreach_target.h.
#include <hwy/highway.h>

#include <array>
#include <cstddef>
#include <cstring>

#include "backends/cpu/simd/address_ahead.hpp"
#include "backends/cpu/simd/block_bytes_x86-inl.h"
#include "backends/cpu/simd/cpu_features.hpp"
#include "backends/cpu/simd/quant_dot_layout.hpp"
#include "backends/cpu/simd/quant_dot_simd.hpp"
#include "quant/iq4_codebook.hpp"
#include "quant/scalars.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace tessel::cpu::simd::HWY_NAMESPACE {

using namespace layout;  // NOLINT: the offsets above, in every kernel
using quant::load_f32;
using quant::load_u32;

using quant::K4Scales;
using quant::unpack_k4_scales;

#define TESSEL_QUANT_DOT_SIMD_PART
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#include "backends/cpu/simd/quant_dot_avx2.inc"
#if TESSEL_HWY_TARGET_AVX512
#include "backends/cpu/simd/quant_dot_avx512.inc"
#endif
#else
#include "backends/cpu/simd/quant_dot_portable.inc"
#endif
#undef TESSEL_QUANT_DOT_SIMD_PART

using Dot = float (*)(const std::uint8_t*, const std::uint8_t*, std::int64_t);

// One weight row at a time against every activation row while it is hot in
// L1: the kernels of the targets below AVX3, and AVX3's forms for CPUs
// without VBMI or GFNI (not inlined here: this loop lacks their target
// features; the four-row loops below inline theirs). Interleaving two or four
// weight rows to share the activation loads measured 1.3-1.7x slower at M = 1:
// each row is a memory stream of its own, and one sequential stream per thread
// is what the prefetchers serve best.
template <Dot kDot>
void all_rows(const std::uint8_t* w, std::size_t ldw, std::int64_t rows,
              const std::uint8_t* act, std::size_t act_bytes,
              std::int64_t m_rows, std::int64_t nb, float* y,
              std::int64_t ldy) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t m = 0; m < m_rows; ++m) {
      y[m * ldy + r] = kDot(w + r * ldw, act + m * act_bytes, nb);
    }
  }
}

#if TESSEL_HWY_TARGET_AVX512
using RowLanes = __m512 (*)(const std::uint8_t*, const std::uint8_t*,
                            std::int64_t);

// The row loop of the 512-bit kernels, which leave a row's sum in sixteen
// lanes: four weight rows, each streamed in order as all_rows streams
// one, then their lanes summed together (sum_four_rows: 13 instructions
// for the four, where each row's own sum took about 8). Defined once per
// set of target features (`target`): GCC will not inline a kernel whose
// features its caller lacks, and forced inline into a loop of their own
// features the kernels pay no call and no setup per row (Q4_0, 1024
// wide: 82 -> 75 cycles a row when the loop took one row at a time).
// kInlineKernelOnce keeps the four rows' calls a loop, one inlined copy
// of the kernel: Q4_K's ran 64.5 cycles a row of 1024 so, 69 with four
// copies (67.5 one row at a time), where the others ran 2-6 % faster with
// four. One Zen 4 core, weights in L2, rows of 1024: Q4_0 (whose loop,
// all_rows_q4_0_quads, also hoists the row setup) 74.5 -> 62.5 cycles a
// row; the others in BENCHMARKS.md "Zen 4, sixteenth pass".
#define TESSEL_FOUR_ROWS_WITH(name, target)                                   \
  template <RowLanes kLanes, bool kInlineKernelOnce = false>                  \
  target void name(const std::uint8_t* w, std::size_t ldw, std::int64_t rows, \
                   const std::uint8_t* act, std::size_t act_bytes,            \
                   std::int64_t m_rows, std::int64_t nb, float* y,            \
                   std::int64_t ldy) {                                        \
    std::int64_t r = 0;                                                       \
    for (; r + 3 < rows; r += 4) {                                            \
      const std::uint8_t* w0 = w + r * ldw;                                   \
      for (std::int64_t m = 0; m < m_rows; ++m) {                             \
        const std::uint8_t* a = act + m * act_bytes;                          \
        __m512 lanes[4];                                                      \
        if constexpr (kInlineKernelOnce) {                                    \
          _Pragma("GCC unroll 1") for (int i = 0; i < 4; ++i) {               \
            lanes[i] = kLanes(w0 + i * ldw, a, nb);                           \
          }                                                                   \
        } else {                                                              \
          lanes[0] = kLanes(w0, a, nb);                                       \
          lanes[1] = kLanes(w0 + ldw, a, nb);                                 \
          lanes[2] = kLanes(w0 + 2 * ldw, a, nb);                             \
          lanes[3] = kLanes(w0 + 3 * ldw, a, nb);                             \
        }                                                                     \
        _mm_storeu_ps(y + m * ldy + r,                                        \
                      sum_four_rows(lanes[0], lanes[1], lanes[2], lanes[3])); \
      }                                                                       \
    }                                                                         \
    for (; r < rows; ++r) {                                                   \
      for (std::int64_t m = 0; m < m_rows; ++m) {                             \
        y[m * ldy + r] = _mm512_reduce_add_ps(                                \
            kLanes(w + r * ldw, act + m * act_bytes, nb));                    \
      }                                                                       \
    }                                                                         \
  }
// GCC 12's 512-bit extracts pass an "undefined" register as their unused
// merge source, and then warn about it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
TESSEL_FOUR_ROWS_WITH(four_rows_vnni, TESSEL_AVX512_VNNI_TARGET)
TESSEL_FOUR_ROWS_WITH(four_rows_vbmi, TESSEL_AVX512_VBMI_TARGET)
TESSEL_FOUR_ROWS_WITH(four_rows_icl, TESSEL_AVX512_ICL_TARGET)
#pragma GCC diagnostic pop
#undef TESSEL_FOUR_ROWS_WITH
#endif

static void QuantDotRowsImpl(int w_dtype, const std::uint8_t* w,
                             std::size_t ldw, std::int64_t rows,
                             const std::uint8_t* act, std::size_t act_bytes,
                             std::int64_t m_rows, std::int64_t nb, float* y,
                             std::int64_t ldy) {
  switch (static_cast<DType>(w_dtype)) {
    case DType::Q4_0:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi()) {
        return nb % 16 == 0
                   ? all_rows_q4_0_quads<false>(w, ldw, rows, act, act_bytes,
                                                m_rows, nb, y, ldy)
                   : all_rows_q4_0_quads<true>(w, ldw, rows, act, act_bytes,
                                               m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_q4_0_vnni>(w, ldw, rows, act, act_bytes, m_rows, nb,
                                       y, ldy);
      }
#endif
      return all_rows<dot_q4_0>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::Q8_0:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni()) {
        return four_rows_vnni<q8_0_row_lanes>(w, ldw, rows, act, act_bytes,
                                              m_rows, nb, y, ldy);
      }
#endif
      return all_rows<dot_q8_0>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::Q4_K:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi() && cpu_has_gfni()) {
        return four_rows_icl<k4_row_lanes<false>, true>(
            w, ldw, rows, act, act_bytes, m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_k4_vnni<false>>(w, ldw, rows, act, act_bytes,
                                            m_rows, nb, y, ldy);
      }
#endif
      return all_rows<dot_k4<false>>(w, ldw, rows, act, act_bytes, m_rows, nb,
                                     y, ldy);
    case DType::Q5_K:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi() && cpu_has_gfni()) {
        return four_rows_icl<k4_row_lanes<true>>(w, ldw, rows, act, act_bytes,
                                                 m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return all_rows<dot_k4_vnni<true>>(w, ldw, rows, act, act_bytes, m_rows,
                                           nb, y, ldy);
      }
#endif
      return all_rows<dot_k4<true>>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                    ldy);
    case DType::Q6_K:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni()) {
        return four_rows_vnni<q6_k_row_lanes>(w, ldw, rows, act, act_bytes,
                                              m_rows, nb, y, ldy);
      }
#endif
      return all_rows<dot_q6_k>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                ldy);
    case DType::IQ4_XS:
#if TESSEL_HWY_TARGET_AVX512
      if (cpu_has_avx512_vnni() && cpu_has_avx512_vbmi()) {
        return four_rows_vbmi<iq4_xs_vbmi::iq4_xs_row_lanes>(
            w, ldw, rows, act, act_bytes, m_rows, nb, y, ldy);
      }
      if (cpu_has_avx512_vnni()) {
        return four_rows_vnni<iq4_xs_vnni::iq4_xs_row_lanes>(
            w, ldw, rows, act, act_bytes, m_rows, nb, y, ldy);
      }
#endif
      return all_rows<dot_iq4_xs>(w, ldw, rows, act, act_bytes, m_rows, nb, y,
                                  ldy);
    default: return;  // has_quant_dot is checked by the caller
  }
}

}  // namespace tessel::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tessel::cpu::simd {

HWY_EXPORT(QuantDotRowsImpl);

bool has_quant_dot(DType w) {
  switch (w) {
    case DType::Q4_0:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::IQ4_XS: return true;
    default: return false;
  }
}

void quant_dot_rows(DType w_dtype, const std::uint8_t* w,
                    std::size_t w_row_bytes, std::int64_t rows,
                    const std::uint8_t* act, std::int64_t m_rows,
                    std::int64_t k, float* y, std::int64_t ldy) {
  const ActivationBlocks kind = dot_activation_blocks(w_dtype);
  const std::int64_t block = activation_block_values(kind);
  HWY_DYNAMIC_DISPATCH(QuantDotRowsImpl)
  (static_cast<int>(w_dtype), w, w_row_bytes, rows, act,
   activation_row_bytes(kind, k), m_rows, k / block, y, ldy);
}

}  // namespace tessel::cpu::simd
#endif  // HWY_ONCE

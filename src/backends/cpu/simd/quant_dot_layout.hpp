// Byte layouts the quantised dot kernels read (quant_dot_simd.cpp) and
// the activation quantiser writes (quant_activations_simd.cpp): offsets
// inside one weight block, and the activation rows' extra regions.
// docs/quantisation.md has the weight blocks.
#pragma once

#include <cstddef>

namespace tessel::cpu::simd::layout {
inline constexpr int kQ80Bytes = 34;  // d f16 | qs i8[32]
// A Q8_0 activation row is its nb blocks, then their nb f32 scales.
inline constexpr int kQ80ScaleBytes = 4;
// A row for the Q4_0 dot kernels (Q8_0WithQ4_0Sums) goes on with what each
// weight row would otherwise recompute: Q4_0's code offset in the lanes
// of its products, 8 i32 a block. Lane l < 4 is 8 x the sum of codes
// 4l..4l+3 and 16+4l..16+4l+3 (the lane a block's low and high nibbles
// share once their products are added), lanes 4-7 are zero. A kernel
// that keeps a block's eight lanes apart subtracts them all the same, as
// it only sums its lanes; the 256-bit kernel's two blocks a step
// (two_blocks_sums_q4_0) take lanes 0-3 of two blocks in one load of
// 16 + 16 bytes, where folding eight lanes to four took three more
// instructions a step (one Zen 3 thread in cache: 10.3-10.5 GB/s so,
// 11.9-12.5 folded in the row).
inline constexpr int kQ80OffsetBytes = 32;
inline constexpr int kQ80ExtraBytes = kQ80ScaleBytes + kQ80OffsetBytes;
// then, from the next 64-byte boundary (q4_0_quads_offset), for each
// whole group of four blocks (a quad), the same codes as the 512-bit
// Q4_0 kernel with VBMI reads them against four weight blocks at once
// (q4_0_row_lanes), and the 256-bit kernel two blocks at a time: codes
// 0-15 of the four blocks, then codes 16-31 of the four.
inline constexpr int kQ80QuadBytes = 64 + 64;
inline constexpr int kQ80QuadLow = 0, kQ80QuadHigh = 64;
// After the quads (q4_0_quad_groups_offset), for every four quads (the
// last group padded with zeros), what their sixteen blocks' sums need in
// the order the kernel ends with them (lane 4i + q: block i of quad q):
// the f32 scales, then 8 x the sum of the codes as i32.
inline constexpr int kQ80GroupScales = 0, kQ80GroupOffsets = 64;
inline constexpr int kQ80GroupBytes = 64 + 64;
// The quads start on a 64-byte boundary of the row, quads and groups are
// whole lines, and the row's bytes are a multiple of 64, so that in rows
// allocated 64-byte aligned (the callers' HostBuffer) no 512-bit load
// crosses two lines, which costs two (M = 1, weights in L2, Zen 4, when
// quads still carried their offsets and scales: 9.5 cycles a quad
// aligned, 12.0 not).
constexpr std::size_t whole_lines(std::size_t bytes) {
  return (bytes + 63) / 64 * 64;
}
constexpr std::size_t q4_0_quads_offset(std::size_t nb) {
  return whole_lines(nb * (kQ80Bytes + kQ80ExtraBytes));
}
constexpr std::size_t q4_0_quad_groups_offset(std::size_t nb) {
  return q4_0_quads_offset(nb) + nb / 4 * kQ80QuadBytes;
}
constexpr std::size_t q4_0_row_bytes(std::size_t nb) {
  return q4_0_quad_groups_offset(nb) + (nb / 4 + 3) / 4 * kQ80GroupBytes;
}
// A row for the 512-bit Q8_0 dot kernel (Q8_0WithQ8_0Lanes) goes on, from
// the next 64-byte boundary (q8_0_lanes_offset), with every block's 32
// codes again, back to back, so that two blocks' codes are one aligned
// 64-byte load, then from the next 64-byte boundary (q8_0_block_starts_offset)
// each block's i32 start: -128 x the sum of its codes. The kernel multiplies
// the weights' codes + 128, unsigned as vpdpbusd wants them, and one lane of
// each block starts there, so the block's sum comes out exact.
inline constexpr int kQ80LaneBytes = 32, kQ80BlockStartBytes = 4;
constexpr std::size_t q8_0_lanes_offset(std::size_t nb) {
  return whole_lines(nb * (kQ80Bytes + kQ80ScaleBytes));
}
constexpr std::size_t q8_0_block_starts_offset(std::size_t nb) {
  return whole_lines(q8_0_lanes_offset(nb) + nb * kQ80LaneBytes);
}
constexpr std::size_t q8_0_lanes_row_bytes(std::size_t nb) {
  return whole_lines(q8_0_block_starts_offset(nb) + nb * kQ80BlockStartBytes);
}
inline constexpr int kQ40Bytes = 18;   // d f16 | qs u8[16] (lo: 0..15)
inline constexpr int kQ8KBytes = 292;  // d f32 | qs i8[256] | bsums i16[16]
inline constexpr int kQ8KQs = 4, kQ8KSums = 260;
// A row for the Q4_K and Q5_K dot kernels (Q8_KWithK4Groups) goes on, for
// each group of four blocks (the last one padded with zeros where the row
// has fewer), with what k4_row_lanes reads for four weight blocks at
// once: the blocks' f32 scales twice over (0-3, 0-3: the lanes of the
// weights' d and dmin), then each block's 8 sums of 32 codes as i16
// (|sum| <= 32 x 127), block i's at 16i, which the 256-bit dot_k4 also
// reads, a block at a time, for its min term.
inline constexpr int kQ8KGroupScales = 0, kQ8KGroupSums = 32;
inline constexpr int kQ8KGroupBytes = 32 + 64;
// Then, from the next 64-byte boundary (k4_lanes_offset), each block's 256
// codes again with their 32-code sub-blocks in the order 0, 2, 1, 3, 4, 6,
// 5, 7: the order in which one 64-byte load of a Q4_K/Q5_K block's nibbles
// (sub-blocks 2p and 2p + 1 in each 32 bytes), split by one affine map a
// nibble, holds its codes (k4_row_lanes).
inline constexpr int kQ8KK4Lanes = 256;
constexpr int k4_lane_sub_block(int chunk) {
  return 4 * (chunk / 4) + (chunk % 4 == 1   ? 2
                            : chunk % 4 == 2 ? 1
                                             : chunk % 4);
}
constexpr std::size_t k4_lanes_offset(std::size_t nb) {
  return whole_lines(nb * kQ8KBytes + (nb + 3) / 4 * kQ8KGroupBytes);
}
// A row for the IQ4_XS dot kernels (Q8_KWithIq4Lanes; the 512-bit and the
// 256-bit one) goes on, from
// the next 64-byte boundary (iq4_lanes_offset), with each block's 256 codes
// again in the order of the weights' nibbles (kQ8KIq4Lanes bytes a block):
// for sub-blocks 4h..4h+3 (h = 0, 1), codes 0-15 of each, then codes
// 16-31 of each, so that the low and the high nibbles of 64 weight bytes
// meet their activations in the same 128-bit lane with no shuffle.
inline constexpr int kQ8KIq4Lanes = 256;
constexpr std::size_t iq4_lanes_offset(std::size_t nb) {
  return whole_lines(nb * kQ8KBytes);
}
// Then, for each whole pair of blocks (iq4_pairs_offset), 128 x the sum of
// each 32-code sub-block's codes as i32 (the surplus of the kernel's
// biased table), in the order iq4_xs_row_lanes folds a pair's sums to:
// lane 4j + k is sub-block j (k = 0) or 4 + j (k = 1) of the first block,
// j (k = 2) or 4 + j (k = 3) of the second.
inline constexpr int kQ8KIq4PairBytes = 64;
constexpr std::size_t iq4_pairs_offset(std::size_t nb) {
  return iq4_lanes_offset(nb) + nb * kQ8KIq4Lanes;
}
// The sub-block of lane `lane` of a pair, 0-7 in the first block, 8-15 in
// the second.
constexpr int iq4_pair_sub_block(int lane) {
  return 8 * (lane % 4 / 2) + 4 * (lane % 2) + lane / 4;
}
inline constexpr int kQ4KBytes = 144;    // d | dmin | scales[12] | qs[128]
inline constexpr int kQ5KBytes = 176;    // d | dmin | scales[12] | qh[32] | qs
inline constexpr int kQ6KBytes = 210;    // ql[128] | qh[64] | scales i8[16] | d
inline constexpr int kIq4XsBytes = 136;  // d | scales_h u16 | scales_l[4] | qs
}  // namespace tessel::cpu::simd::layout

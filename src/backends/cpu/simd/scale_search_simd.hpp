// Highway kernels for the quantisers' scale searches (quant/k_blocks.cpp's
// search_scale_min and search_symmetric_scale, ggml's make_qkx2_quants and
// make_qx_quants; quant/iq4_codebook.hpp's iq4_group_scale, ggml's
// quantize_row_iq4_nl_impl): many candidate scales of one sub-block fitted
// at once, one per lane.
#pragma once

#include <cstdint>

namespace tessel::cpu::simd {

// One sub-block and the state of its search: codes are
// clamp(nearest_int(iscale * (x[i] - min)), 0, nmax) with, at step s,
// iscale = (rmin + rdelta * s + nmax) / (max - min).
struct ScaleMinSteps {
  const float* x;
  const float* weights;
  int n;
  int nmax;
  float rmin;
  float rdelta;
  bool use_mad;  // error |diff| instead of diff^2
  float min;
  float max;
  float sum_w;  // the sums of weights and of weights * x, in index order
  float sum_x;
};

// For steps first .. first + count - 1 (n <= 32): the weighted least
// squares fit of x by scale * code + min, and its weighted error, in
// scale[j], min[j] and error[j] for step first + j; error[j] is NaN where
// the fit is degenerate (ggml skips the step). Each lane does in order
// the f32 operations the scalar loop does (no FMA), so every value has
// the scalar bits.
void fit_scale_min_steps(const ScaleMinSteps& p, int first, int count,
                         float* scale, float* min, float* error);

// The symmetric search at steps s = first .. first + count - 1: codes l =
// clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1) with iscale = -(nmax + 0.1
// * s) / max, and their sums over i in order sumlx = sum(x^2 x l), suml2 =
// sum(x^2 l^2), the scalar loop's bits.
void symmetric_sums_steps(const float* x, int n, int nmax, float max, int first,
                          int count, float* sumlx, float* suml2);

// The IQ4 fit of a 32-value group at the inverse scales ids[c], c < count:
// each value's code is the codebook entry nearest ids[c] * x[j]
// (below the first entry the first, from the last the last, NaN the last;
// between two entries the lower where it is strictly nearer, as ggml's
// best_index_int8), and q its value; sumqx = sum(x^2 q x), sumq2 =
// sum(x^2 q q) over j in order, with the scalar loop's bits. `codebook`
// holds the 16 increasing entries.
void iq4_sums(const float* x, const std::int8_t* codebook, const float* ids,
              int count, float* sumqx, float* sumq2);

}  // namespace tessel::cpu::simd

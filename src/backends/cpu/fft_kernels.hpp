// The discrete Fourier transform of contiguous c128 rows (fft.cpp).
#pragma once

#include "backends/kernel_view.hpp"

namespace tessel::cpu {

// out[r, k] = sum_j in[r, j] e^(-+2 pi i jk / n) for every row r of the
// contiguous c128 `in` (rows of n = the last extent): the minus sign
// forward, plus when `inverse`; unscaled both ways. `out` is contiguous
// c128 of in's shape.
void fft_rows(const KernelInput& in, const KernelOutput& out, bool inverse);

}  // namespace tessel::cpu

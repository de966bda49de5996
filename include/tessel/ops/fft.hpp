// Discrete Fourier transforms (the array API's fft extension, NumPy's
// numpy.fft): one-dimensional along an axis and n-dimensional over axes,
// complex-to-complex, real-to-complex (rfft: the n/2 + 1 non-negative
// frequencies) and back, and the Hermitian pair. `n` pads with zeros or
// truncates the input along the axis first (E2102 when n < 1). `norm`
// scales as NumPy's: Backward leaves the forward transform unscaled and
// divides the inverse by n, Forward the other way round, Ortho divides
// both by sqrt(n).
//
// Dtypes: complex inputs keep their precision (c64 -> c64); real inputs of
// the complex transforms become complex of theirs (f64 -> c128, others
// c64); the real transforms map f64 <-> c128 and f32 (integers, narrow
// floats) <-> c64. Computed in f64 whatever the dtype (src/backends/cpu/
// fft.cpp), rounded once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tessel/core/tensor.hpp"

namespace tessel::fft {

enum class Norm : std::uint8_t { Backward, Ortho, Forward };

// Parses "backward", "ortho", "forward" (E2102 otherwise).
Norm parse_norm(std::string_view name);

Tensor fft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
           std::int64_t axis = -1, Norm norm = Norm::Backward);
Tensor ifft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
            std::int64_t axis = -1, Norm norm = Norm::Backward);
// Real input (E2201 for complex); n/2 + 1 outputs along the axis.
Tensor rfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
            std::int64_t axis = -1, Norm norm = Norm::Backward);
// The inverse of rfft: n real outputs (default 2 (m - 1) for m inputs);
// the imaginary parts of the zero and Nyquist terms are ignored.
Tensor irfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
             std::int64_t axis = -1, Norm norm = Norm::Backward);
// The transform of a Hermitian-symmetric signal given by its first half
// (a real spectrum), and its inverse (NumPy's hfft / ihfft).
Tensor hfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
            std::int64_t axis = -1, Norm norm = Norm::Backward);
Tensor ihfft(const Tensor& x, std::optional<std::int64_t> n = std::nullopt,
             std::int64_t axis = -1, Norm norm = Norm::Backward);

// Over several axes (all when `axes` is empty; the last len(s) when only
// `s` is given). An entry -1 in `s` keeps that axis's length.
Tensor fftn(const Tensor& x, std::span<const std::int64_t> s = {},
            std::span<const std::int64_t> axes = {},
            Norm norm = Norm::Backward);
Tensor ifftn(const Tensor& x, std::span<const std::int64_t> s = {},
             std::span<const std::int64_t> axes = {},
             Norm norm = Norm::Backward);
// rfft over the last of `axes`, then fft over the others.
Tensor rfftn(const Tensor& x, std::span<const std::int64_t> s = {},
             std::span<const std::int64_t> axes = {},
             Norm norm = Norm::Backward);
// ifft over all but the last of `axes`, then irfft over it (its output
// length s[-1], default 2 (m - 1)).
Tensor irfftn(const Tensor& x, std::span<const std::int64_t> s = {},
              std::span<const std::int64_t> axes = {},
              Norm norm = Norm::Backward);

}  // namespace tessel::fft

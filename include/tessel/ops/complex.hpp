// Complex tensors (c64, c128) and their parts. A c64 element is two f32,
// real then imaginary (std::complex<float>), so the parts are views with
// doubled strides, as PyTorch's view_as_real: writing through real(z)
// writes z. Autograd does not take complex tensors (E2201).
#pragma once

#include "tessel/core/tensor.hpp"

namespace tessel {

// z's components as a real view: c64 [..] -> f32 [.., 2] (c128 -> f64).
// E2201 for a real dtype.
Tensor view_as_real(const Tensor& z);

// The inverse view: f32/f64 [.., 2] -> c64/c128 [..]. The last axis must
// have size 2 and stride 1, every other stride and the offset must be even
// (each complex element is one aligned pair); E2102 otherwise, E2201 for
// other dtypes.
Tensor view_as_complex(const Tensor& x);

// The real part: a view of a complex tensor, the tensor itself otherwise.
Tensor real(const Tensor& x);

// The imaginary part: a view of a complex tensor; zeros of x's dtype for a
// real tensor (NumPy's rule).
Tensor imag(const Tensor& x);

// The complex conjugate, a new tensor; a real tensor is returned as it is.
Tensor conj(const Tensor& x);

// re + i im, broadcast, as a new complex tensor: c128 when either part is
// f64, c64 otherwise (integer and bool parts count as f32). E2201 when a
// part is complex.
Tensor make_complex(const Tensor& re, const Tensor& im);

}  // namespace tessel

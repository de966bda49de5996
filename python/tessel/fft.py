"""The array API's fft extension (2024.12) over tessel's transforms.

fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft and ihfft are the
C++ ones (tessel::fft: any length in O(n log n), computed in float64 and
rounded once to the result dtype); the frequency helpers and the shifts are
Python here. docs/fft.md says which dtypes come out.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import _tessel as _t
from ._array_api import _check_device, _error, isdtype
from ._errors import DTypeError
from ._tessel import Tensor
from ._tessel._fft import (  # noqa: F401 - re-exported
    fft, fftn, hfft, ifft, ifftn, ihfft, irfft, irfftn, rfft, rfftn,
)


def _frequency_dtype(dtype: Any) -> Any:
    if dtype is None:
        return _t.dtypes["float32"]  # the default real floating dtype
    if not isdtype(dtype, "real floating"):
        raise _error(DTypeError, "E2201", f"frequencies are real floating, not {dtype}")
    return dtype


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The sample frequencies of an n-point fft with sample spacing `d`:
    [0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d n)."""
    _check_device(device)
    if n < 1:
        raise ValueError(f"fftfreq needs n >= 1, got {n}")
    k = _t.arange(n, dtype=_t.dtypes["float64"])
    k = _t.where(k < (n - 1) // 2 + 1, k, k - n)
    return (k * (1.0 / (n * d))).astype(_frequency_dtype(dtype))  # NumPy multiplies


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Tensor:
    """The non-negative sample frequencies of an n-point rfft:
    [0, 1, ..., n//2] / (d n)."""
    _check_device(device)
    if n < 1:
        raise ValueError(f"rfftfreq needs n >= 1, got {n}")
    k = _t.arange(n // 2 + 1, dtype=_t.dtypes["float64"])
    return (k * (1.0 / (n * d))).astype(_frequency_dtype(dtype))  # NumPy multiplies


def _shift(x: Tensor, axes: int | Sequence[int] | None, sign: int) -> Tensor:
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    if not axes:
        return x
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    return _t.roll(x, shifts, axis=tuple(axes))


def fftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The zero frequency moved to the centre (half of each axis rolled)."""
    return _shift(x, axes, 1)


def ifftshift(x: Tensor, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift."""
    return _shift(x, axes, -1)


__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
    "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

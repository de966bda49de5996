"""The array API's linalg extension (2024.12) over tessel's ops.

The decompositions (cholesky, qr, eigh, svd, solve, inv, slogdet) are the
C++ ones (tessel::linalg, LAPACK on the CPU); the functions built from
them and from the element-wise ops and reductions (norms, pinv,
matrix_rank, matrix_power, cross, diagonal, trace) are Python here.
Matrices are the last two axes; leading axes are a batch.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

from . import _tessel as _t
from ._array_api import (
    _normalise_axis, _shape_error, isdtype, matrix_transpose, tensordot, vecdot,
)
from ._tessel import Tensor, _linalg
from ._tessel._linalg import (  # noqa: F401 - re-exported
    cholesky, det, eigvalsh, inv, solve, svdvals,
)

matmul = _t.matmul
outer = _t.outer


class EighResult(NamedTuple):
    """eigh's result: ascending eigenvalues, eigenvectors as columns."""
    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """qr's result."""
    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    """slogdet's result: the sign (0 for a singular matrix) and log|det|."""
    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    """svd's result: x = U @ diag(S) @ Vh."""
    U: Tensor
    S: Tensor
    Vh: Tensor


def eigh(x: Tensor, /) -> EighResult:
    """Eigenvalues (real, ascending) and eigenvectors of symmetric or
    Hermitian matrices, read from their lower triangle."""
    return EighResult(*_linalg.eigh(x))


def qr(x: Tensor, /, *, mode: str = "reduced") -> QRResult:
    """x = Q @ R ('reduced': Q has min(m, n) columns; 'complete': square Q)."""
    return QRResult(*_linalg.qr(x, mode=mode))


def slogdet(x: Tensor, /) -> SlogdetResult:
    """The sign and the natural log of |det| of square matrices."""
    return SlogdetResult(*_linalg.slogdet(x))


def svd(x: Tensor, /, *, full_matrices: builtins.bool = True) -> SVDResult:
    """x = U @ diag(S) @ Vh with S real and descending."""
    return SVDResult(*_linalg.svd(x, full_matrices=full_matrices))


def diagonal(x: Tensor, /, *, offset: int = 0) -> Tensor:
    """The diagonal `offset` (> 0 above the main one) of the last two axes."""
    if x.ndim < 2:
        raise _shape_error(f"diagonal needs matrices, got shape {x.shape}")
    rows, cols = x.shape[-2], x.shape[-1]
    if offset >= 0:
        length, start = builtins.max(0, builtins.min(rows, cols - offset)), offset
    else:
        length, start = builtins.max(0, builtins.min(rows + offset, cols)), -offset * cols
    flat = x.reshape(x.shape[:-2] + (rows * cols,))
    if length == 0:
        return _t.zeros(x.shape[:-2] + (0,), dtype=x.dtype)
    # Row i of the diagonal sits at start + i * (cols + 1) of each matrix.
    return flat[..., start:start + (length - 1) * (cols + 1) + 1:cols + 1]


def trace(x: Tensor, /, *, offset: int = 0, dtype: Any = None) -> Tensor:
    """The sum of the diagonal `offset` of each matrix (integers sum in
    int64, as sum does)."""
    return _t.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along `axis` (other axes broadcast)."""
    if x1.ndim == 0 or x2.ndim == 0:
        raise _shape_error("cross needs arrays with a vector axis")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise _shape_error(f"cross needs 3-vectors along axis {axis}, got shapes "
                           f"{x1.shape} and {x2.shape}")
    a = _t.permute_dims(x1, _axis_last(x1.ndim, axis))
    b = _t.permute_dims(x2, _axis_last(x2.ndim, axis))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = _t.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    ndim = c.ndim
    target = _normalise_axis(axis, ndim, "cross")
    order = list(range(ndim - 1))
    order.insert(target, ndim - 1)
    return _t.permute_dims(c, tuple(order))


def _axis_last(ndim: int, axis: int) -> tuple[int, ...]:
    a = _normalise_axis(axis, ndim, "cross")
    return tuple(i for i in range(ndim) if i != a) + (a,)


def matrix_power(x: Tensor, n: int, /) -> Tensor:
    """x multiplied by itself n times (by squaring); n < 0 inverts first."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise _shape_error(f"matrix_power needs square matrices, got shape {x.shape}")
    if n == 0:
        eye = _t.eye(x.shape[-1], dtype=x.dtype)
        return _t.broadcast_to(eye, x.shape).astype(x.dtype, copy=True)
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else _t.matmul(result, base)
        n >>= 1
        if n:
            base = _t.matmul(base, base)
    assert result is not None
    return result


def _eps(dtype: Any) -> float:
    return 2.0 ** -52 if dtype == _t.dtypes["float64"] else 2.0 ** -23


def matrix_rank(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The number of singular values above rtol * the largest one (rtol
    defaults to max(m, n) * eps, as NumPy)."""
    s = svdvals(x)
    if rtol is None:
        rtol = builtins.max(x.shape[-2:]) * _eps(s.dtype)
    if isinstance(rtol, Tensor):
        rtol = rtol[..., None]
    if s.shape[-1] == 0:
        return _t.zeros(s.shape[:-1], dtype=_t.dtypes["int64"])
    cutoff = _t.max(s, axis=-1, keepdims=True) * rtol
    return _t.sum(_t.gt(s, cutoff).astype(_t.dtypes["int64"]), axis=-1)


def pinv(x: Tensor, /, *, rtol: float | Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values below rtol * the
    largest count as zero (rtol defaults to max(m, n) * eps)."""
    u, s, vh = svd(x, full_matrices=False)
    if rtol is None:
        rtol = builtins.max(x.shape[-2:]) * _eps(s.dtype)
    if isinstance(rtol, Tensor):
        rtol = rtol[..., None]
    if s.shape[-1] == 0:
        return _t.zeros(x.shape[:-2] + (x.shape[-1], x.shape[-2]), dtype=u.dtype)
    cutoff = _t.max(s, axis=-1, keepdims=True) * rtol
    s_inv = _t.where(_t.gt(s, cutoff), _t.reciprocal(s), _t.zeros((), dtype=s.dtype))
    # V diag(1/s) U^H: conjugate transposes, which are plain ones for real x.
    v = _t.conj(matrix_transpose(vh))
    return _t.matmul(v * s_inv[..., None, :], _t.conj(matrix_transpose(u)))


def vector_norm(x: Tensor, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: builtins.bool = False, ord: float = 2) -> Tensor:  # noqa: A002
    """The ord-norm over `axis` (every axis when None): max|x| for inf,
    min|x| for -inf, the count of non-zeros for 0, else sum(|x|^ord)^(1/ord)."""
    a = _t.abs(x)
    if not isdtype(a.dtype, "real floating"):
        a = a.astype(_t.dtypes["float32"])
    if ord == math.inf:
        return _t.max(a, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return _t.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _t.sum(_t.ne(a, 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _t.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return _t.sqrt(_t.sum(a * a, axis=axis, keepdims=keepdims))
    return _t.pow(_t.sum(_t.pow(a, float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


def matrix_norm(x: Tensor, /, *, keepdims: builtins.bool = False,
                ord: float | str = "fro") -> Tensor:  # noqa: A002
    """Norms of the matrices in the last two axes: 'fro', 'nuc', 1 / -1
    (largest / smallest column sum of |x|), inf / -inf (row sums), 2 / -2
    (largest / smallest singular value)."""
    if x.ndim < 2:
        raise _shape_error(f"matrix_norm needs matrices, got shape {x.shape}")
    a = _t.abs(x)
    if ord == "fro":
        out = _t.sqrt(_t.sum(a * a, axis=(-2, -1)))
    elif ord == "nuc":
        out = _t.sum(svdvals(x), axis=-1)
    elif ord in (2, -2):
        s = svdvals(x)
        out = _t.max(s, axis=-1) if ord == 2 else _t.min(s, axis=-1)
    elif ord in (1, -1):
        sums = _t.sum(a, axis=-2)
        out = _t.max(sums, axis=-1) if ord == 1 else _t.min(sums, axis=-1)
    elif ord in (math.inf, -math.inf):
        sums = _t.sum(a, axis=-1)
        out = _t.max(sums, axis=-1) if ord == math.inf else _t.min(sums, axis=-1)
    else:
        raise ValueError(f"matrix_norm ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, "
                         f"got {ord!r}")
    return out[..., None, None] if keepdims else out


__all__ = [
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
    "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr",
    "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]

"""The parts of the Python array API standard (2024.12) that are Python
over tessel's own ops: constants, the data type functions, the standard's
names for ops tessel spells otherwise, and the functions composed from
several ops (tensordot, unique_*, diff, ...). The element-wise kernels, the
reductions and the indexing they call are the C++ ones.

The namespace is ``tessel`` itself (``x.__array_namespace__()`` returns
it). Where the standard and DESIGN §1 disagree, the Python package follows
the standard: ``int8 op int8`` stays int8 (C++ widens it to int16).
docs/python.md lists every such difference.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple, Sequence

from . import _tessel as _t
from ._errors import DeviceError, DTypeError, ShapeError, TesselError
from ._tessel import Tensor

e: float = math.e
pi: float = math.pi
inf: float = math.inf
nan: float = math.nan
newaxis = None

_d = _t.dtypes
_SIGNED = tuple(_d[n] for n in ("int8", "int16", "int32", "int64", "int4"))
_UNSIGNED = tuple(_d[n] for n in ("uint8", "uint16", "uint32", "uint64", "uint4"))
_REAL_FLOATING = tuple(_d[n] for n in ("float16", "bfloat16", "float32", "float64",
                                        "float8_e4m3fn", "float8_e5m2"))
_COMPLEX_FLOATING = (_d["complex64"], _d["complex128"])
_BOOL = _d["bool"]
_INT64 = _d["int64"]
_UINT64 = _d["uint64"]
_FLOAT32 = _d["float32"]


# ---- data type functions --------------------------------------------------

_KINDS = {
    "bool": (_BOOL,),
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED + _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX_FLOATING,
    "numeric": _SIGNED + _UNSIGNED + _REAL_FLOATING + _COMPLEX_FLOATING,
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """Whether `dtype` is of `kind`: a dtype, one of the standard's kind names
    ("bool", "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric") or a tuple of either. tessel's narrow
    floats (float16, bfloat16, float8) are real floating; int4/uint4 are
    integers; the block-quantised types belong to no kind."""
    if not isinstance(dtype, _t.dtype):
        raise TypeError(f"isdtype expects a tessel dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _t.dtype):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype in _KINDS[kind]
    raise TypeError(f"isdtype kind must be a dtype, a kind name or a tuple, got {kind!r}")


def _promote(a: _t.dtype, b: _t.dtype) -> _t.dtype:
    # The standard keeps int8 with int8; every other pair the standard
    # defines promotes as DESIGN §1 does, and the pairs it leaves undefined
    # (integer with float, bool with number, the narrow floats) follow DESIGN.
    if a == b:
        return a
    return _t._promote_types(a, b)


def _scalar_dtype(value: Any, other: _t.dtype) -> _t.dtype:
    # A Python scalar takes the dtype of the array it meets when their kinds
    # agree (the standard's rule); across kinds, tessel's weak-scalar rule.
    if isinstance(value, builtins.bool):
        return other
    if isinstance(value, int):
        return other if other != _BOOL else _INT64
    if isinstance(value, float):
        if isdtype(other, ("real floating", "complex floating")):
            return other
        return _FLOAT32
    if isinstance(value, complex):
        if isdtype(other, "complex floating"):
            return other
        return _d["complex128"] if other == _d["float64"] else _d["complex64"]
    raise TypeError(f"result_type got {type(value).__name__}: expected arrays, dtypes "
                    "or Python bool, int, float and complex scalars")


def result_type(*arrays_and_dtypes: Any) -> _t.dtype:
    """The dtype the standard's type promotion gives for these arrays, dtypes
    and Python scalars (at least one array or dtype)."""
    dtypes = [x.dtype if isinstance(x, Tensor) else x for x in arrays_and_dtypes
              if isinstance(x, (Tensor, _t.dtype))]
    if not dtypes:
        raise TypeError("result_type needs at least one array or dtype")
    result = dtypes[0]
    for d in dtypes[1:]:
        result = _promote(result, d)
    for x in arrays_and_dtypes:
        if not isinstance(x, (Tensor, _t.dtype)):
            result = _promote(result, _scalar_dtype(x, result))
    return result


def can_cast(from_: Any, to: _t.dtype, /) -> builtins.bool:
    """Whether promotion (the standard's, for dtypes of the same kind) turns
    `from_` (a dtype or an array) into `to` without a cast across kinds."""
    src = from_.dtype if isinstance(from_, Tensor) else from_
    if src == to:
        return True
    if src == _BOOL or to == _BOOL:
        return False
    if isdtype(src, "complex floating") and not isdtype(to, "complex floating"):
        return False
    if isdtype(src, "real floating") and not isdtype(to, ("real floating",
                                                          "complex floating")):
        return False
    if isdtype(src, "integral") and isdtype(to, ("real floating", "complex floating")):
        return False
    try:
        return _promote(src, to) == to
    except DTypeError:
        return False


class finfo_object(NamedTuple):
    """Machine limits of a floating-point dtype (`finfo`)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: _t.dtype


class iinfo_object(NamedTuple):
    """Machine limits of an integer dtype (`iinfo`)."""
    bits: int
    max: int
    min: int
    dtype: _t.dtype


# (mantissa bits, largest finite value, smallest normal) per float dtype;
# float8_e4m3fn has no infinity, so its largest value is 448 (OCP FP8).
_FLOAT_LIMITS = {
    "float16": (10, 65504.0, 2.0 ** -14),
    "bfloat16": (7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126),
    "float32": (23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126),
    "float64": (52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022),
    "float8_e4m3fn": (3, 448.0, 2.0 ** -6),
    "float8_e5m2": (2, 57344.0, 2.0 ** -14),
}


def finfo(type: Any, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Limits of a floating-point dtype (or an array's dtype); a complex
    dtype gives its component's limits, with the component dtype (the
    standard's rule)."""
    dt = type.dtype if isinstance(type, Tensor) else type
    if isinstance(dt, _t.dtype) and isdtype(dt, "complex floating"):
        dt = _d["float32"] if dt == _d["complex64"] else _d["float64"]
    if not isinstance(dt, _t.dtype) or dt.name not in _FLOAT_LIMITS:
        raise TypeError(f"finfo expects a floating-point dtype, got {dt!r}")
    mantissa, largest, tiny = _FLOAT_LIMITS[dt.name]
    return finfo_object(dt.bits, 2.0 ** -mantissa, largest, -largest, tiny, dt)


def iinfo(type: Any, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Limits of an integer dtype (or an array's dtype)."""
    dt = type.dtype if isinstance(type, Tensor) else type
    if not isinstance(dt, _t.dtype) or not isdtype(dt, "integral"):
        raise TypeError(f"iinfo expects an integer dtype, got {dt!r}")
    bits = dt.bits
    if dt in _SIGNED:
        return iinfo_object(bits, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), dt)
    return iinfo_object(bits, 2 ** bits - 1, 0, dt)


def astype(x: Tensor, dtype: _t.dtype, /, *, copy: builtins.bool = True,
           device: Any = None) -> Tensor:
    """`x` converted to `dtype` (a new array unless `copy=False` and nothing
    needs converting)."""
    _check_device(device)
    if x.dtype == dtype and not copy:
        return x
    return x.astype(dtype, copy=True)


def _check_device(device: Any) -> None:
    if device is not None and device != "cpu" and str(device) != "cpu":
        raise _error(DeviceError, "E2501", f"{device!r} is not available: this build of "
                     "tessel serves the 'cpu' device")


# ---- creation -------------------------------------------------------------

def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialised array of `x`'s shape (and dtype unless given)."""
    _check_device(device)
    return _t.empty(x.shape, dtype=x.dtype if dtype is None else dtype)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Zeros of `x`'s shape (and dtype unless given)."""
    _check_device(device)
    return _t.zeros(x.shape, dtype=x.dtype if dtype is None else dtype)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Ones of `x`'s shape (and dtype unless given)."""
    _check_device(device)
    return _t.ones(x.shape, dtype=x.dtype if dtype is None else dtype)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None,
              device: Any = None) -> Tensor:
    """`fill_value` in `x`'s shape (and dtype unless given)."""
    _check_device(device)
    return _t.full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype)


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list[Tensor]:
    """Coordinate grids from 1-D arrays: views broadcast to the grid's shape
    ("xy": the first two axes swapped, as NumPy; "ij": matrix indexing)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid indexing must be 'xy' or 'ij', got {indexing!r}")
    for a in arrays:
        if a.ndim != 1:
            raise _shape_error(f"meshgrid takes 1-D arrays, got shape {a.shape}")
    if len({a.dtype for a in arrays}) > 1:
        raise _error(DTypeError, "E2201", "meshgrid arrays must share one dtype, got "
                     + ", ".join(str(a.dtype) for a in arrays))
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = i
        if indexing == "xy" and len(arrays) > 1 and i < 2:
            axis = 1 - i
        shape = [1] * len(arrays)
        shape[axis] = a.shape[0]
        out.append(_t.broadcast_to(a.reshape(tuple(shape)), tuple(sizes)))
    return out


def _error(cls: type[TesselError], code: str, message: str) -> TesselError:
    # As the C++ errors read: the message, then the DESIGN §2 code, which
    # the exception also carries as `.code`.
    return cls(f"{message} [{code}]", code)


def _shape_error(message: str, code: str = "E2102") -> TesselError:
    return _error(ShapeError, code, message)


# ---- the standard's names for tessel's element-wise ops -------------------

subtract = _t.sub
multiply = _t.mul
divide = _t.div
negative = _t.neg
less = _t.lt
less_equal = _t.le
greater = _t.gt
greater_equal = _t.ge
not_equal = _t.ne
bitwise_invert = _t.bitwise_not

def positive(x: Tensor, /) -> Tensor:
    """+x: a copy of `x` (numeric dtypes)."""
    if x.dtype == _BOOL:
        raise _error(DTypeError, "E2201", "positive takes a numeric array, not bool")
    return x.astype(x.dtype, copy=True)


# ---- linear algebra in the main namespace ---------------------------------

def matrix_transpose(x: Tensor, /) -> Tensor:
    """The last two axes swapped (a view); `x` must have two or more."""
    if x.ndim < 2:
        raise _shape_error(f"matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    return x.mT


def _normalise_axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise _shape_error(f"{what}: axis {axis} is out of range for {ndim} dimensions")
    return axis % ndim


def tensordot(x1: Tensor, x2: Tensor, /, *,
              axes: int | tuple[Sequence[int], Sequence[int]] = 2) -> Tensor:
    """Sum of products over `axes` (the last n of x1 with the first n of x2,
    or two lists of axes): one matmul over the permuted, reshaped operands."""
    if isinstance(axes, int):
        if axes < 0 or axes > builtins.min(x1.ndim, x2.ndim):
            raise _shape_error(f"tensordot axes={axes} does not fit shapes {x1.shape} and {x2.shape}")
        a1 = list(range(x1.ndim - axes, x1.ndim))
        a2 = list(range(axes))
    else:
        a1 = [_normalise_axis(a, x1.ndim, "tensordot") for a in axes[0]]
        a2 = [_normalise_axis(a, x2.ndim, "tensordot") for a in axes[1]]
        if len(a1) != len(a2):
            raise _shape_error(f"tensordot axes {axes} pair {len(a1)} axes with {len(a2)}")
    for i, j in zip(a1, a2):
        if x1.shape[i] != x2.shape[j]:
            raise _shape_error(f"tensordot contracts axis {i} of {x1.shape} (size "
                               f"{x1.shape[i]}) with axis {j} of {x2.shape} (size "
                               f"{x2.shape[j]})", "E2103")
    free1 = [i for i in range(x1.ndim) if i not in a1]
    free2 = [j for j in range(x2.ndim) if j not in a2]
    k = math.prod(x1.shape[i] for i in a1)
    m = math.prod(x1.shape[i] for i in free1)
    n = math.prod(x2.shape[j] for j in free2)
    dtype = result_type(x1, x2)
    lhs = _t.permute_dims(x1.astype(dtype, copy=False), tuple(free1 + a1)).reshape((m, k))
    rhs = _t.permute_dims(x2.astype(dtype, copy=False), tuple(a2 + free2)).reshape((k, n))
    out_shape = tuple(x1.shape[i] for i in free1) + tuple(x2.shape[j] for j in free2)
    return _t.matmul(lhs, rhs).reshape(out_shape).astype(dtype, copy=False)


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1) -> Tensor:
    """The dot product of vectors along `axis`, broadcasting the others."""
    n1, n2 = x1.ndim, x2.ndim
    if axis >= 0 or -axis > builtins.min(n1, n2):
        raise _shape_error(f"vecdot axis {axis} must be negative and exist in shapes "
                           f"{x1.shape} and {x2.shape}")
    if x1.shape[axis] != x2.shape[axis]:
        raise _shape_error(f"vecdot: axis {axis} has size {x1.shape[axis]} in "
                           f"{x1.shape} and {x2.shape[axis]} in {x2.shape}", "E2103")
    # The sum in the operands' dtype (the standard's), not sum's widening of
    # integers.
    product = multiply(_t.conj(x1), x2)
    return _t.sum(product, axis=axis, dtype=product.dtype)


# ---- manipulation ---------------------------------------------------------

def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape that `shapes` broadcast to (NumPy's rule)."""
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if n == out[j] or n == 1:
                continue
            if out[j] != 1:
                raise _shape_error("shapes " + ", ".join(str(tuple(s)) for s in shapes)
                                   + " do not broadcast", "E2101")
            out[j] = n
    return tuple(out)


def broadcast_arrays(*arrays: Tensor) -> list[Tensor]:
    """Views of `arrays` broadcast to one shape."""
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [_t.broadcast_to(a, shape) for a in arrays]


def moveaxis(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int],
             /) -> Tensor:
    """A view with the axes `source` moved to `destination`, the others in order."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise _shape_error(f"moveaxis: {len(src)} source axes but {len(dst)} destinations")
    src = [_normalise_axis(a, x.ndim, "moveaxis") for a in src]
    dst = [_normalise_axis(a, x.ndim, "moveaxis") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise _shape_error(f"moveaxis: repeated axes in {source} or {destination}")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _t.permute_dims(x, tuple(order))


def unstack(x: Tensor, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """Views of `x`'s slices along `axis`."""
    if x.ndim == 0:
        raise _shape_error("unstack needs at least one dimension")
    axis = _normalise_axis(axis, x.ndim, "unstack")
    lead = (slice(None),) * axis
    return tuple(x[lead + (i,)] for i in range(x.shape[axis]))


# ---- statistics and utilities ---------------------------------------------

def _default_accumulator(dtype: _t.dtype) -> _t.dtype:
    # The standard's sum/prod/cumulative dtypes: signed integers and bool
    # accumulate in the default integer type, unsigned in its unsigned twin.
    if dtype == _BOOL or dtype in _SIGNED:
        return _INT64
    if dtype in _UNSIGNED:
        return _UINT64
    return dtype


def count_nonzero(x: Tensor, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: builtins.bool = False) -> Tensor:
    """The number of non-zero elements (int64), along `axis`."""
    return _t.sum(_t.ne(x, 0).astype(_INT64), axis=axis, keepdims=keepdims)


def _cumulative(x: Tensor, axis: int | None, dtype: Any, include_initial: builtins.bool,
                op: Any, initial: int, name: str) -> Tensor:
    if axis is None:
        if x.ndim != 1:
            raise _shape_error(f"{name} without an axis takes a 1-D array, got shape {x.shape}")
        axis = 0
    axis = _normalise_axis(axis, x.ndim, name)
    acc = _default_accumulator(x.dtype) if dtype is None else dtype
    out = op(x.astype(acc, copy=False), axis=axis)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = _t.concat([_t.full(tuple(shape), initial, dtype=acc), out], axis=axis)
    return out


def cumulative_sum(x: Tensor, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: builtins.bool = False) -> Tensor:
    """Running sums along `axis` (integers accumulate in int64/uint64)."""
    return _cumulative(x, axis, dtype, include_initial, _t.cumsum, 0, "cumulative_sum")


def cumulative_prod(x: Tensor, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: builtins.bool = False) -> Tensor:
    """Running products along `axis` (integers accumulate in int64/uint64)."""
    return _cumulative(x, axis, dtype, include_initial, _t.cumprod, 1, "cumulative_prod")


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `axis` (`!=` for bool, as NumPy)."""
    if n < 0:
        raise ValueError(f"diff order n must be non-negative, got {n}")
    if x.ndim == 0:
        raise _shape_error("diff needs at least one dimension")
    axis = _normalise_axis(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _t.concat(parts, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        hi, lo = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        x = _t.ne(hi, lo) if x.dtype == _BOOL else subtract(hi, lo)
    return x


# ---- sets and searching ----------------------------------------------------

equal = _t.eq


class UniqueAllResult(NamedTuple):
    """unique_all's result."""
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """unique_counts's result."""
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """unique_inverse's result."""
    values: Tensor
    inverse_indices: Tensor


def _unique(x: Tensor) -> UniqueAllResult:
    # One stable sort: a value starts wherever it differs from the one
    # before it (NaN differs from everything, so each NaN is its own value,
    # as the standard says; -0 and +0 are one value).
    flat = x.reshape((-1,))
    n = flat.shape[0]
    order = _t.argsort(flat)
    ordered = _t.take(flat, order)
    if n == 0:
        empty_index = _t.zeros((0,), dtype=_INT64)
        return UniqueAllResult(ordered, empty_index, empty_index.reshape(x.shape),
                               empty_index)
    starts_mask = _t.concat([_t.ones((1,), dtype=_BOOL),
                             _t.ne(ordered[1:], ordered[:-1])])
    (starts,) = _t.nonzero(starts_mask)
    values = _t.take(ordered, starts)
    first = _t.take(order, starts)  # the stable sort keeps first occurrences first
    counts = diff(_t.concat([starts, _t.full((1,), n, dtype=_INT64)]))
    group = _t.cumsum(starts_mask.astype(_INT64), 0) - 1
    # The inverse permutation of `order` carries each group back to its
    # element's place.
    inverse = _t.take(group, _t.argsort(order)).reshape(x.shape)
    return UniqueAllResult(values, first, inverse, counts)


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """The unique values (sorted, NaN last, every NaN distinct), the index of
    each one's first occurrence, each element's value index (x's shape) and
    the counts."""
    return _unique(x)


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """The unique values and how often each occurs."""
    r = _unique(x)
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """The unique values and, for each element of x, the index of its value."""
    r = _unique(x)
    return UniqueInverseResult(r.values, r.inverse_indices)


def unique_values(x: Tensor, /) -> Tensor:
    """The unique values, sorted (NaN last; every NaN is its own value)."""
    # Values only: one sort, no permutation to carry indices back.
    ordered = _t.sort(x.reshape((-1,)))
    if ordered.shape[0] == 0:
        return ordered
    starts_mask = _t.concat([_t.ones((1,), dtype=_BOOL),
                             _t.ne(ordered[1:], ordered[:-1])])
    return ordered[starts_mask]


def isin(x1: Tensor, x2: Tensor, /, *, invert: builtins.bool = False) -> Tensor:
    """Whether each element of x1 occurs in x2 (NaN never does)."""
    candidates = _t.sort(_t.asarray(x2).reshape((-1,)))
    if candidates.shape[0] == 0:
        found = _t.zeros(x1.shape, dtype=_BOOL)
    else:
        at = _t.minimum(_t.searchsorted(candidates, x1), candidates.shape[0] - 1)
        found = _t.eq(_t.take(candidates, at.reshape((-1,))).reshape(x1.shape), x1)
    return _t.logical_not(found) if invert else found


# ---- inspection ------------------------------------------------------------

class _NamespaceInfo:
    """What this namespace offers (the standard's __array_namespace_info__)."""

    def capabilities(self) -> dict[str, Any]:
        """Optional features: boolean-mask indexing, data-dependent output
        shapes (nonzero, unique_*), the largest rank."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> str:
        """The device arrays are made on when none is given."""
        return "cpu"

    def devices(self) -> list[str]:
        """The devices this build serves."""
        return ["cpu"]

    def default_dtypes(self, *, device: Any = None) -> dict[str, _t.dtype]:
        """The dtypes Python floats and ints become, and index arrays have."""
        _check_device(device)
        return {"real floating": _FLOAT32, "complex floating": _d["complex64"],
                "integral": _INT64, "indexing": _INT64}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, _t.dtype]:
        """The standard's dtypes this namespace has, by name (of `kind`)."""
        _check_device(device)
        names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"]
        return {n: _d[n] for n in names if kind is None or isdtype(_d[n], kind)}


def __array_namespace_info__() -> _NamespaceInfo:
    """The namespace's inspection object (devices, default and supported dtypes)."""
    return _NamespaceInfo()


__all__ = [
    "e", "pi", "inf", "nan", "newaxis",
    "isdtype", "result_type", "can_cast", "finfo", "iinfo", "finfo_object",
    "iinfo_object", "astype",
    "empty_like", "zeros_like", "ones_like", "full_like", "meshgrid",
    "subtract", "multiply", "divide", "negative", "less", "less_equal", "greater",
    "greater_equal", "not_equal", "equal", "bitwise_invert", "positive",
    "matrix_transpose", "tensordot", "vecdot",
    "broadcast_shapes", "broadcast_arrays", "moveaxis", "unstack",
    "count_nonzero", "cumulative_sum", "cumulative_prod", "diff",
    "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult",
    "unique_all", "unique_counts", "unique_inverse", "unique_values", "isin",
]

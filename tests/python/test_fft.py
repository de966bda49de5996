"""tessel.fft, the array API's fft extension, differentially against
array-api-strict (NumPy's pocketfft underneath).

Tolerances: tessel computes every transform in float64 and rounds once;
pocketfft computes complex64 in float32. The error of either is a few
eps * log2(n) of the largest magnitude, so results are compared as
|got - want| <= tol * max|want| per transform with tol 2e-6 (complex64 /
float32: float32's eps times a log n of 11 and margin) and 1e-13 (float64),
and exactly for the frequencies and the shifts, which are arithmetic only.
"""

import itertools
import math

import numpy as np
import pytest

import tessel

from strict_oracle import both, to_numpy, xp

LENGTHS = [1, 2, 5, 8, 12, 31, 37, 64, 101, 128, 1000]


def signal(rng, shape, dtype):
    if dtype.startswith("complex"):
        part = np.float32 if dtype == "complex64" else np.float64
        out = np.empty(shape, dtype)
        out.real = rng.standard_normal(shape).astype(part)
        out.imag = rng.standard_normal(shape).astype(part)
        return out
    return rng.standard_normal(shape).astype(dtype)


def assert_transform(got, want, context):
    g, w = to_numpy(got), to_numpy(want)
    assert g.dtype == w.dtype, f"{context}: dtype {g.dtype} != {w.dtype}"
    assert g.shape == w.shape, f"{context}: shape {g.shape} != {w.shape}"
    if w.size == 0:
        return
    tol = 2e-6 if w.dtype in (np.complex64, np.float32) else 1e-13
    scale = max(np.abs(w).max(), 1e-30)
    err = np.abs(g.astype(np.complex128) - w).max()
    assert err <= tol * scale, f"{context}: error {err} of {scale}"


@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_complex_transforms_match(name, rng):
    for dtype, n_in, norm in itertools.product(["complex64", "complex128"], LENGTHS,
                                               ["backward", "ortho", "forward"]):
        t, s = both(signal(rng, (3, n_in), dtype))
        for n in (None, n_in + 3, max(1, n_in // 2)):
            want = getattr(xp.fft, name)(s, n=n, norm=norm)
            got = getattr(tessel.fft, name)(t, n=n, norm=norm)
            assert_transform(got, want, f"{name}({dtype}[3, {n_in}], n={n}, {norm})")
    # Along the first axis of a 3-D array.
    t, s = both(signal(rng, (6, 2, 3), "complex128"))
    assert_transform(getattr(tessel.fft, name)(t, axis=0), getattr(xp.fft, name)(s, axis=0),
                     f"{name} axis 0")


@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_real_to_complex_transforms_match(name, rng):
    for dtype, n_in, norm in itertools.product(["float32", "float64"], LENGTHS,
                                               ["backward", "ortho", "forward"]):
        t, s = both(signal(rng, (2, n_in), dtype))
        for n in (None, n_in + 1):
            want = getattr(xp.fft, name)(s, n=n, norm=norm)
            got = getattr(tessel.fft, name)(t, n=n, norm=norm)
            assert_transform(got, want, f"{name}({dtype}[2, {n_in}], n={n}, {norm})")


@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_complex_to_real_transforms_match(name, rng):
    for dtype, m, norm in itertools.product(["complex64", "complex128"], [2, 3, 5, 17, 33, 65],
                                            ["backward", "ortho", "forward"]):
        t, s = both(signal(rng, (2, m), dtype))
        for n in (None, 2 * m - 1, 4, 1):
            want = getattr(xp.fft, name)(s, n=n, norm=norm)
            got = getattr(tessel.fft, name)(t, n=n, norm=norm)
            assert_transform(got, want, f"{name}({dtype}[2, {m}], n={n}, {norm})")


def test_n_dimensional_transforms_match(rng):
    cases = [((4, 6), None, None), ((3, 4, 5), None, (0, 2)), ((3, 4, 5), (5, 2), (2, 0)),
             ((2, 3, 8), (-1, 3, 4), None), ((6, 7), (8,), None)]
    for shape, s_, axes in cases:
        for norm in ("backward", "ortho"):
            ctx = f"{shape} s={s_} axes={axes} {norm}"
            t, s = both(signal(rng, shape, "complex128"))
            for name in ("fftn", "ifftn"):
                kw = {"s": s_, "axes": axes, "norm": norm}
                if s_ is not None and -1 in s_:
                    # The standard's -1 ("keep the length") is newer than
                    # NumPy 1.24: the oracle gets the length itself.
                    kw_np = dict(kw, s=[shape[i] if v == -1 else v for i, v in enumerate(s_)])
                else:
                    kw_np = kw
                assert_transform(getattr(tessel.fft, name)(t, **kw),
                                 getattr(xp.fft, name)(s, **kw_np), f"{name} {ctx}")
            if s_ is not None and -1 in s_:
                continue
            tr, sr = both(signal(rng, shape, "float64"))
            assert_transform(tessel.fft.rfftn(tr, s=s_, axes=axes, norm=norm),
                             xp.fft.rfftn(sr, s=s_, axes=axes, norm=norm), f"rfftn {ctx}")
            spectrum = xp.fft.rfftn(sr, axes=axes, norm=norm)
            ts = tessel.asarray(to_numpy(spectrum))
            out_s = s_ if s_ is not None else ([shape[a] for a in axes] if axes else list(shape))
            assert_transform(tessel.fft.irfftn(ts, s=out_s, axes=axes, norm=norm),
                             xp.fft.irfftn(spectrum, s=out_s, axes=axes, norm=norm),
                             f"irfftn {ctx}")


def test_frequencies_and_shifts_match_exactly():
    for n, d in itertools.product([1, 2, 7, 8, 101], [1.0, 0.1, 3.0]):
        for name in ("fftfreq", "rfftfreq"):
            got = getattr(tessel.fft, name)(n, d=d, dtype=tessel.float64)
            want = getattr(xp.fft, name)(n, d=d, dtype=xp.float64)
            np.testing.assert_array_equal(to_numpy(got), to_numpy(want), err_msg=f"{name}({n}, {d})")
    assert tessel.fft.fftfreq(4).dtype == tessel.float32  # the default real floating dtype
    for shape, axes in [((7,), None), ((4, 5), None), ((4, 5), 1), ((4, 5), (0,)), ((3, 4, 5), (0, 2))]:
        values = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
        t, s = both(values)
        for name in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(to_numpy(getattr(tessel.fft, name)(t, axes=axes)),
                                          to_numpy(getattr(xp.fft, name)(s, axes=axes)),
                                          err_msg=f"{name}({shape}, {axes})")


def test_dtypes_and_errors():
    x = tessel.ones((4,), dtype=tessel.float32)
    # Real input to the complex transforms is promoted (NumPy accepts it;
    # the standard asks for complex input).
    assert tessel.fft.fft(x).dtype == tessel.complex64
    assert tessel.fft.fft(tessel.ones((4,), dtype=tessel.float64)).dtype == tessel.complex128
    assert tessel.fft.irfft(tessel.fft.rfft(x)).dtype == tessel.float32
    for call, error in [(lambda: tessel.fft.fft(x, n=0), tessel.ShapeError),
                        (lambda: tessel.fft.fft(tessel.asarray(1.0)), tessel.ShapeError),
                        (lambda: tessel.fft.fft(x, axis=1), tessel.ShapeError),
                        (lambda: tessel.fft.fft(x, norm="sideways"), tessel.ShapeError),
                        (lambda: tessel.fft.rfft(tessel.fft.fft(x)), tessel.DTypeError),
                        (lambda: tessel.fft.fftn(tessel.ones((2, 2)), axes=(0, 0)), tessel.ShapeError),
                        (lambda: tessel.fft.fftfreq(4, dtype=tessel.int32), tessel.DTypeError)]:
        with pytest.raises(error):
            call()
    assert tessel.fft.fft(tessel.ones((0, 4))).shape == (0, 4)


def test_namespace_has_the_extension():
    wanted = [n for n in dir(xp.fft) if not n.startswith("_") and callable(getattr(xp.fft, n))
              and n in xp.fft.__all__]
    assert sorted(n for n in wanted if not hasattr(tessel.fft, n)) == []
    x = tessel.ones((2,), dtype=tessel.complex64)
    assert x.__array_namespace__().fft is tessel.fft

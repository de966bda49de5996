"""complex64 and complex128, differentially against array-api-strict (the
array API's reference implementation, over NumPy) and NumPy itself.

Comparisons: add, subtract, negation, conj, real, imag, the predicates
and comparisons are exact, NaN and Inf parts included. multiply and divide
use NumPy's formulas (the textbook product, Smith's division) and agree
exactly with NumPy's scalar loops, but NumPy's AVX-512 loops fuse a
multiply-add, so there they are compared within a few ulp of |want| (NaN
and Inf parts still exactly). Transcendental functions are compared on finite
values within |got - want| <= rtol * |want| (complex modulus) + tiny, with
rtol 2e-6 for complex64 and 1e-13 for complex128: both sides call a libm
(glibc's c* functions through std::complex here, npymath there), which may
differ in the last bits of each part. Sums and products accumulate in a
different order than NumPy's pairwise sums: rtol 1e-5 / 1e-12 of the
largest magnitude summed.
"""

import math
import warnings

import numpy as np
import pytest

import tessel

from strict_oracle import both, to_numpy, xp

COMPLEX = ["complex64", "complex128"]
SHAPES = [(), (0,), (7,), (2, 3)]


def random_complex(rng, shape, dtype, finite=False):
    """Complex values whose parts mix normal values with +-0, +-Inf and NaN
    (only +-0 and small specials when `finite`)."""
    part = np.float32 if dtype == "complex64" else np.float64
    n = math.prod(shape)
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e-3]
    if not finite:
        specials += [np.nan, np.inf, -np.inf]
    parts = []
    for _ in range(2):
        v = (rng.standard_normal(n) * 3).astype(part)
        mask = rng.random(n) < 0.3
        v[mask] = rng.choice(np.array(specials, dtype=part), size=int(mask.sum()))
        parts.append(v)
    out = np.empty(n, dtype)
    out.real, out.imag = parts  # not parts[0] + 1j * parts[1]: 1j * inf has a NaN
    return out.reshape(shape)


def assert_complex(got, want, *, rtol=0.0, context=""):
    assert got.dtype.name == str(want.dtype).rsplit(".", 1)[-1], \
        f"{context}: dtype {got.dtype} != {want.dtype}"
    g, w = to_numpy(got), to_numpy(want)
    assert g.shape == w.shape, f"{context}: shape {g.shape} != {w.shape}"
    if g.dtype.kind != "c":
        if g.dtype.kind == "f" and rtol:
            np.testing.assert_allclose(g, w, rtol=rtol, err_msg=context)
        else:
            assert np.array_equal(g, w, equal_nan=g.dtype.kind == "f"), f"{context}: {g} != {w}"
        return
    for part in ("real", "imag"):
        gp, wp = getattr(g, part), getattr(w, part)
        assert np.array_equal(np.isnan(gp), np.isnan(wp)), f"{context}: NaN {part}s {g} vs {w}"
        inf = np.isinf(wp)
        assert np.array_equal(gp[inf], wp[inf]), f"{context}: infinite {part}s {g} vs {w}"
    finite = np.isfinite(w)
    if rtol == 0.0:
        assert np.array_equal(g[finite], w[finite]), f"{context}: {g} != {w}"
    else:
        tiny = np.finfo(g.real.dtype).tiny
        err = np.abs(g[finite].astype(np.complex128) - w[finite])
        bound = rtol * np.abs(w[finite]) + tiny
        assert np.all(err <= bound), f"{context}: {g} vs {w} (errors {err})"


EXACT_UNARY = ["negative", "positive", "conj", "real", "imag", "isnan", "isinf",
               "isfinite", "square", "abs"]
TRANSCENDENTAL = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin",
                  "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
                  "asinh", "acosh", "atanh", "reciprocal", "sign"]


@pytest.mark.parametrize("name", EXACT_UNARY)
def test_exact_unary_functions_match_array_api_strict(name, rng):
    for dtype in COMPLEX:
        for shape in SHAPES:
            values = random_complex(rng, shape, dtype)
            t, s = both(values)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = getattr(xp, name)(s)
            got = getattr(tessel, name)(t)
            # abs is hypot: NumPy's SIMD loop and libm's hypotf may differ
            # in the last bit (2 ulp allowed).
            rtol = {"abs": 2.5e-7 if dtype == "complex64" else 3e-16}.get(name, 0.0)
            assert_complex(got, want, rtol=rtol, context=f"{name}({dtype}{list(shape)}) {values!r}")


@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_transcendental_functions_match_array_api_strict(name, rng):
    for dtype in COMPLEX:
        for shape in SHAPES:
            values = random_complex(rng, shape, dtype, finite=True)
            t, s = both(values)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = getattr(xp, name)(s)
            got = getattr(tessel, name)(t)
            rtol = 2e-6 if dtype == "complex64" else 1e-13
            assert_complex(got, want, rtol=rtol, context=f"{name}({dtype}{list(shape)}) {values!r}")


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "equal",
                                  "not_equal", "pow"])
def test_binary_functions_match_array_api_strict(name, rng):
    for da in COMPLEX:
        for db in COMPLEX:
            for sa, sb in [((), ()), ((7,), (7,)), ((2, 3), (3,)), ((0, 3), (1, 3))]:
                finite = name == "pow"
                a = random_complex(rng, sa, da, finite)
                b = random_complex(rng, sb, db, finite)
                if name == "pow":
                    # Small exponents: large ones overflow differently.
                    b = (b / 4).astype(db)
                (ta, xa), (tb, xb) = both(a), both(b)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    want = getattr(xp, name)(xa, xb)
                got = getattr(tessel, name)(ta, tb)
                wide = "complex128" in (da, db)
                # NumPy's AVX-512 loops for * and / fuse a multiply-add
                # (one rounding less than the textbook formula tessel and
                # NumPy's scalar loop compute): a few ulp of |want| apart.
                rtol = {"pow": 1e-12 if wide else 2e-5,
                        "multiply": 1e-15 if wide else 5e-7,
                        "divide": 1e-15 if wide else 5e-7}.get(name, 0.0)
                assert_complex(got, want, rtol=rtol, context=f"{name}({da}{list(sa)}, {db}{list(sb)})")


def test_mixed_kind_promotion_matches_numpy():
    # Arrays: a complex operand makes the result complex at the wider
    # precision (complex64 with float64 is complex128, the standard's table).
    for real, cplx, want in [("float32", "complex64", "complex64"),
                             ("float64", "complex64", "complex128"),
                             ("float32", "complex128", "complex128"),
                             ("int32", "complex64", "complex64"),
                             ("bool", "complex128", "complex128")]:
        a = tessel.ones((2,), dtype=getattr(tessel, real))
        b = tessel.ones((2,), dtype=getattr(tessel, cplx))
        assert (a + b).dtype == getattr(tessel, want), (real, cplx)
        assert tessel.result_type(a, b) == getattr(tessel, want)
    # The dtype functions against the standard's table, complex pairs and
    # real-complex pairs.
    names = ["float32", "float64", "complex64", "complex128"]
    for da in names:
        for db in names:
            want = str(xp.result_type(getattr(xp, da), getattr(xp, db))).rsplit(".", 1)[-1]
            assert tessel.result_type(getattr(tessel, da), getattr(tessel, db)).name == want
            assert tessel.can_cast(getattr(tessel, da), getattr(tessel, db)) == \
                xp.can_cast(getattr(xp, da), getattr(xp, db)), (da, db)
    # Python complex scalars are weak: the array's precision.
    assert (tessel.ones((2,), dtype=tessel.float64) * 1j).dtype == tessel.complex128
    assert (tessel.ones((2,), dtype=tessel.float32) * 1j).dtype == tessel.complex64
    assert (tessel.ones((2,), dtype=tessel.int64) + 2j).dtype == tessel.complex64
    assert tessel.result_type(tessel.float64, 1j) == tessel.complex128
    np.testing.assert_array_equal(np.asarray(tessel.asarray([1.0, 2.0]) * 1j), [1j, 2j])
    # From Python lists: complex64 (the default complex), as floats give float32.
    assert tessel.asarray([1 + 2j, 3]).dtype == tessel.complex64
    assert tessel.can_cast(tessel.float32, tessel.complex64)
    assert not tessel.can_cast(tessel.complex64, tessel.float64)
    assert tessel.isdtype(tessel.complex64, "complex floating")
    assert tessel.isdtype(tessel.complex128, "numeric")
    assert tessel.finfo(tessel.complex64).eps == np.finfo(np.float32).eps
    assert tessel.finfo(tessel.complex128).dtype == tessel.float64


@pytest.mark.parametrize("name", ["sum", "prod", "mean"])
def test_reductions_match_array_api_strict(name, rng):
    for dtype in COMPLEX:
        for shape, axis in [((), None), ((0,), None), ((7,), None), ((3, 4), 0),
                            ((3, 4), -1), ((2, 3, 4), (0, 2)), ((2, 0), 1)]:
            values = random_complex(rng, shape, dtype, finite=True)
            t, s = both(values)
            for keepdims in (False, True):
                want = getattr(xp, name)(s, axis=axis, keepdims=keepdims)
                got = getattr(tessel, name)(t, axis=axis, keepdims=keepdims)
                w = to_numpy(want)
                assert got.dtype.name == dtype and tuple(got.shape) == w.shape
                g = to_numpy(got)
                scale = np.abs(values).max() if values.size else 1.0
                if name == "prod":
                    scale = np.abs(w).max() if w.size and np.isfinite(w).all() else 1.0
                tol = (1e-5 if dtype == "complex64" else 1e-12) * max(scale, 1.0)
                np.testing.assert_allclose(g, w, rtol=0, atol=tol,
                                           err_msg=f"{name}({dtype}{list(shape)}, {axis})")


def test_cumulative_sum_and_prod_match_array_api_strict(rng):
    for dtype in COMPLEX:
        for shape, axis, initial in [((5,), None, False), ((3, 4), 1, True), ((3, 4), 0, False),
                                     ((0,), None, True)]:
            values = random_complex(rng, shape, dtype, finite=True)
            t, s = both(values)
            for name in ("cumulative_sum", "cumulative_prod"):
                want = getattr(xp, name)(s, axis=axis, include_initial=initial)
                got = getattr(tessel, name)(t, axis=axis, include_initial=initial)
                assert got.dtype.name == dtype, name
                # Relative to the largest magnitude: products of a few
                # values, each rounded once in c128 here and per step in
                # NumPy's own dtype there.
                scale = max(1.0, float(np.max(np.abs(to_numpy(want)), initial=0)))
                np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-5,
                                           atol=1e-5 * scale, err_msg=f"{name} {dtype}{shape}")


def test_matmul_and_vecdot_match_numpy(rng):
    for da, db in [("complex64", "complex64"), ("complex128", "complex64"),
                   ("float32", "complex64"), ("complex128", "float64")]:
        for sa, sb in [((3, 4), (4, 5)), ((2, 3, 4), (4,)), ((4,), (4,)), ((0, 4), (4, 2))]:
            def make(shape, dtype):
                if dtype.startswith("complex"):
                    return random_complex(rng, shape, dtype, finite=True)
                return rng.standard_normal(shape).astype(dtype)
            a, b = make(sa, da), make(sb, db)
            got = tessel.matmul(tessel.asarray(a), tessel.asarray(b))
            want = np.matmul(a, b)
            assert got.dtype.name == want.dtype.name
            tol = 1e-5 if want.dtype == np.complex64 else 1e-12
            np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol * 10,
                                       err_msg=f"{da}{sa} @ {db}{sb}")


def test_vecdot_conjugates_the_first_operand(rng):
    a = random_complex(rng, (3, 4), "complex64", finite=True)
    b = random_complex(rng, (4,), "complex64", finite=True)
    (ta, xa), (tb, xb) = both(a), both(b)
    got, want = tessel.vecdot(ta, tb), xp.vecdot(xa, xb)
    assert got.dtype == tessel.complex64
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=1e-5, atol=1e-5)


def test_parts_are_views_and_interchange_is_zero_copy():
    values = np.array([1 + 2j, 3 - 4j, -0.0 + 0.0j], np.complex64)
    t = tessel.asarray(values)  # DLPack: kDLComplex, no copy
    assert t.dtype == tessel.complex64
    assert np.shares_memory(np.asarray(t), values)
    t.imag[0] = 9  # a view: writes reach NumPy's array
    assert values[0] == 1 + 9j
    assert np.asarray(t.real).tolist() == [1.0, 3.0, -0.0]
    assert tessel.view_as_real(t).shape == (3, 2)
    assert tessel.view_as_complex(tessel.view_as_real(t)).shares_memory(t)
    # The buffer protocol speaks complex too ('Zf'), and so does DLPack out.
    assert memoryview(t).format == "Zf"
    back = np.from_dlpack(t)
    assert back.dtype == np.complex64 and np.shares_memory(back, values)
    c128 = tessel.asarray(np.array([1j], np.complex128))
    assert memoryview(c128).format == "Zd"
    # Scalars and lists.
    assert complex(tessel.asarray(np.complex64(2 - 1j))) == 2 - 1j
    assert tessel.asarray(np.array([1 + 1j])).tolist() == [1 + 1j]
    assert tessel.asarray(np.array(3j)).item() == 3j
    with pytest.raises(TypeError):
        float(tessel.asarray(np.array(3j)))
    z = tessel.complex(tessel.asarray([1.0, 2.0]), tessel.asarray([3.0, 4.0]))
    assert z.dtype == tessel.complex64 and z.tolist() == [1 + 3j, 2 + 4j]
    full = tessel.full((2,), 1 - 1j)
    assert full.dtype == tessel.complex64 and full.tolist() == [1 - 1j, 1 - 1j]


def test_printing_matches_numpy():
    values = np.array([[1 + 2j, -3 - 4.5j], [np.nan + 1j, complex(1, np.inf)]])
    body = repr(values)[len("array("):-1].replace("\n" + " " * 7, "\n" + " " * 15)
    assert repr(tessel.asarray(values)) == f"tessel.Tensor({body}, dtype=complex128)"
    assert repr(tessel.asarray(np.array([0.1 + 1e-5j, 100 + 2j], np.complex64))) == \
        "tessel.Tensor([  0.1+1.e-05j, 100. +2.e+00j], dtype=complex64)"


def test_files_keep_complex_values(tmp_path):
    values = np.array([[1 + 2j, -0.5j], [np.inf + 0j, 3]], np.complex128)
    path = tmp_path / "z.npy"
    np.save(path, values)
    loaded = tessel.load_npy(str(path))
    assert loaded.dtype == tessel.complex128
    np.testing.assert_array_equal(np.asarray(loaded), values)
    out = tmp_path / "out.npy"
    tessel.save_npy(str(out), tessel.asarray(values.astype(np.complex64)))
    np.testing.assert_array_equal(np.load(out), values.astype(np.complex64))
    # Big-endian files swap each part on its own.
    big = tmp_path / "big.npy"
    np.save(big, values.astype(">c16"))
    np.testing.assert_array_equal(np.asarray(tessel.load_npy(str(big))), values)
    # The tensor descriptor names them COMPLEX64 / COMPLEX128.
    raw = tmp_path / "z.bin"
    values.tofile(raw)
    descriptor = tessel.describe(tessel.asarray(values))
    assert '"COMPLEX128"' in descriptor
    np.testing.assert_array_equal(np.asarray(tessel.tensor_from_descriptor(descriptor, raw)),
                                  values)


def test_ops_without_a_complex_meaning_raise_dtype_errors():
    z = tessel.asarray(np.array([1 + 1j], np.complex64))
    for call in (lambda: tessel.floor(z), lambda: tessel.less(z, z),
                 lambda: tessel.max(z), lambda: tessel.maximum(z, z),
                 lambda: tessel.sort(z), lambda: z.astype(tessel.float32),
                 lambda: tessel.argmax(z)):
        with pytest.raises(tessel.DTypeError) as e:
            call()
        assert e.value.code == "E2201"
    with pytest.raises(tessel.DTypeError):
        tessel.Variable(z, requires_grad=True)


def test_safetensors_keeps_complex64(tmp_path):
    from safetensors.numpy import load_file, save_file
    values = np.array([1 + 2j, -0.5j, np.inf], np.complex64)
    path = tmp_path / "z.safetensors"
    tessel.save_safetensors(path, {"z": tessel.asarray(values)})
    np.testing.assert_array_equal(load_file(str(path))["z"], values)
    other = tmp_path / "ref.safetensors"
    save_file({"z": values}, str(other))  # the reference writer's "C64"
    loaded = tessel.load_safetensors(other)["z"]
    assert loaded.dtype == tessel.complex64
    np.testing.assert_array_equal(np.asarray(loaded), values)
    with pytest.raises(tessel.DTypeError):  # the format has no complex128
        tessel.save_safetensors(tmp_path / "c128.safetensors",
                                {"z": tessel.asarray(values.astype(np.complex128))})


def test_indexing_moves_whole_complex_elements():
    values = np.array([1j, 2, 3 + 3j, -4 - 4j], np.complex64)
    z = tessel.asarray(values.copy())
    np.testing.assert_array_equal(np.asarray(z[[3, 0]]), values[[3, 0]])
    np.testing.assert_array_equal(np.asarray(z[::-2]), values[::-2])
    mask = np.array([True, False, True, False])
    np.testing.assert_array_equal(np.asarray(z[tessel.asarray(mask)]), values[mask])
    z[[0, 2]] = tessel.asarray(np.array([5j, 6], np.complex64))
    want = values.copy()
    want[[0, 2]] = [5j, 6]
    np.testing.assert_array_equal(np.asarray(z), want)
    z[tessel.asarray(mask)] = 7 - 1j
    want[mask] = 7 - 1j
    np.testing.assert_array_equal(np.asarray(z), want)
    stacked = tessel.stack([z, z])
    assert stacked.dtype == tessel.complex64 and stacked.shape == (2, 4)
    np.testing.assert_array_equal(np.asarray(tessel.concat([z, z])), np.concatenate([want, want]))
    np.testing.assert_array_equal(np.asarray(tessel.where(tessel.asarray(mask), z, 0)),
                                  np.where(mask, want, 0))

"""tessel.linalg (the array API's linalg extension) against array-api-strict
(NumPy's LAPACK underneath) on random batches of well-conditioned
matrices, float32, float64, complex64 and complex128, including empty
batches.

Tolerances: results of a factorisation depend on rounding in every step,
so they are compared relatively: float64 and complex128 within 1e-10,
float32 and complex64 within 2e-4 of the reference (the matrices' condition numbers are below ~50, so
LAPACK's backward-stable results differ by a few ulp times that).
Decompositions whose factors are unique only up to signs (eigh's vectors,
svd's U and Vh, qr's Q and R) are compared through what is unique: the
values, the reconstruction and the projectors (for complex matrices
the factors are unique up to unit-modulus phases, and the same
comparisons hold with conjugate transposes).
"""

import math

import numpy as np
import pytest

import tessel

from strict_oracle import both, to_numpy, xp

RTOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}
BATCHES = [(), (3,), (2, 2), (0,)]
DTYPES = ["float32", "float64", "complex64", "complex128"]


def close(got, want, dtype, context, scale=1.0):
    g, w = to_numpy(got), to_numpy(want)
    assert g.shape == w.shape, f"{context}: {g.shape} != {w.shape}"
    assert g.dtype == w.dtype, f"{context}: {g.dtype} != {w.dtype}"
    atol = RTOL[dtype] * scale * max(1.0, float(np.max(np.abs(w), initial=0)))
    np.testing.assert_allclose(g, w, rtol=RTOL[dtype], atol=atol, err_msg=context)


def normal(rng, shape, dtype):
    """Standard normal values; complex ones have independent parts."""
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a


def conj_t(a):
    return np.conj(np.swapaxes(a, -1, -2))


def well_conditioned(rng, batch, n, dtype, m=None):
    m = n if m is None else m
    a = normal(rng, batch + (m, n), dtype)
    if m == n:
        a = a + 2 * n * np.eye(n)  # diagonally heavy: condition number small
    return a.astype(dtype)


def spd(rng, batch, n, dtype):
    """Symmetric (Hermitian for complex) positive definite matrices."""
    a = normal(rng, batch + (n, n), dtype)
    return (a @ conj_t(a) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_square_functions_match(dtype, rng):
    for batch in BATCHES:
        for n in (1, 3, 5):
            values = well_conditioned(rng, batch, n, dtype)
            t, s = both(values)
            ctx = f"{dtype}{batch + (n, n)}"
            close(tessel.linalg.det(t), xp.linalg.det(s), dtype, "det " + ctx)
            sign_t, log_t = tessel.linalg.slogdet(t)
            sign_s, log_s = xp.linalg.slogdet(s)
            close(sign_t, sign_s, dtype, "slogdet sign " + ctx)
            close(log_t, log_s, dtype, "slogdet log " + ctx)
            close(tessel.linalg.inv(t), xp.linalg.inv(s), dtype, "inv " + ctx)
            rhs = normal(rng, batch + (n, 2), dtype).astype(dtype)
            tr, sr = both(rhs)
            close(tessel.linalg.solve(t, tr), xp.linalg.solve(s, sr), dtype, "solve " + ctx)
            for power in (-2, 0, 1, 3):
                close(tessel.linalg.matrix_power(t, power), xp.linalg.matrix_power(s, power),
                      dtype, f"matrix_power {power} " + ctx)
            sym = spd(rng, batch, n, dtype)
            ts, ss = both(sym)
            close(tessel.linalg.cholesky(ts), xp.linalg.cholesky(ss), dtype, "cholesky " + ctx)
            close(tessel.linalg.cholesky(ts, upper=True), xp.linalg.cholesky(ss, upper=True),
                  dtype, "cholesky upper " + ctx)
            close(tessel.linalg.eigvalsh(ts), xp.linalg.eigvalsh(ss), dtype, "eigvalsh " + ctx)
            w, v = tessel.linalg.eigh(ts)
            close(w, xp.linalg.eigh(ss).eigenvalues, dtype, "eigh values " + ctx)
            # Eigenvectors: unique up to sign (phase), so compare
            # V diag(w) V^H = a.
            vn, wn = to_numpy(v), to_numpy(w)
            assert vn.dtype == np.dtype(dtype), ctx
            rebuilt = (vn * wn[..., None, :]) @ conj_t(vn)
            np.testing.assert_allclose(rebuilt, sym, rtol=RTOL[dtype] * 10,
                                       atol=RTOL[dtype] * 10 * n * n, err_msg="eigh " + ctx)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rectangular_functions_match(dtype, rng):
    for batch in BATCHES:
        for m, n in ((4, 2), (2, 5), (3, 3)):
            values = well_conditioned(rng, batch, n, dtype, m)
            t, s = both(values)
            ctx = f"{dtype}{batch + (m, n)}"
            close(tessel.linalg.svdvals(t), xp.linalg.svdvals(s), dtype, "svdvals " + ctx)
            for full in (False, True):
                u, sv, vh = tessel.linalg.svd(t, full_matrices=full)
                ref = xp.linalg.svd(s, full_matrices=full)
                assert u.shape == ref.U.shape and vh.shape == ref.Vh.shape, ctx
                close(sv, ref.S, dtype, "svd S " + ctx)
                k = min(m, n)
                un, sn, vn = to_numpy(u), to_numpy(sv), to_numpy(vh)
                rebuilt = (un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :]
                np.testing.assert_allclose(rebuilt, values, rtol=RTOL[dtype] * 10,
                                           atol=RTOL[dtype] * 10 * max(m, n), err_msg=ctx)
            for mode in ("reduced", "complete"):
                q, r = tessel.linalg.qr(t, mode=mode)
                ref = xp.linalg.qr(s, mode=mode)
                assert q.shape == ref.Q.shape and r.shape == ref.R.shape, (mode, ctx)
                # Q and R are unique up to the signs of R's rows.
                r_abs = abs(to_numpy(r))
                close(r_abs, abs(to_numpy(ref.R)).astype(r_abs.dtype), dtype,
                      f"qr R {mode} " + ctx)
                qn = to_numpy(q)
                gram = conj_t(qn) @ qn
                np.testing.assert_allclose(gram, np.broadcast_to(np.eye(qn.shape[-1]), gram.shape),
                                           atol=RTOL[dtype] * 10, err_msg=f"qr Q^H Q {ctx}")
                np.testing.assert_allclose(to_numpy(q) @ to_numpy(r), values,
                                           rtol=RTOL[dtype] * 10, atol=RTOL[dtype] * 10 * m,
                                           err_msg=ctx)
            close(tessel.linalg.pinv(t), xp.linalg.pinv(s), dtype, "pinv " + ctx, scale=10)
            assert np.array_equal(to_numpy(tessel.linalg.matrix_rank(t)),
                                  to_numpy(xp.linalg.matrix_rank(s))), ctx
            for ord_ in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
                for keepdims in (False, True):
                    close(tessel.linalg.matrix_norm(t, ord=ord_, keepdims=keepdims),
                          xp.linalg.matrix_norm(s, ord=ord_, keepdims=keepdims), dtype,
                          f"matrix_norm {ord_} " + ctx)
            close(tessel.linalg.diagonal(t, offset=1), xp.linalg.diagonal(s, offset=1), dtype,
                  "diagonal " + ctx)
            close(tessel.linalg.trace(t, offset=-1), xp.linalg.trace(s, offset=-1), dtype,
                  "trace " + ctx)


def test_vector_functions_match(rng):
    values = rng.standard_normal((3, 4, 3)).astype(np.float64)
    values[0, 0, 0] = 0.0
    t, s = both(values)
    for ord_ in (2, 1, 0, 3, 0.5, math.inf, -math.inf, -1):
        for axis in (None, -1, (0, 2)):
            close(tessel.linalg.vector_norm(t, axis=axis, ord=ord_),
                  xp.linalg.vector_norm(s, axis=axis, ord=ord_), "float64",
                  f"vector_norm {ord_} {axis}")
    other = rng.standard_normal((4, 3)).astype(np.float64)
    to, so = both(other)
    close(tessel.linalg.cross(t, to), xp.linalg.cross(s, so), "float64", "cross")
    close(tessel.linalg.cross(t, to, axis=-1), xp.linalg.cross(s, so, axis=-1), "float64",
          "cross axis")
    close(tessel.linalg.vecdot(t, to), xp.linalg.vecdot(s, so), "float64", "vecdot")
    close(tessel.linalg.tensordot(t, to, axes=2), xp.linalg.tensordot(s, so, axes=2),
          "float64", "tensordot")
    v1, v2 = both(values[0, 0])
    close(tessel.linalg.outer(v1, v1), xp.linalg.outer(v2, v2), "float64", "outer")
    i1, i2 = both(np.array([100, -3, 7], np.int8))
    assert np.array_equal(to_numpy(tessel.linalg.outer(i1, i1)), to_numpy(xp.linalg.outer(i2, i2)))
    close(tessel.linalg.matmul(t, tessel.linalg.matrix_transpose(t)),
          xp.linalg.matmul(s, xp.linalg.matrix_transpose(s)), "float64", "matmul")


def test_complex_vector_functions_match(rng):
    # vecdot conjugates its first argument; the norms are of the moduli.
    values = normal(rng, (3, 4, 3), "complex128")
    values[0, 0, 0] = 0.0
    other = normal(rng, (4, 3), "complex128")
    t, s = both(values)
    to, so = both(other)
    for ord_ in (2, 1, 0, 3, math.inf, -math.inf):
        close(tessel.linalg.vector_norm(t, axis=-1, ord=ord_),
              xp.linalg.vector_norm(s, axis=-1, ord=ord_), "float64", f"vector_norm {ord_}")
    close(tessel.linalg.vecdot(t, to), xp.linalg.vecdot(s, so), "complex128", "vecdot")
    close(tessel.linalg.cross(t, to), xp.linalg.cross(s, so), "complex128", "cross")
    close(tessel.linalg.tensordot(t, to, axes=2), xp.linalg.tensordot(s, so, axes=2),
          "complex128", "tensordot")
    close(tessel.linalg.outer(t[0, 0, :], to[0, :]), xp.linalg.outer(s[0, 0, :], so[0, :]),
          "complex128", "outer")


def test_errors_are_specific():
    singular = tessel.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(tessel.NumericsError) as e:
        tessel.linalg.inv(singular)
    assert e.value.code == "E2401" and "singular" in str(e.value)
    with pytest.raises(tessel.NumericsError):
        tessel.linalg.cholesky(tessel.asarray(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(tessel.DTypeError):
        tessel.linalg.det(tessel.ones((2, 2), dtype=tessel.int32))
    with pytest.raises(tessel.ShapeError):
        tessel.linalg.inv(tessel.ones((2, 3)))
    with pytest.raises(ValueError):
        tessel.linalg.matrix_norm(tessel.ones((2, 2)), ord=3)


def test_every_linalg_name_exists():
    wanted = [n for n in dir(xp.linalg) if not n.startswith("_") and callable(getattr(xp.linalg, n))
              and n not in {"Array", "DType", "EigResult", "Literal", "NamedTuple", "Sequence",
                            "finfo", "get_array_api_strict_flags", "normalize_axis_tuple",
                            "partial", "requires_api_version", "requires_extension", "reshape",
                            "eig", "eigvals", "conj"}]
    missing = sorted(n for n in wanted if not hasattr(tessel.linalg, n))
    assert missing == []


def test_bf16_matmul_precision_rounds_the_activations_of_bf16_weights():
    # By hand: 1 + 2**-10 rounds to 1 in bf16, so 64 of them against bf16
    # ones give 64 instead of 64.0625; f32 weights keep the exact product.
    w = tessel.ones((2, 64), dtype=tessel.bfloat16)
    for m in (1, 3):
        x = tessel.full((m, 64), 1 + 2**-10)
        assert tessel.get_matmul_precision() == "f32"
        np.testing.assert_array_equal(np.asarray(tessel.linear(x, w)), 64.0625)
        tessel.set_matmul_precision("bf16")
        try:
            assert tessel.get_matmul_precision() == "bf16"
            np.testing.assert_array_equal(np.asarray(tessel.linear(x, w)), 64.0)
            np.testing.assert_array_equal(
                np.asarray(tessel.linear(x, w.astype(tessel.float32))), 64.0625)
        finally:
            tessel.set_matmul_precision("f32")
    with pytest.raises(tessel.DTypeError, match="E2201"):
        tessel.set_matmul_precision("tf32")

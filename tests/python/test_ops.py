"""Module functions and operators against NumPy (the oracle), over random
values with broadcasting, for every element-wise op of the op tables that
NumPy has, the reductions and matmul.

Tolerances: float32 element-wise results within 2 ulp-ish (rtol 2e-6)
except the transcendental SIMD bodies (rtol 1e-5: tessel's Highway
polynomials are accurate to a few ulp, NumPy's libm to < 1 ulp); float64
exact to 1e-12; integers exact. Sums of n float32 values accumulate in
float32 blocks or wider: rtol 1e-5 for n up to 10^4.
"""

import operator

import numpy as np
import pytest

import tessel

UNARY = {
    "neg": (np.negative, 0), "abs": (np.abs, 0), "sign": (np.sign, 0),
    "sqrt": (np.sqrt, 1e-6), "exp": (np.exp, 1e-5), "expm1": (np.expm1, 1e-5),
    "log": (np.log, 1e-5), "log1p": (np.log1p, 1e-5), "log2": (np.log2, 1e-5),
    "sin": (np.sin, 1e-5), "cos": (np.cos, 1e-5), "tanh": (np.tanh, 1e-5),
    "floor": (np.floor, 0), "ceil": (np.ceil, 0), "round": (np.round, 0),
    "trunc": (np.trunc, 0), "reciprocal": (np.reciprocal, 1e-6),
    "isnan": (np.isnan, 0), "isinf": (np.isinf, 0), "isfinite": (np.isfinite, 0),
    "logical_not": (np.logical_not, 0),
    "relu": (lambda x: np.maximum(x, 0), 0),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x.astype(np.float64))), 1e-5),
    "silu": (lambda x: x / (1 + np.exp(-x.astype(np.float64))), 1e-5),
    "rsqrt": (lambda x: 1 / np.sqrt(x.astype(np.float64)), 1e-5),
}

BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}

SHAPE_PAIRS = [((5,), (5,)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((0, 3), (3,))]


def positive_where_needed(name, a):
    if name in ("sqrt", "log", "log2", "rsqrt"):
        return np.abs(a) + 0.1
    if name == "log1p":
        return np.abs(a)
    return a


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_matches_numpy(name, dtype, rng):
    reference, rtol = UNARY[name]
    a = positive_where_needed(name, rng.standard_normal((3, 7)) * 3).astype(dtype)
    a[0, :3] = [0.0, -0.0, 0.5] if name not in ("sqrt", "log", "log2", "rsqrt") else a[0, :3]
    got = np.asarray(getattr(tessel, name)(tessel.asarray(a)))
    with np.errstate(divide="ignore", invalid="ignore"):  # 1/0 is inf on both sides
        expected = reference(a)
    if dtype == np.float64:
        rtol = min(rtol, 1e-12) if rtol else 0
    np.testing.assert_allclose(got, expected.astype(got.dtype), rtol=rtol, atol=rtol * 1e-3)


def test_unary_specials_match_numpy():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45], np.float32)
    t = tessel.asarray(a)
    for name in ("abs", "neg", "floor", "ceil", "exp", "isnan", "isinf", "isfinite", "sign"):
        np.testing.assert_array_equal(np.asarray(getattr(tessel, name)(t)),
                                      UNARY[name][0](a), err_msg=name)
    # Signed zeros survive negation.
    assert np.signbit(np.asarray(tessel.neg(tessel.asarray(np.float32(0.0)))))


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
def test_binary_matches_numpy(name, shapes, rng):
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    if name in ("eq", "ne", "le", "ge"):
        b = np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)).copy()
        a = np.broadcast_to(a, b.shape).copy()
        a.flat[::2] = b.flat[::2]
    got = np.asarray(getattr(tessel, name)(tessel.asarray(a), tessel.asarray(b)))
    expected = BINARY[name](a, b)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_integer_ops_are_exact(rng):
    a = rng.integers(-50, 50, (4, 5)).astype(np.int32)
    b = rng.integers(1, 9, (5,)).astype(np.int32)
    ta, tb = tessel.asarray(a), tessel.asarray(b)
    np.testing.assert_array_equal(np.asarray(ta // tb), a // b)
    np.testing.assert_array_equal(np.asarray(ta % tb), a % b)
    np.testing.assert_array_equal(np.asarray(ta & tb), a & b)
    np.testing.assert_array_equal(np.asarray(ta | tb), a | b)
    np.testing.assert_array_equal(np.asarray(ta ^ tb), a ^ b)
    np.testing.assert_array_equal(np.asarray(~ta), ~a)
    np.testing.assert_array_equal(np.asarray(ta ** 2), a ** 2)


OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt,
             operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", OPERATORS, ids=lambda f: f.__name__)
def test_operators_with_tensors_scalars_and_numpy(op, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    ta, tb = tessel.asarray(a), tessel.asarray(b)
    np.testing.assert_allclose(np.asarray(op(ta, tb)), op(a, b), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(op(ta, 1.5)), op(a, np.float32(1.5)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(op(2, ta)), op(np.float32(2), a), rtol=1e-6)
    # NumPy on the left defers to tessel: the result is a tessel tensor.
    mixed = op(b, ta)
    assert isinstance(mixed, tessel.Tensor)
    np.testing.assert_allclose(np.asarray(mixed), op(b, a), rtol=1e-6)


def test_python_scalars_do_not_widen():
    t = tessel.asarray([1, 2], dtype=tessel.int8)
    assert (t + 1).dtype == tessel.int8
    assert (t * 2.5).dtype == tessel.float32
    h = tessel.asarray([1.0], dtype=tessel.float16)
    assert (h + 1.0).dtype == tessel.float16


def test_in_place_operators_write_through_views():
    t = tessel.zeros((2, 3))
    row = t[1]
    row += 2
    row *= tessel.asarray([1.0, 2.0, 3.0])
    assert t.tolist() == [[0, 0, 0], [2, 4, 6]]
    i = tessel.asarray([1, 2], dtype=tessel.int32)
    with pytest.raises(tessel.DTypeError):
        i += 0.5


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "max", "min"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims, rng):
    a = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    got = getattr(tessel, name)(tessel.asarray(a), axis=axis, keepdims=keepdims)
    expected = getattr(np, name if name not in ("max", "min") else "a" + name)(
        a, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)
    # The method form is the same function.
    method = getattr(tessel.asarray(a), name)(axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(np.asarray(method), np.asarray(got))


def test_var_std_argmax_softmax_cumsum_match_numpy(rng):
    a = rng.standard_normal((4, 6)).astype(np.float64)
    t = tessel.asarray(a)
    np.testing.assert_allclose(np.asarray(tessel.var(t, axis=1)), a.var(axis=1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tessel.std(t, correction=1)), a.std(ddof=1), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(tessel.argmax(t, axis=0)), a.argmax(axis=0))
    np.testing.assert_array_equal(np.asarray(tessel.argmin(t)), a.argmin())
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(tessel.softmax(t)), e / e.sum(-1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tessel.cumsum(t, axis=1)), a.cumsum(axis=1), rtol=1e-12)
    assert tessel.any(tessel.asarray([0, 0, 1])).item() is True
    assert tessel.all(tessel.asarray([1, 0])).item() is False


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)),
                                    ((5,), (5,)), ((2, 1, 3, 4), (5, 4, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_matches_numpy(shapes, dtype, rng):
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    expected = a @ b
    got = tessel.asarray(a) @ tessel.asarray(b)
    assert got.shape == expected.shape
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(got), expected, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(tessel.matmul(a, b)), expected, rtol=rtol, atol=rtol)


def test_matmul_inner_mismatch_is_e2103():
    with pytest.raises(tessel.ShapeError) as e:
        tessel.ones((2, 3)) @ tessel.ones((4, 2))
    assert e.value.code == "E2103"


def test_shape_functions_match_numpy(rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = tessel.asarray(a)
    np.testing.assert_array_equal(np.asarray(tessel.concat([t, t], axis=1)), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(np.asarray(tessel.stack([t, t], axis=0)), np.stack([a, a]))
    np.testing.assert_array_equal(np.asarray(tessel.permute_dims(t, (2, 0, 1))), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(tessel.flip(t, axis=1)), np.flip(a, 1))
    np.testing.assert_array_equal(np.asarray(tessel.roll(t, 2, axis=2)), np.roll(a, 2, 2))
    np.testing.assert_array_equal(np.asarray(tessel.tile(t, (1, 2, 1))), np.tile(a, (1, 2, 1)))
    np.testing.assert_array_equal(np.asarray(tessel.tril(t[0])), np.tril(a[0]))
    np.testing.assert_array_equal(np.asarray(tessel.sort(t, axis=-1)), np.sort(a, -1))
    np.testing.assert_array_equal(np.asarray(tessel.where(t > 0, t, 0.0)), np.where(a > 0, a, 0))
    np.testing.assert_array_equal(np.asarray(tessel.clip(t, -0.5, 0.5)), np.clip(a, -0.5, 0.5))
    np.testing.assert_array_equal(np.asarray(tessel.broadcast_to(t[0, 0], (3, 4))),
                                  np.broadcast_to(a[0, 0], (3, 4)))
    np.testing.assert_array_equal(np.asarray(tessel.take(t, [2, 0], axis=1)), np.take(a, [2, 0], 1))
    np.testing.assert_allclose(np.asarray(tessel.einsum("ijk,ik->ij", t, t[:, 0])),
                               np.einsum("ijk,ik->ij", a, a[:, 0]), rtol=1e-5)


def test_conv_and_pooling_match_torch(rng):
    torch = pytest.importorskip("torch")  # the Debian package scripts/setup installs
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    got = tessel.conv(x, w, b, stride=(2, 1), padding=(1, 0), dilation=1)
    expected = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b),
                                          stride=(2, 1), padding=(1, 0)).numpy()
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(
        np.asarray(tessel.max_pool(x, (2, 2))),
        torch.nn.functional.max_pool2d(torch.tensor(x), 2).numpy())
    np.testing.assert_allclose(
        np.asarray(tessel.avg_pool(x, (3, 3), stride=(2, 2), padding=(1, 1))),
        torch.nn.functional.avg_pool2d(torch.tensor(x), 3, 2, 1, count_include_pad=False).numpy(),
        rtol=1e-5)  # up to 9 float32 values summed in another order: a few ulp


def test_pad_split_topk_one_hot_scatter_match_numpy(rng):
    a = rng.standard_normal((3, 5)).astype(np.float32)
    t = tessel.asarray(a)
    for mode, np_mode in (("constant", "constant"), ("reflect", "reflect"), ("edge", "edge"),
                          ("wrap", "wrap")):
        np.testing.assert_array_equal(np.asarray(tessel.pad(t, [(1, 2), (2, 1)], mode=mode)),
                                      np.pad(a, [(1, 2), (2, 1)], mode=np_mode))
    pieces = tessel.split(t, [2, 3], axis=1)
    np.testing.assert_array_equal(np.asarray(pieces[1]), a[:, 2:])
    values, indices = tessel.topk(t, 2, axis=1)
    order = np.argsort(-a, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(np.asarray(indices), order)
    np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(a, order, 1))
    np.testing.assert_array_equal(np.asarray(tessel.one_hot([0, 2], 3)), np.eye(3, dtype=np.int64)[[0, 2]])
    idx = np.array([[0, 1, 0, 2, 1]])
    expected = np.zeros((3, 5), np.float32)
    np.add.at(expected, (idx[0], np.arange(5)), a[0])
    got = tessel.scatter_add(tessel.zeros((3, 5)), 0, idx, a[:1])
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)

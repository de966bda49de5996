"""tessel.Tensor against NumPy: factories, attributes, views, indexing,
conversions and printing."""

import itertools
import math

import numpy as np
import pytest

import tessel


def test_version_is_the_build_version():
    assert tessel.__version__ == "0.1.0"


@pytest.mark.parametrize(
    "name,numpy_name",
    [("bool", "bool"), ("uint8", "uint8"), ("int8", "int8"), ("int16", "int16"),
     ("int32", "int32"), ("int64", "int64"), ("uint16", "uint16"), ("uint32", "uint32"),
     ("uint64", "uint64"), ("float16", "float16"), ("float32", "float32"),
     ("float64", "float64")],
)
def test_dtypes_round_trip_through_numpy(name, numpy_name):
    dtype = getattr(tessel, name)
    assert dtype.name == name
    assert repr(dtype) == f"tessel.{name}"
    t = tessel.zeros((2, 3), dtype=dtype)
    assert t.dtype == dtype
    assert t.dtype == getattr(tessel, name)
    a = np.asarray(t)
    assert a.dtype == np.dtype(numpy_name)
    assert t.itemsize == a.itemsize == dtype.itemsize
    # NumPy dtypes and names are accepted wherever a dtype is.
    assert tessel.zeros(1, dtype=np.dtype(numpy_name)).dtype == dtype
    assert tessel.zeros(1, dtype=numpy_name).dtype == dtype


def test_dtype_equality_and_hash():
    assert tessel.float32 == tessel.float32
    assert tessel.float32 != tessel.float64
    assert tessel.float32 != "float32"
    assert len({tessel.float32, tessel.float32, tessel.int8}) == 2
    assert tessel.bfloat16.is_floating_point and not tessel.int8.is_floating_point
    assert tessel.q4_k.is_quantized and tessel.q4_k.block_size == 256


def test_factories_match_numpy():
    np.testing.assert_array_equal(np.asarray(tessel.zeros((2, 3))), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(tessel.ones(4, dtype=tessel.int32)), np.ones(4, np.int32))
    np.testing.assert_array_equal(np.asarray(tessel.full((2, 2), 7)), np.full((2, 2), 7, np.int64))
    np.testing.assert_array_equal(np.asarray(tessel.full((2,), 2.5)), np.full(2, 2.5, np.float32))
    np.testing.assert_array_equal(np.asarray(tessel.full((2,), True)), np.full(2, True))
    np.testing.assert_array_equal(np.asarray(tessel.arange(5)), np.arange(5))
    np.testing.assert_array_equal(np.asarray(tessel.arange(2, 11, 3)), np.arange(2, 11, 3))
    np.testing.assert_allclose(np.asarray(tessel.arange(0, 1, 0.25)), np.arange(0, 1, 0.25))
    np.testing.assert_allclose(np.asarray(tessel.linspace(-1, 1, 5)), np.linspace(-1, 1, 5))
    np.testing.assert_array_equal(np.asarray(tessel.eye(3, 4)), np.eye(3, 4, dtype=np.float32))
    assert tessel.empty((0, 3)).shape == (0, 3)
    assert tessel.zeros(()).shape == ()


def test_random_factories_are_seeded():
    tessel.manual_seed(7)
    a = np.asarray(tessel.rand((1000,)))
    tessel.manual_seed(7)
    b = np.asarray(tessel.rand((1000,)))
    np.testing.assert_array_equal(a, b)
    assert 0.0 <= a.min() and a.max() < 1.0
    n = np.asarray(tessel.randn((20000,)))
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1.0) < 0.05
    r = np.asarray(tessel.randint(-3, 4, (1000,)))
    assert r.min() == -3 and r.max() == 3


def test_asarray_from_python_values():
    t = tessel.asarray([[1.5, 2.0], [3.0, 4.0]])
    assert t.dtype == tessel.float32 and t.shape == (2, 2)
    assert tessel.asarray([1, 2, 3]).dtype == tessel.int64
    assert tessel.asarray([True, False]).dtype == tessel.bool
    assert tessel.asarray(3.5).shape == ()
    assert tessel.asarray(3.5).item() == 3.5
    assert tessel.asarray([1, 2], dtype=tessel.float64).dtype == tessel.float64
    with pytest.raises(tessel.DTypeError) as e:
        tessel.asarray(["a", "b"])
    assert e.value.code == "E2201"
    with pytest.raises(ValueError):
        tessel.asarray([[1, 2], [3]])


def test_asarray_shares_numpy_memory_and_copy_does_not():
    a = np.arange(6, dtype=np.float32)
    shared = tessel.asarray(a)
    copied = tessel.asarray(a, copy=True)
    a[0] = 42
    assert shared[0].item() == 42
    assert copied[0].item() == 0
    with pytest.raises(tessel.DTypeError):
        tessel.asarray(a, dtype=tessel.float64, copy=False)


def test_attributes():
    t = tessel.zeros((2, 3, 4), dtype=tessel.float64)
    assert t.shape == (2, 3, 4)
    assert t.strides == (12, 4, 1)
    assert t.ndim == 3 and t.size == 24 and t.nbytes == 192 and t.itemsize == 8
    assert t.device == "cpu"
    assert t.is_contiguous()
    assert t.mT.shape == (2, 4, 3) and not t.mT.is_contiguous()
    assert tessel.zeros((2, 5)).T.shape == (5, 2)
    with pytest.raises(tessel.ShapeError):
        t.T
    assert len(t) == 2
    with pytest.raises(TypeError):
        len(tessel.zeros(()))


def test_views_share_storage():
    base = tessel.arange(12).reshape(3, 4)
    view = base.transpose(0, 1)
    assert view.shares_memory(base)
    view[1, 2] = -5
    assert base[2, 1].item() == -5
    assert base.reshape(-1).shape == (12,)
    assert base.reshape((2, 6)).shape == (2, 6)
    assert base.permute(1, 0).shape == (4, 3)
    assert base.unsqueeze(0).shape == (1, 3, 4)
    assert base.unsqueeze(0).squeeze().shape == (3, 4)
    assert base.transpose().shape == (4, 3)
    cube = tessel.zeros((2, 1, 3, 1))
    assert cube.transpose().shape == (1, 3, 1, 2)
    assert cube.squeeze((3, 1)).shape == (2, 3)
    assert cube.squeeze(-1).shape == (2, 1, 3)
    for bad in ((0,), (1, -3)):
        with pytest.raises(tessel.ShapeError) as e:
            cube.squeeze(bad)
        assert e.value.code == "E2102"
    with pytest.raises(tessel.ShapeError):
        cube.transpose(0)
    assert base.flatten().shape == (12,)
    assert tessel.zeros((1, 3)).expand(4, 3).strides == (0, 1)
    assert not base.clone().shares_memory(base)
    with pytest.raises(tessel.LayoutError) as e:
        view.view(12)
    assert e.value.code == "E2301"


def random_basic_key(rng, shape):
    """A NumPy basic-indexing key for `shape`: ints, slices (any step, any
    bounds), None and at most one Ellipsis."""
    items = []
    axis = 0
    ellipsis_used = False
    while axis < len(shape):
        kind = rng.integers(0, 10)
        extent = shape[axis]
        if kind == 0:
            items.append(None)
            continue
        if kind == 1 and not ellipsis_used and axis > 0:
            items.append(Ellipsis)
            ellipsis_used = True
            break
        if kind <= 3 and extent > 0:
            items.append(int(rng.integers(-extent, extent)))
        else:
            def bound():
                return None if rng.random() < 0.3 else int(rng.integers(-extent - 2, extent + 3))

            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(bound(), bound(), step))
        axis += 1
    if rng.random() < 0.3 and items:
        items = items[: rng.integers(0, len(items) + 1)]
    return tuple(items)


def test_basic_indexing_matches_numpy(rng):
    for shape in [(5,), (4, 6), (3, 4, 5), (2, 0, 3), (1, 7, 2)]:
        a = rng.standard_normal(shape).astype(np.float32)
        t = tessel.asarray(a.copy())
        for _ in range(200):
            key = random_basic_key(rng, shape)
            expected = a[key]
            got = t[key]
            assert got.shape == expected.shape, key
            np.testing.assert_array_equal(np.asarray(got), expected, err_msg=str(key))


def test_basic_setitem_matches_numpy(rng):
    for shape in [(6,), (4, 5), (3, 4, 2)]:
        a = rng.standard_normal(shape).astype(np.float32)
        t = tessel.asarray(a.copy())
        for _ in range(150):
            key = random_basic_key(rng, shape)
            target_shape = a[key].shape
            if rng.random() < 0.3:
                value = float(rng.standard_normal())
            else:
                value = rng.standard_normal(target_shape).astype(np.float32)
            a[key] = value
            t[key] = value if isinstance(value, float) else tessel.asarray(value)
            np.testing.assert_array_equal(np.asarray(t), a, err_msg=str(key))


def test_overlapping_setitem_reads_before_writing():
    a = np.arange(8, dtype=np.int64)
    t = tessel.asarray(a.copy())
    a[1:] = a[:-1]
    t[1:] = t[:-1]
    np.testing.assert_array_equal(np.asarray(t), a)


def test_integer_array_index_matches_numpy(rng):
    a = rng.standard_normal((5, 6, 7)).astype(np.float32)
    t = tessel.asarray(a)
    for key in [([0, 4, 4, 1],), (slice(None), [5, 0]), (1, slice(None), np.array([[0, 6], [3, -1]])),
                (Ellipsis, [2])]:
        np.testing.assert_array_equal(np.asarray(t[key]), a[key], err_msg=str(key))


def random_advanced_key(rng, shape):
    """A key with one integer array or one boolean mask (over one or more
    axes) among ints, slices and None, as NumPy reads it."""
    ndim = len(shape)
    at = int(rng.integers(0, ndim))
    if rng.random() < 0.5:
        span = int(rng.integers(1, ndim - at + 1))
        advanced = rng.random(shape[at:at + span]) < 0.5
    else:
        span = 1
        advanced = rng.integers(-shape[at], shape[at], size=tuple(rng.integers(1, 3, size=rng.integers(1, 3))))
    items = []
    for axis in range(at):
        kind = rng.integers(0, 3)
        items.append(slice(None) if kind == 0 else
                     int(rng.integers(0, shape[axis])) if kind == 1 else slice(None, None, 2))
    items.append(advanced)
    for axis in range(at + span, ndim):
        if rng.random() < 0.4:
            items.append(slice(1, None))
    if rng.random() < 0.2:
        items.insert(0, None)
    return tuple(items)


def test_advanced_get_and_set_match_numpy(rng):
    for shape in [(6,), (4, 5), (3, 4, 2), (2, 3, 2, 3)]:
        a = rng.standard_normal(shape).astype(np.float32)
        t = tessel.asarray(a.copy())
        for _ in range(150):
            key = random_advanced_key(rng, shape)
            expected = a[key]
            got = t[key]
            assert got.shape == expected.shape, key
            np.testing.assert_array_equal(np.asarray(got), expected, err_msg=str(key))
            # Writes: a scalar, or values of the read's shape (repeated
            # integer indices have no single right answer, so only unique ones).
            advanced = [k for k in key if isinstance(k, np.ndarray)][0]
            if advanced.dtype != np.bool_ and len(np.unique(advanced)) != advanced.size:
                continue
            value = (float(rng.standard_normal()) if rng.random() < 0.3 else
                     rng.standard_normal(expected.shape).astype(np.float32))
            a[key] = value
            t[key] = value if isinstance(value, float) else tessel.asarray(value)
            np.testing.assert_array_equal(np.asarray(t), a, err_msg=str(key))


def test_boolean_masks_select_and_write():
    t = tessel.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    mask = t > 2
    np.testing.assert_array_equal(np.asarray(t[mask]), [3, 4, 5])
    t[mask] = 0
    np.testing.assert_array_equal(np.asarray(t), [[0, 1, 2], [0, 0, 0]])
    t[tessel.asarray([True, False])] = tessel.asarray([7, 8, 9], dtype=tessel.int32)
    np.testing.assert_array_equal(np.asarray(t), [[7, 8, 9], [0, 0, 0]])
    assert t[tessel.zeros((2, 3), dtype=tessel.bool)].shape == (0,)
    with pytest.raises(tessel.IndexError):
        t[tessel.ones((3,), dtype=tessel.bool)]


def test_index_errors():
    t = tessel.zeros((2, 3))
    with pytest.raises(tessel.IndexError) as e:
        t[2]
    assert e.value.code == "E2302"
    assert isinstance(e.value, IndexError)
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises(tessel.ShapeError):
        t[..., ...]
    with pytest.raises(tessel.DTypeError):
        t["a"]
    with pytest.raises(tessel.DTypeError):
        t[tessel.asarray([0.5])]


def test_python_conversions():
    t = tessel.asarray([[1.5, 2.0], [3.0, 4.0]])
    assert t.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert tessel.asarray(7).item() == 7 and isinstance(tessel.asarray(7).item(), int)
    assert float(tessel.asarray([2.5])) == 2.5
    assert int(tessel.asarray(3)) == 3
    assert bool(tessel.asarray(True))
    assert [10, 20, 30][tessel.asarray(1)] == 20
    with pytest.raises(tessel.ShapeError):
        bool(t)
    with pytest.raises(tessel.DTypeError):
        [1, 2][tessel.asarray(1.0)]


def test_repr_is_like_numpy():
    assert repr(tessel.asarray([1.0, 2.5])) == "tessel.Tensor([1. , 2.5], dtype=float32)"
    assert repr(tessel.arange(3)) == "tessel.Tensor([0, 1, 2], dtype=int64)"
    assert repr(tessel.zeros((0, 2))) == "tessel.Tensor([], shape=(0, 2), dtype=float32)"
    multi = repr(tessel.arange(4).reshape(2, 2))
    assert multi == "tessel.Tensor([[0, 1],\n               [2, 3]], dtype=int64)"
    assert str(tessel.arange(2)).startswith("tensor([0, 1]")


def test_astype_and_to():
    t = tessel.asarray([1.7, -2.2])
    assert t.astype(tessel.int32).tolist() == [1, -2]
    assert t.astype("float64").dtype == tessel.float64
    assert t.to(tessel.float16).dtype == tessel.float16
    assert t.to("cpu").shares_memory(t)
    same = t.astype(tessel.float32, copy=False)
    assert same.shares_memory(t)
    assert not t.astype(tessel.float32).shares_memory(t)
    b = tessel.asarray([1.0, 3.140625]).astype(tessel.bfloat16)
    assert b.dtype == tessel.bfloat16
    assert b.astype(tessel.float32).tolist() == [1.0, 3.140625]


def test_fill_and_copy():
    t = tessel.zeros((2, 3))
    t[:, 1].fill_(5)
    assert t.tolist() == [[0, 5, 0], [0, 5, 0]]
    t.copy_(tessel.arange(3))
    assert t.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert math.isclose(tessel.asarray(np.float32(0.1)).item(), 0.1, rel_tol=1e-7)


def test_many_shapes_round_trip(rng):
    for shape in itertools.product([0, 1, 3], repeat=3):
        a = rng.standard_normal(shape)
        np.testing.assert_array_equal(np.asarray(tessel.asarray(a)), a)

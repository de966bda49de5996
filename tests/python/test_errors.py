"""Bad input from Python: every mistake is a Python exception carrying its
DESIGN §2 code and subclassing the built-in a NumPy user would catch;
nothing crashes the interpreter."""

import numpy as np
import pytest

import tessel

HIERARCHY = [
    (tessel.ShapeError, ValueError), (tessel.DTypeError, TypeError),
    (tessel.LayoutError, ValueError), (tessel.IndexError, IndexError),
    (tessel.OverflowError, OverflowError), (tessel.NumericsError, FloatingPointError),
    (tessel.DeviceError, RuntimeError), (tessel.FormatError, ValueError),
    (tessel.IoError, OSError), (tessel.ConfigError, ValueError),
]


@pytest.mark.parametrize("cls,builtin", HIERARCHY, ids=lambda c: c.__name__)
def test_classes_subclass_the_builtins(cls, builtin):
    assert issubclass(cls, tessel.TesselError)
    assert issubclass(cls, builtin)


def raises_code(cls, code, function, *args, **kwargs):
    with pytest.raises(cls) as e:
        function(*args, **kwargs)
    assert e.value.code == code, str(e.value)
    assert code in str(e.value)
    return e.value


def test_shape_errors():
    raises_code(tessel.ShapeError, "E2101", tessel.add, tessel.ones((2, 3)), tessel.ones((4,)))
    raises_code(tessel.ShapeError, "E2102", tessel.zeros, (2, -1))
    raises_code(tessel.ShapeError, "E2102", tessel.sum, tessel.ones((2, 3)), axis=5)
    raises_code(tessel.ShapeError, "E2102", tessel.ones(6).reshape, 4, 2)
    raises_code(tessel.ShapeError, "E2103", tessel.matmul, tessel.ones((2, 3)), tessel.ones((2, 3)))


def test_dtype_errors():
    raises_code(tessel.DTypeError, "E2201", tessel.bitwise_and, tessel.ones(2), tessel.ones(2))
    raises_code(tessel.DTypeError, "E2201", tessel.zeros, 3, dtype="float128")
    raises_code(tessel.DTypeError, "E2201", tessel.zeros, 3, dtype=object())
    raises_code(tessel.DTypeError, "E2201", tessel.asarray, {"a": 1})


def test_huge_shapes_overflow_instead_of_allocating():
    raises_code(tessel.OverflowError, "E2303", tessel.zeros, (1 << 40, 1 << 40))
    raises_code(tessel.OverflowError, "E2303", tessel.zeros, (1 << 70,))
    raises_code(tessel.OverflowError, "E2303", tessel.full, (2,), 1 << 80)


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError):
        tessel.zeros("abc")
    with pytest.raises(TypeError):
        tessel.zeros((2, 2.5))
    with pytest.raises(TypeError):
        tessel.ones(2).reshape("x")
    with pytest.raises(TypeError):
        tessel.sum(tessel.ones(2), axis="0")
    with pytest.raises(TypeError):
        tessel.linspace("a", 1, 3)
    assert (tessel.ones(2) == None) is False  # noqa: E711 - Python's fallback


def test_device_errors():
    raises_code(tessel.DeviceError, "E2501", tessel.zeros, 2, device="tpu")
    raises_code(tessel.DeviceError, "E2501", tessel.ones(2).to, "cuda:0")


def test_in_place_shape_and_dtype_rules():
    t = tessel.zeros(3)
    with pytest.raises(tessel.ShapeError):
        t += tessel.ones((2, 3))


def test_read_only_memory_is_not_written():
    a = np.arange(3, dtype=np.float32)
    capsule = tessel.from_dlpack(a).__dlpack__(max_version=(1, 0))
    t = tessel.from_dlpack(capsule)
    t[0] = 1  # writable producer: allowed
    assert a[0] == 1

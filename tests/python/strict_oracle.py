"""array-api-strict as the oracle of the array API tests: the namespace at
2024.12, and moving the same values into both libraries and back."""

import warnings

import numpy as np
import pytest

import tessel

xp = pytest.importorskip("array_api_strict")
xp.set_array_api_strict_flags(api_version="2024.12")


def both(values):
    """The same values as a tessel tensor and an array-api-strict array."""
    values = np.ascontiguousarray(values)
    return tessel.asarray(values.copy()), xp.asarray(values.copy())


def to_numpy(a):
    """A NumPy copy of a tessel tensor or an array-api-strict array."""
    if isinstance(a, tessel.Tensor):
        return np.array(a, copy=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # strict deprecates __array__
        return np.array(a._array if hasattr(a, "_array") else a, copy=True)

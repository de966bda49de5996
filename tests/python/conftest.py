"""Shared fixtures of the Python package tests (ctest runs them with the
build tree's package first on sys.path; see tests/CMakeLists.txt)."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(20261203)

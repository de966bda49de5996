"""tessel.merge's methods on small tensors against their formulas written
out in NumPy (mergekit's, docs/merge.md): linear, slerp, TIES with hand
values, DARE's drop-and-rescale by its statistics, Model Stock. The
whole-checkpoint merge is tested against mergekit itself in
tests/oracle/test_merge.py."""

import numpy as np
import pytest

import tessel
from tessel import merge


def test_linear_and_task_arithmetic(rng):
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    got = merge.linear([a, b], [1.0, 3.0])
    np.testing.assert_allclose(np.asarray(got), (a + 3 * b) / 4, rtol=1e-6)
    got = merge.linear([a, b], [1.0, 3.0], normalize=False)
    np.testing.assert_allclose(np.asarray(got), a + 3 * b, rtol=1e-6)
    base = rng.standard_normal((3, 4)).astype(np.float32)
    got = merge.task_arithmetic(base, [a, b], weights=[0.5, 2.0], lambda_=0.7)
    np.testing.assert_allclose(np.asarray(got), base + 0.7 * (0.5 * (a - base) + 2 * (b - base)),
                               rtol=1e-5, atol=1e-6)
    assert "dare_ties" in merge.methods()


def test_slerp_follows_the_formula(rng):
    v0, v1 = (rng.standard_normal(50).astype(np.float32) for _ in range(2))
    t = 0.3
    n0, n1 = v0 / np.linalg.norm(v0.astype(np.float64)), v1 / np.linalg.norm(v1.astype(np.float64))
    dot = float(np.dot(n0.astype(np.float64), n1.astype(np.float64)))
    theta = np.arccos(dot)
    want = (np.sin(theta * (1 - t)) * v0 + np.sin(theta * t) * v1) / np.sin(theta)
    np.testing.assert_allclose(np.asarray(merge.slerp(v0, v1, t)), want, rtol=1e-5, atol=1e-6)
    # Nearly colinear: linear interpolation.
    np.testing.assert_allclose(np.asarray(merge.slerp(v0, 2 * v0, 0.5)), 1.5 * v0, rtol=1e-6)
    with pytest.raises(tessel.ConfigError):
        merge.slerp(v0, v1, 1.5)


def test_ties_elects_signs_by_hand():
    base = np.zeros(4, np.float32)
    a = np.array([1, -2, 3, 0.5], np.float32)
    b = np.array([2, 1, -1, 0.5], np.float32)
    # Summed deltas [3, -1, 2, 1] elect +, -, +, +; only agreeing deltas
    # count, divided by the weights that contributed.
    got = merge.task_arithmetic(base, [a, b], method="ties", density=1.0)
    np.testing.assert_allclose(np.asarray(got), [1.5, -2, 3, 0.5], rtol=1e-6)


def test_dare_drops_and_rescales():
    base = np.zeros(20000, np.float32)
    delta = np.full(20000, 0.25, np.float32)
    got = np.asarray(merge.task_arithmetic(base, [delta], method="dare_linear", density=0.5,
                                           seed=11))
    kept = got != 0
    assert abs(kept.mean() - 0.5) < 0.02
    # Dropped, or rescaled so that the delta keeps its L1 norm (mergekit's
    # rescale: about 1 / density).
    assert len(np.unique(got[kept])) == 1
    np.testing.assert_allclose(got.sum(), delta.sum(), rtol=1e-5)
    again = np.asarray(merge.task_arithmetic(base, [delta], method="dare_linear", density=0.5,
                                             seed=11))
    np.testing.assert_array_equal(got, again)


def test_model_stock_interpolates_by_the_mean_cosine(rng):
    base = rng.standard_normal(40).astype(np.float32)
    others = [base + rng.standard_normal(40).astype(np.float32) for _ in range(3)]
    deltas = [(o - base).astype(np.float64) for o in others]
    cos = np.mean([np.dot(deltas[i], deltas[j]) / np.linalg.norm(deltas[i]) / np.linalg.norm(deltas[j])
                   for i in range(3) for j in range(3) if i < j])
    t = 3 * cos / (1 + 2 * cos)
    want = t * np.mean(others, axis=0) + (1 - t) * base
    np.testing.assert_allclose(np.asarray(merge.model_stock(base, others)), want, rtol=1e-5,
                               atol=1e-5)
    with pytest.raises(tessel.ConfigError):
        merge.task_arithmetic(base, others, method="slerp")

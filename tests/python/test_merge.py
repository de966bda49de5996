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


def test_whole_checkpoint_merge_runs_from_python(tmp_path):
    """merge.run is the pipeline of `tessel merge` (tests/oracle/test_merge.py
    checks it against mergekit); here: it runs from Python, reports, calls
    back, writes HF and GGUF outputs, and a callback's exception stops it
    with nothing written."""
    config = {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 32,
              "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 32}
    dirs = []
    for seed in (1, 2):
        d = tmp_path / f"model{seed}"
        d.mkdir()
        tessel.CausalLM(config, seed=seed).save(str(d))
        dirs.append(d)
    yml = tmp_path / "merge.yml"
    yml.write_text(f"models:\n  - model: {dirs[0]}\n    parameters:\n      weight: 0.25\n"
                   f"  - model: {dirs[1]}\n    parameters:\n      weight: 0.75\n"
                   "merge_method: linear\ndtype: float32\n")
    calls = []
    report = merge.run(yml, tmp_path / "out", progress=lambda *a: calls.append(a))
    assert (report["method"], report["output_format"], report["models"]) == ("linear", "hf", 2)
    assert len(calls) == report["tensors"] > 0
    assert calls[-1][0] == calls[-1][1] == report["tensors"]
    merged = tessel.CausalLM.load(str(tmp_path / "out")).state_dict()
    a = tessel.CausalLM.load(str(dirs[0])).state_dict()
    b = tessel.CausalLM.load(str(dirs[1])).state_dict()
    assert sorted(merged) == sorted(a)
    for name, tensor in merged.items():
        want = merge.linear([a[name], b[name]], [0.25, 0.75])
        np.testing.assert_allclose(np.asarray(tensor), np.asarray(want), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
    gguf = merge.run(yml, tmp_path / "out.gguf")
    assert gguf["output_format"] == "gguf" and (tmp_path / "out.gguf").is_file()

    def stop(done, total, bytes_read, tensor):
        raise RuntimeError(f"stopped after {tensor}")
    with pytest.raises(RuntimeError, match="stopped after"):
        merge.run(yml, tmp_path / "stopped", progress=stop)
    assert not (tmp_path / "stopped").exists()
    bad = tmp_path / "bad.yml"
    bad.write_text("merge_method: no_such_method\nmodels:\n  - model: x\n")
    with pytest.raises(tessel.ConfigError) as e:
        merge.run(bad, tmp_path / "never")
    assert e.value.code.startswith("E4")

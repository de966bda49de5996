"""Call overhead of nanobind against pybind11 over the same tessel calls.

Both modules (bench/python_binding/*_peer.cpp) bind tessel::Tensor and
tessel::add identically; NumPy's a + b runs in the same process as the
reference. Prints ns per call and the ratios.

    .venv/bin/python bench/python_binding/compare_bindings.py build/bench/python_binding
"""

import sys
import timeit

sys.path.insert(0, sys.argv[1])

import binding_nanobind  # noqa: E402
import binding_pybind11  # noqa: E402
import numpy as np  # noqa: E402


def interleaved_ns(statements, number=100_000, rounds=15):
    """Best ns per call of each (stmt, env), in alternating rounds so that a
    noisy neighbour on the VM slows every side alike."""
    best = [float("inf")] * len(statements)
    for _ in range(rounds):
        for i, (stmt, env) in enumerate(statements):
            best[i] = min(best[i], timeit.timeit(stmt, globals=env, number=number) / number * 1e9)
    return best


statements = []
for mod in (binding_nanobind, binding_pybind11):
    env = {"a": mod.ones(8), "b": mod.ones(8), "first": mod.first}
    statements += [("first(a, b)", env), ("a + b", env)]
x = np.ones(8, np.float32)
statements.append(("x + x", {"x": x}))
times = interleaved_ns(statements)
rows = {"nanobind": (times[0], times[1]), "pybind11": (times[2], times[3])}
numpy_add = times[4]

print(f"{'binding':10} {'no-op call ns':>14} {'a + b ns':>10}")
for name, (noop, add) in rows.items():
    print(f"{name:10} {noop:14.1f} {add:10.1f}")
print(f"{'numpy':10} {'':14} {numpy_add:10.1f}")
nb_noop, nb_add = rows["nanobind"]
pb_noop, pb_add = rows["pybind11"]
print(f"pybind11 / nanobind: no-op {pb_noop / nb_noop:.2f}x, a + b {pb_add / nb_add:.2f}x")
print(f"nanobind a + b / numpy a + b: {nb_add / numpy_add:.2f}x")

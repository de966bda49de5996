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


def per_call_ns(stmt, env, number=200_000, repeat=7):
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=repeat)) / number * 1e9


rows = {}
for name, mod in (("nanobind", binding_nanobind), ("pybind11", binding_pybind11)):
    env = {"a": mod.ones(8), "b": mod.ones(8), "first": mod.first}
    rows[name] = (per_call_ns("first(a, b)", env), per_call_ns("a + b", env))
x = np.ones(8, np.float32)
numpy_add = per_call_ns("x + x", {"x": x})

print(f"{'binding':10} {'no-op call ns':>14} {'a + b ns':>10}")
for name, (noop, add) in rows.items():
    print(f"{name:10} {noop:14.1f} {add:10.1f}")
print(f"{'numpy':10} {'':14} {numpy_add:10.1f}")
nb_noop, nb_add = rows["nanobind"]
pb_noop, pb_add = rows["pybind11"]
print(f"pybind11 / nanobind: no-op {pb_noop / nb_noop:.2f}x, a + b {pb_add / nb_add:.2f}x")
print(f"nanobind a + b / numpy a + b: {nb_add / numpy_add:.2f}x")

"""The Python package at its boundary (issue 16, BENCHMARKS.md "Python"):

1. per-call overhead of `a + b` on 8-element float32 tensors, tessel
   against NumPy in the same process (target: tessel <= NumPy);
2. `tessel.from_dlpack(ndarray)` and `np.asarray(tensor)` at 10^2..10^7
   elements (target: O(1), the same time at every size);
3. large ops called from Python against the same ops in C++ (bench_ops,
   run by this script in the same session; target >= 0.95x);
4. the GIL: two Python threads each running large ops on a one-thread
   pool, against one thread doing both shares (target: ~2x with 2 cores).

    PYTHONPATH=build/python .venv/bin/python bench/compare_python.py build/bench/bench_ops
"""

import sys
import threading
import time
import timeit

import numpy as np

import tessel
from timing import best_seconds, run_benchmarks


def per_call_ns(stmt, env, number=200_000, repeat=7):
    return min(timeit.repeat(stmt, globals=env, number=number, repeat=repeat)) / number * 1e9


def interleaved_ns(statements, number=100_000, rounds=15):
    """Best ns per call of each (stmt, env), measured in alternating rounds
    so that a noisy neighbour on the VM slows both sides alike."""
    best = [float("inf")] * len(statements)
    for _ in range(rounds):
        for i, (stmt, env) in enumerate(statements):
            best[i] = min(best[i], timeit.timeit(stmt, globals=env, number=number) / number * 1e9)
    return best


def overhead():
    a, b = tessel.ones(8), tessel.ones(8)
    x, y = np.ones(8, np.float32), np.ones(8, np.float32)
    t_ns, n_ns, ts_ns, ns_ns = interleaved_ns([
        ("a + b", {"a": a, "b": b}), ("x + y", {"x": x, "y": y}),
        ("a + 1.0", {"a": a}), ("x + 1.0", {"x": x})])
    print("## 1. per-call overhead, 8-element float32 (ns per call, lower is better)")
    print(f"{'expression':12} {'tessel':>8} {'numpy':>8} {'tessel/numpy':>13}")
    print(f"{'a + b':12} {t_ns:8.0f} {n_ns:8.0f} {t_ns / n_ns:12.2f}x")
    print(f"{'a + 1.0':12} {ts_ns:8.0f} {ns_ns:8.0f} {ts_ns / ns_ns:12.2f}x")


def exchange():
    print("\n## 2. zero-copy exchange (us per call at each size)")
    print(f"{'elements':>10} {'from_dlpack(ndarray)':>21} {'np.asarray(tensor)':>19}")
    for n in (10**2, 10**4, 10**6, 10**7):
        a = np.ones(n, np.float32)
        t = tessel.ones(n)
        imp = per_call_ns("tessel.from_dlpack(a)", {"tessel": tessel, "a": a}, number=20_000) / 1e3
        exp = per_call_ns("np.asarray(t)", {"np": np, "t": t}, number=20_000) / 1e3
        print(f"{n:10d} {imp:21.2f} {exp:19.2f}")


def large_ops(bench_ops):
    print("\n## 3. large ops from Python against the same ops in C++ (ms, best of 7)")
    cpp = run_benchmarks(bench_ops, "^BM_(AddAlloc|SumAll|SoftmaxLast)/")
    n = 1 << 24
    side = 4096
    a, b = tessel.randn((n,)), tessel.randn((n,))
    x = tessel.randn((side, side))
    rows = [("BM_AddAlloc", "a + b (16M f32)", lambda: a + b),
            ("BM_SumAll", "sum(a) (16M f32)", lambda: tessel.sum(a)),
            ("BM_SoftmaxLast", "softmax(x) (4096^2 f32)", lambda: tessel.softmax(x, -1))]
    print(f"{'op':26} {'python':>8} {'c++':>8} {'c++/python':>11}")
    for name, label, fn in rows:
        py_ms = best_seconds(fn) * 1e3
        entry = cpp[name]
        cpp_ms = entry["real_time"] * {"ms": 1, "us": 1e-3, "ns": 1e-6}[entry["time_unit"]]
        print(f"{label:26} {py_ms:8.2f} {cpp_ms:8.2f} {cpp_ms / py_ms:10.2f}x")


def gil():
    print("\n## 4. two Python threads against one doing both shares, a one-thread pool")
    print("(the GIL is released inside kernels; speed-up 2.0 is both cores busy)")
    tessel.set_num_threads(1)
    m = tessel.randn((768, 768))
    v = tessel.randn((1 << 22,))
    rounds = 10
    for name, fn in (("matmul 768^3", lambda: m @ m), ("sum 4M f32", lambda: tessel.sum(v)),
                     ("exp 4M f32", lambda: tessel.exp(v))):
        def work(n, fn=fn):
            for _ in range(n):
                fn()

        work(2)
        one = two = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            work(2 * rounds)
            one = min(one, time.perf_counter() - start)
            threads = [threading.Thread(target=work, args=(rounds,)) for _ in range(2)]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            two = min(two, time.perf_counter() - start)
        print(f"{name:14} one thread {one:.3f} s, two threads {two:.3f} s: speed-up {one / two:.2f}x")


if __name__ == "__main__":
    overhead()
    exchange()
    large_ops(sys.argv[1])
    gil()

"""tessel's element-wise, reduction, softmax and layout kernels next to NumPy
and PyTorch (CPU), measured in one run, with this machine's STREAM-like
bandwidth from the same run. Prints the table of BENCHMARKS.md and checks
the targets of the element-wise issue.

    .venv/bin/python bench/compare_ops.py build/bench/bench_ops

Peers at their best: PyTorch with every core (torch.set_num_threads) and
ATEN_CPU_CAPABILITY=avx512 where the CPU has it; both the allocating and the
out= forms where they exist (the table says which); NumPy is
single-threaded by design. All sizes f32: 16M elements, or 4096 x 4096.
"""
import json
import os
import subprocess
import sys
import time

if "avx512f" in open("/proc/cpuinfo").read():
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx512")

import numpy as np  # noqa: E402
import torch  # noqa: E402

THREADS = len(os.sched_getaffinity(0))
torch.set_num_threads(THREADS)
N = 1 << 24
SIDE = 4096


def best_seconds(fn, repeats=15):
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peers():
    # Random data: identical pages may be merged by the hypervisor and read
    # from cache.
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal(N).astype(np.float32)
    b_np = rng.standard_normal(N).astype(np.float32)
    c_np = np.empty(N, np.float32)
    a_t, b_t, c_t = torch.from_numpy(a_np), torch.from_numpy(b_np), torch.from_numpy(c_np)
    x_np = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    x_t = torch.from_numpy(x_np)
    y_t = torch.empty_like(x_t)
    m_np = np.random.default_rng(1).standard_normal((SIDE, SIDE)).astype(np.float32)
    m_t = torch.from_numpy(m_np)
    out_m = torch.empty_like(m_t)
    np_out_m = np.empty_like(m_np)
    row_np = rng.standard_normal(SIDE).astype(np.float32)
    col_np = rng.standard_normal((SIDE, 1)).astype(np.float32)
    row_t, col_t = torch.from_numpy(row_np), torch.from_numpy(col_np)
    gelu = torch.nn.functional.gelu
    # name -> (bytes per call, numpy callable or None, torch callable or None)
    return {
        "BM_AddOut/f32": (3 * N * 4, lambda: np.add(a_np, b_np, out=c_np),
                          lambda: torch.add(a_t, b_t, out=c_t)),
        "BM_AddAlloc": (3 * N * 4, lambda: a_np + b_np, lambda: a_t + b_t),
        "BM_AddRowBroadcast": (2 * SIDE * SIDE * 4, lambda: np.add(m_np, row_np, out=np_out_m),
                               lambda: torch.add(m_t, row_t, out=out_m)),
        "BM_AddColBroadcast": (2 * SIDE * SIDE * 4, lambda: np.add(m_np, col_np, out=np_out_m),
                               lambda: torch.add(m_t, col_t, out=out_m)),
        "BM_UnaryAlloc/exp": (2 * N * 4, lambda: np.exp(x_np), lambda: torch.exp(x_t)),
        "BM_UnaryOut/exp": (2 * N * 4, lambda: np.exp(x_np, out=c_np), lambda: torch.exp(x_t, out=y_t)),
        "BM_UnaryAlloc/tanh": (2 * N * 4, lambda: np.tanh(x_np), lambda: torch.tanh(x_t)),
        "BM_UnaryOut/tanh": (2 * N * 4, lambda: np.tanh(x_np, out=c_np), lambda: torch.tanh(x_t, out=y_t)),
        "BM_UnaryAlloc/gelu": (2 * N * 4, None, lambda: gelu(x_t)),
        "BM_UnaryAlloc/gelu_tanh": (2 * N * 4, None, lambda: gelu(x_t, approximate="tanh")),
        "BM_SumAll": (N * 4, lambda: x_np.sum(), lambda: x_t.sum()),
        "BM_SumAxis/axis0": (SIDE * SIDE * 4, lambda: m_np.sum(axis=0), lambda: m_t.sum(0)),
        "BM_SumAxis/axis1": (SIDE * SIDE * 4, lambda: m_np.sum(axis=1), lambda: m_t.sum(1)),
        "BM_ArgmaxLast": (SIDE * SIDE * 4, lambda: m_np.argmax(axis=-1), lambda: m_t.argmax(-1)),
        "BM_SoftmaxLast": (2 * SIDE * SIDE * 4, None, lambda: torch.softmax(m_t, -1, out=out_m)),
        "BM_ContiguousTranspose": (2 * SIDE * SIDE * 4, lambda: np.ascontiguousarray(m_np.T),
                                   lambda: m_t.t().contiguous()),
    }


TARGETS = [
    # (description, check(results) -> (value, wanted))
    ("a + b (out=) >= 85% of STREAM add", lambda r: (r["BM_AddOut/f32"]["tessel"] / r["ceiling_add"], 0.85)),
    ("allocating a + b >= 2.5x NumPy", lambda r: (r["BM_AddAlloc"]["tessel"] / r["BM_AddAlloc"]["numpy"], 2.5)),
    ("[4096,4096] + [4096] >= 85% of STREAM copy", lambda r: (r["BM_AddRowBroadcast"]["tessel"] / r["ceiling_copy"], 0.85)),
    ("[4096,4096] + [4096,1] >= 85% of STREAM copy", lambda r: (r["BM_AddColBroadcast"]["tessel"] / r["ceiling_copy"], 0.85)),
    ("exp >= PyTorch (out=)", lambda r: (r["BM_UnaryOut/exp"]["tessel"] / r["BM_UnaryOut/exp"]["torch"], 1.0)),
    ("tanh >= 3x PyTorch (out=)", lambda r: (r["BM_UnaryOut/tanh"]["tessel"] / r["BM_UnaryOut/tanh"]["torch"], 3.0)),
    ("gelu >= 3x PyTorch", lambda r: (r["BM_UnaryAlloc/gelu"]["tessel"] / r["BM_UnaryAlloc/gelu"]["torch"], 3.0)),
    ("gelu (tanh) >= 3x PyTorch", lambda r: (r["BM_UnaryAlloc/gelu_tanh"]["tessel"] / r["BM_UnaryAlloc/gelu_tanh"]["torch"], 3.0)),
    ("sum all >= PyTorch", lambda r: (r["BM_SumAll"]["tessel"] / r["BM_SumAll"]["torch"], 1.0)),
    ("sum axis 1 >= PyTorch", lambda r: (r["BM_SumAxis/axis1"]["tessel"] / r["BM_SumAxis/axis1"]["torch"], 1.0)),
    ("sum axis 0 >= 1.3x PyTorch", lambda r: (r["BM_SumAxis/axis0"]["tessel"] / r["BM_SumAxis/axis0"]["torch"], 1.3)),
    ("argmax last axis >= 3x PyTorch", lambda r: (r["BM_ArgmaxLast"]["tessel"] / r["BM_ArgmaxLast"]["torch"], 3.0)),
    ("argmax last axis >= 2x NumPy", lambda r: (r["BM_ArgmaxLast"]["tessel"] / r["BM_ArgmaxLast"]["numpy"], 2.0)),
    ("softmax >= 1.5x PyTorch out=", lambda r: (r["BM_SoftmaxLast"]["tessel"] / r["BM_SoftmaxLast"]["torch"], 1.5)),
    ("transposed contiguous() >= 4x PyTorch", lambda r: (r["BM_ContiguousTranspose"]["tessel"] / r["BM_ContiguousTranspose"]["torch"], 4.0)),
    ("bf16 add >= f32 add (elements/s)", lambda r: (r["items"]["BM_AddOut/bf16"] / r["items"]["BM_AddOut/f32"], 1.0)),
    ("f16 add >= f32 add (elements/s)", lambda r: (r["items"]["BM_AddOut/f16"] / r["items"]["BM_AddOut/f32"], 1.0)),
    ("bf16 exp >= f32 exp (elements/s)", lambda r: (r["items"]["BM_UnaryAlloc/exp_bf16"] / r["items"]["BM_UnaryAlloc/exp"], 1.0)),
    ("f16 exp >= f32 exp (elements/s)", lambda r: (r["items"]["BM_UnaryAlloc/exp_f16"] / r["items"]["BM_UnaryAlloc/exp"], 1.0)),
]


def main():
    raw = subprocess.run([sys.argv[1], "--benchmark_format=json", "--benchmark_repetitions=5",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    tessel, items = {}, {}
    for b in json.loads(raw)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].split("/real_time")[0]
        tessel[name] = b["bytes_per_second"] / 1e9
        if "items_per_second" in b:
            items[name] = b["items_per_second"]
    results = {"ceiling_copy": tessel["BM_StreamCopy"], "ceiling_add": tessel["BM_StreamAdd"],
               "ceiling_read": tessel["BM_StreamRead"], "items": items}
    print(f"CPU threads: {THREADS}; PyTorch {torch.__version__} ({torch.get_num_threads()} threads, "
          f"{os.environ.get('ATEN_CPU_CAPABILITY', 'default')}); NumPy {np.__version__}")
    print(f"STREAM-like ceilings (tessel pool, same run): copy {results['ceiling_copy']:.1f} GB/s, "
          f"add {results['ceiling_add']:.1f} GB/s, read {results['ceiling_read']:.1f} GB/s\n")
    print(f"| kernel | tessel GB/s | NumPy GB/s | PyTorch GB/s | vs NumPy | vs PyTorch |")
    print(f"|---|---|---|---|---|---|")
    for name, (nbytes, np_fn, t_fn) in peers().items():
        t = tessel[name]
        n = nbytes / best_seconds(np_fn) / 1e9 if np_fn else None
        p = nbytes / best_seconds(t_fn) / 1e9 if t_fn else None
        results[name] = {"tessel": t, "numpy": n, "torch": p}
        fmt = lambda v: f"{v:.1f}" if v else "-"
        ratio = lambda v: f"{t / v:.2f}x" if v else "-"
        print(f"| {name} | {t:.1f} | {fmt(n)} | {fmt(p)} | {ratio(n)} | {ratio(p)} |")
    for name in ("BM_AddOut/bf16", "BM_AddOut/f16", "BM_UnaryAlloc/exp_bf16", "BM_UnaryAlloc/exp_f16"):
        print(f"| {name} | {tessel[name]:.1f} ({items[name] / 1e9:.2f} G elements/s) | - | - | - | - |")
    print("\n| target | measured | wanted | |\n|---|---|---|---|")
    missed = 0
    for description, check in TARGETS:
        value, wanted = check(results)
        ok = value >= wanted
        missed += not ok
        print(f"| {description} | {value:.2f} | {wanted:.2f} | {'met' if ok else 'MISSED'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

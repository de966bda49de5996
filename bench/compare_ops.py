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
import os
import sys

if "avx512f" in open("/proc/cpuinfo").read():
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx512")

from timing import best_seconds, median, run_benchmarks
import numpy as np  # noqa: E402
import torch  # noqa: E402

THREADS = len(os.sched_getaffinity(0))
torch.set_num_threads(THREADS)
N = 1 << 24
SIDE = 4096



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
    # Sylvester's 128 x 128 Hadamard matrix over sqrt(128): the rotation
    # as a dense product, the way llama.cpp applies it.
    h_np = np.ones((1, 1), np.float32)
    for _ in range(7):
        h_np = np.kron(np.array([[1, 1], [1, -1]], np.float32), h_np)
    h_np /= np.sqrt(128.0)
    runs_np = x_np.reshape(-1, 128)
    runs_out_np = np.empty_like(runs_np)
    h_t, runs_t = torch.from_numpy(h_np), torch.from_numpy(runs_np)
    runs_out_t = torch.empty_like(runs_t)
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
        "BM_HadamardTransform": (2 * N * 4, lambda: np.matmul(runs_np, h_np, out=runs_out_np),
                                 lambda: torch.matmul(runs_t, h_t, out=runs_out_t)),
    }


# kernel -> the STREAM-like ceiling that binds it
CEILING = {
    "BM_AddOut/f32": "BM_StreamAdd", "BM_AddAlloc": "BM_StreamAdd",
    "BM_AddRowBroadcast": "BM_StreamCopy", "BM_AddColBroadcast": "BM_StreamCopy",
    "BM_UnaryAlloc/exp": "BM_StreamCopy", "BM_UnaryOut/exp": "BM_StreamCopy",
    "BM_UnaryAlloc/tanh": "BM_StreamCopy", "BM_UnaryOut/tanh": "BM_StreamCopy",
    "BM_UnaryAlloc/gelu": "BM_StreamCopy", "BM_UnaryAlloc/gelu_tanh": "BM_StreamCopy",
    "BM_SumAll": "BM_StreamRead", "BM_SumAxis/axis0": "BM_StreamRead",
    "BM_SumAxis/axis1": "BM_StreamRead", "BM_ArgmaxLast": "BM_StreamRead",
    "BM_SoftmaxLast": "BM_StreamCopy", "BM_ContiguousTranspose": "BM_StreamCopy",
    "BM_HadamardTransform": "BM_StreamCopy",
}

TARGETS = [
    # (description, kernel, "ceiling" | "numpy" | "torch", wanted ratio)
    ("a + b (out=) >= 85% of STREAM add", "BM_AddOut/f32", "ceiling", 0.85),
    ("allocating a + b >= 2.5x NumPy's allocating a + b", "BM_AddAlloc", "numpy", 2.5),
    ("[4096,4096] + [4096] >= 85% of STREAM copy", "BM_AddRowBroadcast", "ceiling", 0.85),
    ("[4096,4096] + [4096,1] >= 85% of STREAM copy", "BM_AddColBroadcast", "ceiling", 0.85),
    ("exp (out=) >= PyTorch (out=)", "BM_UnaryOut/exp", "torch", 1.0),
    ("tanh >= 3x PyTorch, allocating", "BM_UnaryAlloc/tanh", "torch", 3.0),
    ("tanh >= 3x PyTorch, out=", "BM_UnaryOut/tanh", "torch", 3.0),
    ("gelu >= 3x PyTorch (allocating; PyTorch has no out=)", "BM_UnaryAlloc/gelu", "torch", 3.0),
    ("gelu tanh form >= 3x PyTorch (allocating)", "BM_UnaryAlloc/gelu_tanh", "torch", 3.0),
    ("sum over all >= PyTorch", "BM_SumAll", "torch", 1.0),
    ("sum over axis 1 >= PyTorch", "BM_SumAxis/axis1", "torch", 1.0),
    ("sum over axis 0 >= 1.3x PyTorch", "BM_SumAxis/axis0", "torch", 1.3),
    ("argmax last axis >= 3x PyTorch", "BM_ArgmaxLast", "torch", 3.0),
    ("argmax last axis >= 2x NumPy", "BM_ArgmaxLast", "numpy", 2.0),
    ("softmax last axis >= 1.5x PyTorch out=", "BM_SoftmaxLast", "torch", 1.5),
    ("transposed contiguous() >= 4x PyTorch", "BM_ContiguousTranspose", "torch", 4.0),
]

ROUNDS = 3


def run_tessel(tool, pattern):
    """GB/s (and elements/s) of the benchmarks matching `pattern`, now."""
    return {name: (b["bytes_per_second"] / 1e9, b.get("items_per_second"))
            for name, b in run_benchmarks(tool, pattern).items()}


def main():
    tool = sys.argv[1]
    cases = peers()
    # Kernel by kernel, each round measures the ceiling, tessel and the
    # peers back to back: this machine's bandwidth drifts over minutes, so
    # only measurements taken together are compared.
    results = {}
    for name, (nbytes, np_fn, t_fn) in cases.items():
        rows = {"tessel": [], "numpy": [], "torch": [], "ceiling": []}
        ceiling = CEILING[name]
        for _ in range(ROUNDS):
            got = run_tessel(tool, f"^({ceiling}|{name})/real_time$")
            rows["ceiling"].append(got[ceiling][0])
            rows["tessel"].append(got[name][0])
            rows["numpy"].append(nbytes / best_seconds(np_fn, 5) / 1e9 if np_fn else None)
            rows["torch"].append(nbytes / best_seconds(t_fn, 5) / 1e9 if t_fn else None)
        results[name] = {k: median(v) for k, v in rows.items()}
    narrow = run_tessel(tool, "^BM_(AddOut|UnaryOut)/")

    print(f"CPU threads: {THREADS}; PyTorch {torch.__version__} ({torch.get_num_threads()} threads, "
          f"{os.environ.get('ATEN_CPU_CAPABILITY', 'default')}); NumPy {np.__version__}; "
          f"medians of {ROUNDS} interleaved rounds\n")
    print("| kernel | tessel GB/s | of ceiling | NumPy GB/s | PyTorch GB/s | vs NumPy | vs PyTorch |")
    print("|---|---|---|---|---|---|---|")
    for name, r in results.items():
        fmt = lambda v: f"{v:.1f}" if v else "-"
        ratio = lambda v: f"{r['tessel'] / v:.2f}x" if v else "-"
        short = CEILING[name].replace("BM_Stream", "").lower()
        print(f"| {name} | {r['tessel']:.1f} | {r['tessel'] / r['ceiling']:.0%} of {short} "
              f"{r['ceiling']:.1f} | {fmt(r['numpy'])} | {fmt(r['torch'])} | {ratio(r['numpy'])} | "
              f"{ratio(r['torch'])} |")
    print("\n| narrow floats (same run) | GB/s | G elements/s | vs f32 elements/s |\n|---|---|---|---|")
    for name, base in [("BM_AddOut/bf16", "BM_AddOut/f32"), ("BM_AddOut/f16", "BM_AddOut/f32"),
                       ("BM_UnaryOut/exp_bf16", "BM_UnaryOut/exp"), ("BM_UnaryOut/exp_f16", "BM_UnaryOut/exp"),
                       ("BM_UnaryOut/tanh_bf16", "BM_UnaryOut/tanh"), ("BM_UnaryOut/tanh_f16", "BM_UnaryOut/tanh")]:
        gbs, items = narrow[name]
        print(f"| {name} | {gbs:.1f} | {items / 1e9:.2f} | {items / narrow[base][1]:.2f}x |")
    print("\n| target | measured | wanted | |\n|---|---|---|---|")
    for description, name, peer, wanted in TARGETS:
        r = results[name]
        value = r["tessel"] / r[peer]
        print(f"| {description} | {value:.2f} | {wanted:.2f} | {'met' if value >= wanted else 'MISSED'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

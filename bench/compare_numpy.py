"""Runs bench_core and the same operations in NumPy in one run and prints
GB/s for both and the ratio (tessel / NumPy; > 1 means tessel is faster).

    .venv/bin/python bench/compare_numpy.py build/bench/bench_core

NumPy runs these single-threaded, as its users get them; tessel uses its
pool (TESSEL_NUM_THREADS or all CPUs). memcpy is the bandwidth ceiling.
"""
import json
import subprocess
import sys

import ml_dtypes
from timing import best_seconds
import numpy as np

N = 1 << 24



def numpy_cases():
    f32 = np.ones(N, dtype=np.float32)
    f16 = np.ones(N, dtype=np.float16)
    bf16 = np.ones(N, dtype=ml_dtypes.bfloat16)
    i32 = np.ones(N, dtype=np.int32)
    out = {name: np.empty(N, dtype=dt) for name, dt in
           [("bf16", ml_dtypes.bfloat16), ("f16", np.float16),
            ("f32", np.float32), ("e4m3", ml_dtypes.float8_e4m3fn)]}
    square = np.ones((4096, 4096), dtype=np.float32).T
    gen = np.random.Generator(np.random.Philox(0))
    fill = np.empty(N, dtype=np.float32)
    return {
        "BM_Memcpy": (lambda: np.copyto(out["f32"], f32), 8 * N),
        "BM_Cast/f32_to_bf16": (lambda: np.copyto(out["bf16"], f32, casting="unsafe"), 6 * N),
        "BM_Cast/f32_to_f16": (lambda: np.copyto(out["f16"], f32, casting="unsafe"), 6 * N),
        "BM_Cast/f16_to_f32": (lambda: np.copyto(out["f32"], f16), 6 * N),
        "BM_Cast/bf16_to_f32": (lambda: np.copyto(out["f32"], bf16), 6 * N),
        "BM_Cast/f32_to_f8_e4m3fn": (lambda: np.copyto(out["e4m3"], f32, casting="unsafe"), 5 * N),
        "BM_Cast/i32_to_f32": (lambda: np.copyto(out["f32"], i32, casting="unsafe"), 8 * N),
        "BM_Cast/f32_to_f32": (lambda: np.copyto(out["f32"], f32), 8 * N),
        "BM_ContiguousOfTranspose": (lambda: np.ascontiguousarray(square), 8 * N),
        "BM_Fill": (lambda: fill.fill(1.5), 4 * N),
        "BM_Randn": (lambda: gen.standard_normal(N // 4, dtype=np.float32), N),
    }


def main():
    tool = sys.argv[1]
    raw = subprocess.run([tool, "--benchmark_format=json"], check=True,
                         capture_output=True, text=True).stdout
    tessel = {b["name"].split("/real_time")[0]: b["bytes_per_second"] / 1e9
              for b in json.loads(raw)["benchmarks"]}
    print(f"{'operation':28} {'tessel GB/s':>12} {'NumPy GB/s':>11} {'ratio':>7}")
    for name, (fn, nbytes) in numpy_cases().items():
        np_gbs = nbytes / best_seconds(fn) / 1e9
        t = tessel.get(name)
        print(f"{name:28} {t:12.2f} {np_gbs:11.2f} {t / np_gbs:7.2f}")


if __name__ == "__main__":
    main()

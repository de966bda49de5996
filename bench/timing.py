"""Helpers shared by the comparison scripts."""
import json
import subprocess
import time


def best_seconds(fn, repeats=7):
    """The fastest of `repeats` calls after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def median(values):
    """The median of the values that are not None (None if there are none)."""
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def run_benchmarks(tool, pattern, min_time=0.3):
    """Google Benchmark's JSON entries of `tool` for names matching
    `pattern`, keyed by name without the /real_time suffix (failed ones
    left out)."""
    raw = subprocess.run([tool, "--benchmark_format=json", f"--benchmark_filter={pattern}",
                          f"--benchmark_min_time={min_time}"],
                         check=True, capture_output=True, text=True).stdout
    return {b["name"].split("/real_time")[0]: b for b in json.loads(raw)["benchmarks"]
            if not b.get("error_occurred")}

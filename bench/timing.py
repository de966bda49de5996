"""Timing helper shared by the comparison scripts."""
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

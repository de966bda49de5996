"""The array API additions of issue 16 against NumPy, in one process with
the two measured in alternating rounds (BENCHMARKS.md "Python package:
the array API namespace"):

1. the element-wise rows added for the standard (scalar kernels over
   libm) on 10^6 float32 elements;
2. the data-dependent ops (nonzero, unique_values, searchsorted) and sort;
3. tessel.linalg (LAPACK through Debian's OpenBLAS) against numpy.linalg
   (the OpenBLAS its wheel bundles): one 256 x 256 float64 matrix, and a
   batch of 512 4 x 4 ones, where the per-matrix cost shows;
4. complex64/complex128: element-wise ops and sums on 10^6 elements, and
   matmul (four real GEMMs on the parts against NumPy's cgemm/zgemm);
5. tessel.fft (written here) against numpy.fft (pocketfft): a power of
   two, a mixed-radix length, a prime (Bluestein), a batch of short rows,
   and the real transform.

Ratios are tessel / NumPy time: below 1 is faster.

    PYTHONPATH=build/python .venv/bin/python bench/compare_array_api.py
"""

import timeit

import numpy as np

import tessel


def interleaved_seconds(pairs, number, rounds=7):
    """Best seconds per call of each side of each (tessel stmt, numpy stmt, env)."""
    best = [[float("inf"), float("inf")] for _ in pairs]
    for _ in range(rounds):
        for i, (ts, ns, env) in enumerate(pairs):
            best[i][0] = min(best[i][0], timeit.timeit(ts, globals=env, number=number) / number)
            best[i][1] = min(best[i][1], timeit.timeit(ns, globals=env, number=number) / number)
    return best


def table(title, rows, number, unit=1e3, unit_name="ms"):
    print(f"\n## {title} ({unit_name} per call)")
    print(f"{'op':28} {'tessel':>9} {'numpy':>9} {'tessel/numpy':>13}")
    times = interleaved_seconds([(t, n, env) for _, t, n, env in rows], number)
    for (name, *_), (ts, ns) in zip(rows, times):
        print(f"{name:28} {ts * unit:9.3f} {ns * unit:9.3f} {ts / ns:12.2f}x")


def main():
    rng = np.random.default_rng(0)
    x = rng.uniform(-0.9, 0.9, 10**6).astype(np.float32)
    y = rng.uniform(0.1, 2.0, 10**6).astype(np.float32)
    env = {"tessel": tessel, "np": np, "t": tessel.asarray(x), "u": tessel.asarray(y),
           "x": x, "y": y}
    rows = [(name, f"tessel.{name}(t)", f"np.{np_name}(x)", env)
            for name, np_name in (("tan", "tan"), ("asinh", "arcsinh"), ("atanh", "arctanh"),
                                  ("log10", "log10"), ("square", "square"))]
    rows += [(name, f"tessel.{name}(t, u)", f"np.{np_name}(x, y)", env)
             for name, np_name in (("atan2", "arctan2"), ("hypot", "hypot"),
                                   ("logaddexp", "logaddexp"))]
    table("1. element-wise rows, 10^6 float32", rows, number=5)

    ints = rng.integers(0, 1000, 10**6).astype(np.int64)
    mask = rng.random(10**6) < 0.5
    ordered = np.sort(rng.standard_normal(10**6))
    probes = rng.standard_normal(10**5)
    env2 = {"tessel": tessel, "np": np, "ti": tessel.asarray(ints), "ni": ints,
            "tm": tessel.asarray(mask), "nm": mask, "to": tessel.asarray(ordered),
            "no": ordered, "tp": tessel.asarray(probes), "np_": probes,
            "tf": tessel.asarray(x), "nf": x}
    table("2. data-dependent ops and sort, 10^6 elements", [
        ("nonzero(bool)", "tessel.nonzero(tm)", "np.nonzero(nm)", env2),
        ("unique_values(int64)", "tessel.unique_values(ti)", "np.unique(ni)", env2),
        ("searchsorted(10^5 in 10^6)", "tessel.searchsorted(to, tp)",
         "np.searchsorted(no, np_)", env2),
        ("sort(float32)", "tessel.sort(tf)", "np.sort(nf, kind='stable')", env2),
    ], number=3)

    a = rng.standard_normal((256, 256)) + 256 * np.eye(256)
    spd = a @ a.T
    b = rng.standard_normal((256, 8))
    small = rng.standard_normal((512, 4, 4)) + 4 * np.eye(4)
    env3 = {"tl": tessel.linalg, "nl": np.linalg, "ta": tessel.asarray(a), "na": a,
            "ts": tessel.asarray(spd), "ns": spd, "tb": tessel.asarray(b), "nb": b,
            "tq": tessel.asarray(small), "nq": small}
    table("3. linalg, float64", [
        ("solve 256 (8 rhs)", "tl.solve(ta, tb)", "nl.solve(na, nb)", env3),
        ("inv 256", "tl.inv(ta)", "nl.inv(na)", env3),
        ("det 256", "tl.det(ta)", "nl.det(na)", env3),
        ("cholesky 256", "tl.cholesky(ts)", "nl.cholesky(ns)", env3),
        ("qr 256", "tl.qr(ta)", "nl.qr(na)", env3),
        ("eigh 256", "tl.eigh(ts)", "nl.eigh(ns)", env3),
        ("svd 256", "tl.svd(ta)", "nl.svd(na)", env3),
        ("det 512 x (4 x 4)", "tl.det(tq)", "nl.det(nq)", env3),
        ("inv 512 x (4 x 4)", "tl.inv(tq)", "nl.inv(nq)", env3),
    ], number=3)

    zc = (rng.standard_normal(10**6) + 1j * rng.standard_normal(10**6)).astype(np.complex64)
    wc = (rng.standard_normal(10**6) + 1j * rng.standard_normal(10**6)).astype(np.complex64)
    m64 = (rng.standard_normal((256, 256)) + 1j * rng.standard_normal((256, 256))).astype(
        np.complex64)
    m128 = m64.astype(np.complex128)
    env4 = {"tessel": tessel, "np": np, "tz": tessel.asarray(zc), "nz": zc,
            "tw": tessel.asarray(wc), "nw": wc, "tm": tessel.asarray(m64), "nm": m64,
            "tm2": tessel.asarray(m128), "nm2": m128}
    table("4. complex", [
        ("multiply c64 10^6", "tessel.multiply(tz, tw)", "np.multiply(nz, nw)", env4),
        ("divide c64 10^6", "tessel.divide(tz, tw)", "np.divide(nz, nw)", env4),
        ("exp c64 10^6", "tessel.exp(tz)", "np.exp(nz)", env4),
        ("abs c64 10^6", "tessel.abs(tz)", "np.abs(nz)", env4),
        ("sum c64 10^6", "tessel.sum(tz)", "np.sum(nz)", env4),
        ("matmul c64 256", "tessel.matmul(tm, tm)", "np.matmul(nm, nm)", env4),
        ("matmul c128 256", "tessel.matmul(tm2, tm2)", "np.matmul(nm2, nm2)", env4),
    ], number=5)

    big = (rng.standard_normal(2**20) + 1j * rng.standard_normal(2**20))
    mixed = big[:1000 * 1000].reshape(1000, 1000)
    prime = big[:1009 * 1009].reshape(1009, 1009)
    rows = big[:4096 * 64].reshape(4096, 64)
    real = rng.standard_normal(2**20)
    env5 = {"tf": tessel.fft, "nf": np.fft, "tb": tessel.asarray(big), "nb": big,
            "tx": tessel.asarray(mixed), "nx": mixed, "tp": tessel.asarray(prime),
            "np_": prime, "tr": tessel.asarray(rows), "nr": rows,
            "tl": tessel.asarray(real), "nl": real}
    table("5. fft, complex128 / float64", [
        ("fft 2^20", "tf.fft(tb)", "nf.fft(nb)", env5),
        ("fft 1000 x 1000 rows", "tf.fft(tx)", "nf.fft(nx)", env5),
        ("fft 1009 x 1009 (prime)", "tf.fft(tp)", "nf.fft(np_)", env5),
        ("fft 4096 x 64 rows", "tf.fft(tr)", "nf.fft(nr)", env5),
        ("rfft 2^20", "tf.rfft(tl)", "nf.rfft(nl)", env5),
        ("fftn 1000 x 1000", "tf.fftn(tx)", "nf.fftn(nx)", env5),
    ], number=2)


if __name__ == "__main__":
    main()

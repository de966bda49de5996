"""tessel's dtype conversions against NumPy (f16, ints, bool) and ml_dtypes
(bf16, f8), bit for bit.

- every bit pattern of each 16- and 8-bit float -> f32 and f64, and back;
- every pattern of each narrow float -> every other narrow float and every
  integer dtype and bool;
- f32 edge cases -> each narrow float: for every f32 exponent, mantissas on,
  just below and just above each rounding tie of the target, plus signed
  zeros, infinities, NaNs with payloads and a million random patterns;
- integers -> narrow floats: every i8/u8/i16/u16 value and wide integers
  that f32 holds exactly;
- f32/f64 specials -> every integer dtype.

f64 and wide-integer sources that f32 cannot hold exactly are not compared:
ml_dtypes rounds them twice (through f32) where tessel rounds once; the C++
unit tests pin those cases (docs/dtypes.md).
"""
import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

NARROW = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
}
INTS = {
    "u8": np.uint8, "i8": np.int8, "i16": np.int16, "i32": np.int32,
    "i64": np.int64, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Runner:
    def __init__(self, tool):
        self.tool = tool
        self.dir = tempfile.mkdtemp(prefix="tessel_casts_")
        atexit.register(shutil.rmtree, self.dir, True)
        self.failures = 0
        self.checks = 0

    def cast(self, values, src, dst, saturate=False):
        src_path = os.path.join(self.dir, "in.bin")
        dst_path = os.path.join(self.dir, "out.bin")
        np.ascontiguousarray(values).tofile(src_path)
        cmd = [self.tool, src, dst, src_path, dst_path]
        if saturate:
            cmd.append("--saturate")
        subprocess.run(cmd, check=True)
        return np.fromfile(dst_path, dtype=self.dtype(dst))

    @staticmethod
    def dtype(name):
        if name in NARROW:
            return NARROW[name]
        if name in INTS:
            return np.dtype(INTS[name])
        return np.dtype({"f32": np.float32, "f64": np.float64,
                         "bool": np.bool_}[name])

    def compare(self, label, values, src, dst):
        """Casts `values` (already of dtype src) with tessel and NumPy."""
        with np.errstate(all="ignore"):
            expected = values.astype(self.dtype(dst))
        got = self.cast(values, src, dst)
        as_bits = BITS[expected.dtype.itemsize]
        e = expected.view(as_bits)
        g = got.view(as_bits)
        self.checks += 1
        bad = np.nonzero(e != g)[0]
        if bad.size:
            self.failures += 1
            src_bits = values.view(BITS[values.dtype.itemsize])
            print(f"FAIL {label}: {src}->{dst}: {bad.size} of {values.size} differ")
            for i in bad[:8]:
                print(f"   input bits {int(src_bits[i]):#x} ({values[i]!r}): "
                      f"expected {int(e[i]):#x}, got {int(g[i]):#x}")


def all_patterns(name):
    dtype = NARROW[name]
    return np.arange(1 << (8 * dtype.itemsize), dtype=BITS[dtype.itemsize]).view(dtype)


def f32_edge_cases(name, rng):
    """f32 bit patterns around every rounding boundary of the target."""
    dtype = NARROW[name]
    mant = {"f16": 10, "bf16": 7, "f8_e4m3fn": 3, "f8_e5m2": 2}[name]
    drop = 23 - mant  # f32 mantissa bits below the target's last place
    half = 1 << (drop - 1)
    patterns = []
    kept = rng.integers(0, 1 << mant, size=16, dtype=np.uint32)
    kept = np.concatenate([kept, [0, 1, (1 << mant) - 1, (1 << mant) - 2]])
    for exponent in range(256):
        base = np.uint32(exponent << 23) | (kept.astype(np.uint32) << drop)
        for offset in (0, half - 1, half, half + 1, (1 << drop) - 1, 1):
            patterns.append(base | np.uint32(offset))
    patterns = np.concatenate(patterns).astype(np.uint32)
    specials = np.array([0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF,
                         0x7FA00000, 0x00000001, 0x007FFFFF, 0x00800000],
                        dtype=np.uint32)
    random = rng.integers(0, 1 << 32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    everything = np.concatenate([patterns, specials, random])
    everything = np.concatenate([everything, everything | np.uint32(0x80000000)])
    return everything.view(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    r = Runner(args.tool)
    rng = np.random.default_rng(20261130)

    for name in NARROW:
        patterns = all_patterns(name)
        # Every bit pattern out, and back in through f32 and f64.
        r.compare("all patterns", patterns, name, "f32")
        r.compare("all patterns", patterns, name, "f64")
        as_f32 = patterns.astype(np.float32)
        as_f64 = patterns.astype(np.float64)
        r.compare("round trip", as_f32, "f32", name)
        r.compare("round trip", as_f64, "f64", name)
        # Every pattern to every other narrow float, integer and bool.
        for other in NARROW:
            if other != name:
                r.compare("narrow to narrow", patterns, name, other)
        for other in INTS:
            r.compare("narrow to int", patterns, name, other)
        r.compare("narrow to bool", patterns, name, "bool")
        # Rounding from f32.
        r.compare("f32 edge cases", f32_edge_cases(name, rng), "f32", name)
        # f64 values that f32 holds exactly (ml_dtypes goes through f32).
        r.compare("f64 exact in f32", f32_edge_cases(name, rng).astype(np.float64),
                  "f64", name)

    # Integers to narrow floats and to f32/f64.
    for src in ("i8", "u8", "i16", "u16"):
        info = np.iinfo(INTS[src])
        values = np.arange(info.min, info.max + 1, dtype=np.int64).astype(INTS[src])
        for dst in list(NARROW) + ["f32", "f64", "bool"]:
            r.compare("every value", values, src, dst)
    for src in ("i32", "i64", "u32", "u64"):
        info = np.iinfo(INTS[src])
        small = rng.integers(max(info.min, -(1 << 24)), min(info.max, 1 << 24),
                             size=100_000, dtype=np.int64)
        powers = np.array([1 << k for k in range(0, 8 * np.dtype(INTS[src]).itemsize - 1)],
                          dtype=np.uint64)
        values = np.concatenate([small.astype(INTS[src]),
                                 powers.astype(INTS[src]),
                                 np.array([info.min, info.max], dtype=INTS[src])])
        for dst in list(NARROW) + ["bool"]:
            exact = values.astype(np.float32).astype(INTS[src]) == values
            r.compare("wide ints exact in f32", values[exact], src, dst)
        r.compare("to f64", values, src, "f64")
        r.compare("to f32", values, src, "f32")

    # f32/f64 specials and ordinary values to every integer dtype and bool.
    floats = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 127.9, 128.0,
                       -128.0, -129.7, 255.0, 256.0, 300.0, -300.5, 65535.0,
                       65536.0, -32769.0, 2.0**31, -2.0**31, 2.0**31 - 128,
                       3e9, -3e9, 5e9, 2.0**32, 2.0**53, 2.0**63, -2.0**63,
                       1e19, 3e19, -1e19, 1e30, np.inf, -np.inf, np.nan],
                      dtype=np.float64)
    floats = np.concatenate([floats, rng.normal(0, 1e3, size=10_000)])
    for dst in list(INTS) + ["bool"]:
        r.compare("float specials", floats, "f64", dst)
        r.compare("float specials", floats.astype(np.float32), "f32", dst)
    # Integer to integer wraps.
    for src in INTS:
        info = np.iinfo(INTS[src])
        size = np.dtype(INTS[src]).itemsize
        mask = (1 << (8 * size)) - 1
        values = np.array([v & mask for v in (info.min, info.max, 0, 1, 200, 300, 70000, -1)],
                          dtype=BITS[size]).view(INTS[src])
        for dst in list(INTS) + ["bool", "f32", "f64"]:
            r.compare("int to int", values, src, dst)

    print(f"{r.checks} comparisons, {r.failures} failed")
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())

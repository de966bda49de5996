"""Differential tests of tessel's element-wise, reduction and indexing ops
against NumPy (and PyTorch CPU for the few functions NumPy lacks) on random
shapes: rank 0-6, zero-size extents, every broadcasting pattern, transposed,
strided and stride-0 (broadcast) inputs. Fixed seed; one process runs every
case (op_tool), then this script compares.

Tolerances (stated per dtype, compared element-wise with NaN == NaN):
- exact ops (+ - * on integers, comparisons, abs, floor, ..., indexing,
  sorting): bit-for-bit;
- IEEE-rounded f32/f64 arithmetic (+ - * /, sqrt): exact, because both
  sides round the same exact result once;
- transcendental f32: rtol 4e-6 (tessel's kernels are within 8 ULP, NumPy's
  within 4, see tests/ops/test_unary_accuracy.cpp); f64: rtol 1e-13;
- f16 and bf16: the reference is computed in f32 from the same narrow
  inputs and rounded once, as DESIGN §1 says tessel does: within 1 unit in
  the last place of the narrow type;
- reductions: against an f64 reference, |err| <= rtol * sum(|terms|) with
  rtol 2e-6 (f32), 1e-12 (f64).
"""
import argparse
import atexit
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import torch

RNG = np.random.default_rng(20261130)
BF16 = np.dtype(ml_dtypes.bfloat16)


def random_shape(rank, allow_zero=True):
    shape = []
    for _ in range(rank):
        if allow_zero and RNG.random() < 0.08:
            shape.append(0)
        else:
            shape.append(int(RNG.integers(1, 6)))
    return tuple(shape)


def random_values(shape, dtype, specials=False):
    if dtype == np.bool_:
        return RNG.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -50), min(info.max, 50)
        return RNG.integers(lo, hi + 1, size=shape).astype(dtype)
    v = RNG.normal(0, 3, size=shape)
    if specials and v.size:
        flat = v.reshape(-1)
        for s in (0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -2.5):
            if RNG.random() < 0.3:
                flat[RNG.integers(0, flat.size)] = s
    return v.astype(dtype)


class Case:
    """One op call: inputs saved in some physical layout plus the view
    steps that recover the logical array."""

    def __init__(self, workdir, index):
        self.dir = workdir
        self.index = index
        self.inputs = []
        self.logical = []

    def add_input(self, array, layout="random", narrow=None):
        path = os.path.join(self.dir, f"c{self.index}_in{len(self.inputs)}.npy")
        steps = []
        base = array
        shape = array.shape
        choice = layout if layout != "random" else RNG.choice(
            ["contiguous", "transposed", "strided", "broadcast"])
        if choice == "transposed" and array.ndim >= 2:
            q = RNG.permutation(array.ndim)
            base = np.ascontiguousarray(np.transpose(array, q))
            steps.append(["permute", [int(i) for i in np.argsort(q)]])
        elif choice == "strided" and array.ndim >= 1 and array.size > 0:
            axis = int(RNG.integers(0, array.ndim))
            n = shape[axis]
            padded_shape = list(shape)
            padded_shape[axis] = 2 * n + 1
            base = np.zeros(padded_shape, dtype=array.dtype)
            idx = [slice(None)] * array.ndim
            idx[axis] = slice(1, 1 + 2 * n, 2)
            base[tuple(idx)] = array
            steps.append(["slice", axis, 1, 1 + 2 * n, 2])
        elif choice == "broadcast" and array.ndim >= 1:
            # Keep one slice along a random axis and broadcast it back.
            axis = int(RNG.integers(0, array.ndim))
            if shape[axis] > 1:
                first = np.take(array, [0], axis=axis)
                array = np.broadcast_to(first, shape)
                base = first
                steps.append(["expand", list(shape)])
        stored = base
        if narrow is not None:  # exact narrow values stored as f32
            stored = base.astype(np.float32)
            steps.insert(0, ["cast", narrow])
        np.save(path, np.require(stored, requirements="C"))
        self.inputs.append({"file": path, "view": steps})
        self.logical.append(array)
        return array


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="tessel_numpy_")
    atexit.register(shutil.rmtree, work, True)
    cases = []   # (json spec, expected callable, comparison kind)

    def new_case():
        return Case(work, len(cases))

    def record(case, op, attrs, expect, kind, dtype=None):
        out = os.path.join(work, f"c{case.index}_out.npy")
        spec = {"op": op, "attrs": attrs, "inputs": case.inputs, "outputs": [out]}
        cases.append((spec, expect, kind, dtype, out))

    float_dtypes = [np.float32, np.float64, np.float16]
    int_dtypes = [np.int8, np.int32, np.int64, np.uint8]

    # ---- unary ----
    exact_unary = {"neg": np.negative, "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
                   "round": np.round, "trunc": np.trunc, "isnan": np.isnan,
                   "isinf": np.isinf, "isfinite": np.isfinite,
                   "logical_not": np.logical_not, "sign": np.sign}
    rounded_unary = {"sqrt": np.sqrt, "reciprocal": lambda x: np.float32(1) / x if x.dtype == np.float32 else 1 / x}
    transcendental = {
        "exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
        "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
        "sigmoid": lambda x: torch.sigmoid(torch.from_numpy(x)).numpy(),
        "erf": lambda x: torch.erf(torch.from_numpy(x)).numpy(),
        "gelu": lambda x: torch.nn.functional.gelu(torch.from_numpy(x)).numpy(),
        "silu": lambda x: torch.nn.functional.silu(torch.from_numpy(x)).numpy(),
        "softplus": lambda x: torch.nn.functional.softplus(torch.from_numpy(x)).numpy(),
        "elu": lambda x: torch.nn.functional.elu(torch.from_numpy(x)).numpy(),
        "selu": lambda x: torch.nn.functional.selu(torch.from_numpy(x)).numpy(),
        "rsqrt": lambda x: (1 / np.sqrt(x.astype(np.float64))).astype(x.dtype),
    }
    for name, fn in {**exact_unary, **rounded_unary, **transcendental}.items():
        for dtype in float_dtypes + [None]:
            for _ in range(4):
                c = new_case()
                narrow = None
                real = dtype
                if dtype is None:  # bf16, stored as f32
                    real, narrow = BF16, "bf16"
                x = random_values(random_shape(int(RNG.integers(0, 5))),
                                  np.float32 if narrow else real, specials=True)
                if narrow:
                    x = x.astype(BF16)
                x = c.add_input(x, narrow=narrow)
                if name in transcendental and np.dtype(real) in (np.dtype(np.float16), BF16):
                    expect = (lambda f, xx, r: lambda: f(xx.astype(np.float32)).astype(r))(fn, x, real)
                else:
                    expect = (lambda f, xx: lambda: f(xx))(fn, x)
                kind = "exact" if name in exact_unary or name in rounded_unary else "transcendental"
                if name == "gelu":
                    kind = "cancelling"
                if np.dtype(real) in (np.dtype(np.float16), BF16):
                    kind = "narrow"
                record(c, name, {}, expect, kind, real)
    for name in ["neg", "abs", "sign", "floor", "round", "logical_not", "isnan"]:
        for dtype in int_dtypes:
            c = new_case()
            x = c.add_input(random_values(random_shape(int(RNG.integers(0, 5))), dtype))
            fn = exact_unary[name]
            record(c, name, {}, (lambda f, xx: lambda: f(xx))(fn, x), "exact")

    # ---- binary with broadcasting ----
    def broadcast_pair():
        out = random_shape(int(RNG.integers(0, 7)))
        shapes = []
        for _ in range(2):
            drop = int(RNG.integers(0, len(out) + 1))
            s = list(out[drop:])
            for i in range(len(s)):
                if RNG.random() < 0.3:
                    s[i] = 1
            shapes.append(tuple(s))
        return shapes

    binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
              "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal,
              "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
              "ge": np.greater_equal, "floor_divide": np.floor_divide,
              "remainder": np.remainder, "logical_and": np.logical_and,
              "logical_xor": np.logical_xor}
    for name, fn in binary.items():
        for dtype in [np.float32, np.float64, np.int32, np.int64, np.int8]:
            for _ in range(6):
                c = new_case()
                sa, sb = broadcast_pair()
                a = c.add_input(random_values(sa, dtype, specials=dtype != np.int8))
                b = random_values(sb, dtype, specials=dtype != np.int8)
                if name in ("floor_divide", "remainder") and np.issubdtype(dtype, np.integer):
                    b[b == 0] = 3  # NumPy warns on zero; tessel's rule is in unit tests
                b = c.add_input(b)
                work_dtype = np.int16 if dtype == np.int8 else dtype  # DESIGN: i8+i8 -> i16
                def expect(f=fn, aa=a, bb=b, w=work_dtype, n=name):
                    with np.errstate(all="ignore"):
                        if n == "div" and np.issubdtype(w, np.integer):
                            return (aa.astype(np.float32) / bb.astype(np.float32))
                        return f(aa.astype(w), bb.astype(w))
                record(c, name, {}, expect, "exact")
    for dtype in [np.float16, None]:
        for name in ["add", "mul", "sub", "div", "maximum"]:
            for _ in range(4):
                c = new_case()
                sa, sb = broadcast_pair()
                real, narrow = (BF16, "bf16") if dtype is None else (dtype, None)
                a = random_values(sa, np.float32).astype(real)
                b = random_values(sb, np.float32).astype(real)
                a = c.add_input(a, narrow=narrow)
                b = c.add_input(b, narrow=narrow)
                fn = binary[name]
                record(c, name, {}, (lambda f, aa, bb, r: lambda: f(aa.astype(np.float32), bb.astype(np.float32)).astype(r))(fn, a, b, real), "narrow", real)

    # where
    for _ in range(20):
        c = new_case()
        sa, sb = broadcast_pair()
        cond = c.add_input(random_values(sa, np.bool_))
        a = c.add_input(random_values(sb, np.float32))
        b = c.add_input(random_values(random_shape(int(RNG.integers(0, 3))), np.float32))
        record(c, "where", {}, (lambda cc, aa, bb: lambda: np.where(cc, aa, bb))(cond, a, b), "exact")

    # ---- reductions ----
    reductions = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
                  "any": np.any, "all": np.all, "sum_squares": lambda x, axis, keepdims: np.sum(x * x, axis=axis, keepdims=keepdims)}
    for name, fn in reductions.items():
        for dtype in [np.float32, np.float64, np.int32]:
            for _ in range(8):
                c = new_case()
                shape = random_shape(int(RNG.integers(0, 6)))
                x = c.add_input(random_values(shape, dtype) * (0.3 if name == "prod" else 1))
                ndim = len(shape)
                k = int(RNG.integers(0, ndim + 1))
                axes = sorted(RNG.choice(ndim, size=k, replace=False).tolist()) if ndim else []
                keep = bool(RNG.random() < 0.5)
                np_axes = tuple(axes) if axes else None
                def expect(f=fn, xx=x, ax=np_axes, kd=keep, n=name):
                    wide = xx.astype(np.float64) if np.issubdtype(xx.dtype, np.floating) else xx.astype(np.int64)
                    if n in ("mean",):
                        wide = xx.astype(np.float64)
                    with np.errstate(all="ignore"):
                        return f(wide, axis=ax, keepdims=kd)
                record(c, name, {"axes": axes, "keepdims": keep}, expect, "reduction", dtype)
    for name, ref in {"var": lambda x, ax, kd: np.var(x, axis=ax, ddof=1, keepdims=kd),
                      "std": lambda x, ax, kd: np.std(x, axis=ax, ddof=1, keepdims=kd),
                      "logsumexp": lambda x, ax, kd: torch.logsumexp(torch.from_numpy(x), dim=list(ax) if ax else list(range(x.ndim)), keepdim=kd).numpy() if x.ndim else x}.items():
        for _ in range(12):
            c = new_case()
            shape = random_shape(int(RNG.integers(1, 5)), allow_zero=False)
            x = c.add_input(random_values(shape, np.float64))
            axes = sorted(RNG.choice(len(shape), size=int(RNG.integers(1, len(shape) + 1)), replace=False).tolist())
            keep = bool(RNG.random() < 0.5)
            record(c, name, {"axes": axes, "keepdims": keep},
                   (lambda f, xx, ax, kd: lambda: f(xx, tuple(ax), kd))(ref, x, axes, keep), "reduction", np.float64)
    for name, fn in {"argmax": np.argmax, "argmin": np.argmin}.items():
        for dtype in [np.float32, np.int64, np.float64]:
            for _ in range(8):
                c = new_case()
                shape = random_shape(int(RNG.integers(1, 5)), allow_zero=False)
                x = c.add_input(random_values(shape, dtype))
                axis = int(RNG.integers(-len(shape), len(shape)))
                record(c, name, {"axis": axis}, (lambda f, xx, a: lambda: f(xx, axis=a))(fn, x, axis), "exact")
    for name, fn in {"cumsum": np.cumsum, "cumprod": np.cumprod}.items():
        for _ in range(10):
            c = new_case()
            shape = random_shape(int(RNG.integers(1, 5)))
            x = c.add_input(random_values(shape, np.float64) * 0.5)
            axis = int(RNG.integers(-len(shape), len(shape)))
            record(c, name, {"axis": axis}, (lambda f, xx, a: lambda: f(xx, axis=a))(fn, x, axis), "reduction", np.float64)
    for name in ["softmax", "log_softmax"]:
        for dtype in [np.float32, np.float64]:
            for _ in range(8):
                c = new_case()
                shape = random_shape(int(RNG.integers(1, 5)), allow_zero=False)
                x = c.add_input(random_values(shape, dtype))
                axis = int(RNG.integers(-len(shape), len(shape)))
                f = torch.softmax if name == "softmax" else torch.log_softmax
                record(c, name, {"axis": axis},
                       (lambda ff, xx, a: lambda: ff(torch.from_numpy(xx.astype(np.float64)), dim=a).numpy())(f, x, axis),
                       "transcendental", dtype)

    # ---- indexing and layout ----
    for _ in range(15):
        c = new_case()
        shape = random_shape(int(RNG.integers(1, 5)))
        axis = int(RNG.integers(0, len(shape)))
        parts = []
        for _ in range(int(RNG.integers(1, 4))):
            s = list(shape)
            s[axis] = int(RNG.integers(0, 4))
            parts.append(c.add_input(random_values(tuple(s), np.float32)))
        record(c, "concat", {"axis": axis}, (lambda p, a: lambda: np.concatenate(p, axis=a))(parts, axis), "exact")
    for _ in range(15):
        c = new_case()
        shape = random_shape(int(RNG.integers(1, 4)), allow_zero=False)
        axis = int(RNG.integers(0, len(shape)))
        x = c.add_input(random_values(shape, np.int32))
        idx = c.add_input(RNG.integers(-shape[axis], shape[axis], size=random_shape(int(RNG.integers(0, 3)))).astype(np.int64), layout="contiguous")
        record(c, "take", {"axis": axis}, (lambda xx, ii, a: lambda: np.take(xx, ii, axis=a))(x, idx, axis), "exact")
    for _ in range(10):
        c = new_case()
        shape = random_shape(int(RNG.integers(1, 4)), allow_zero=False)
        axis = int(RNG.integers(0, len(shape)))
        x = c.add_input(random_values(shape, np.float32))
        idx_shape = list(shape)
        idx_shape[axis] = int(RNG.integers(1, 4))
        idx = c.add_input(RNG.integers(0, shape[axis], size=idx_shape).astype(np.int64), layout="contiguous")
        record(c, "take_along_axis", {"axis": axis},
               (lambda xx, ii, a: lambda: np.take_along_axis(xx, ii, axis=a))(x, idx, axis), "exact")
    for _ in range(10):
        c = new_case()
        shape = random_shape(int(RNG.integers(1, 4)))
        x = c.add_input(random_values(shape, np.float32))
        axes = sorted(RNG.choice(len(shape), size=int(RNG.integers(1, len(shape) + 1)), replace=False).tolist())
        record(c, "flip", {"axes": axes}, (lambda xx, ax: lambda: np.flip(xx, axis=tuple(ax)))(x, axes), "exact")
        shifts = [int(RNG.integers(-7, 8)) for _ in axes]
        c2 = new_case()
        x2 = c2.add_input(random_values(shape, np.float32))
        record(c2, "roll", {"shifts": shifts, "axes": axes},
               (lambda xx, s, ax: lambda: np.roll(xx, s, axis=tuple(ax)))(x2, shifts, axes), "exact")
        c3 = new_case()
        x3 = c3.add_input(random_values(shape, np.int64))
        reps = [int(RNG.integers(0, 3)) for _ in range(int(RNG.integers(1, 4)))]
        record(c3, "tile", {"reps": reps}, (lambda xx, r: lambda: np.tile(xx, r))(x3, reps), "exact")
        c4 = new_case()
        x4 = c4.add_input(random_values(shape, np.float32))
        ax = int(RNG.integers(0, len(shape)))
        record(c4, "repeat", {"repeats": 3, "axis": ax}, (lambda xx, a: lambda: np.repeat(xx, 3, axis=a))(x4, ax), "exact")
    for mode, np_mode in [("constant", "constant"), ("reflect", "reflect"), ("edge", "edge"), ("wrap", "wrap")]:
        for _ in range(6):
            c = new_case()
            shape = random_shape(int(RNG.integers(1, 4)), allow_zero=False)
            x = c.add_input(random_values(shape, np.float32))
            # NumPy 1.24's "wrap" is wrong for pads wider than the axis (it
            # repeats the edge; fixed in NumPy 2): keep wrap pads within it.
            limit = lambda n: min(n, 3) + 1 if mode == "wrap" else 4
            pads = [[int(RNG.integers(0, limit(n))), int(RNG.integers(0, limit(n)))] for n in shape]
            record(c, "pad", {"pads": pads, "mode": mode},
                   (lambda xx, p, m: lambda: np.pad(xx, p, mode=m))(x, pads, np_mode), "exact")
    for name, fn in {"tril": np.tril, "triu": np.triu}.items():
        for _ in range(6):
            c = new_case()
            shape = random_shape(int(RNG.integers(2, 4)))
            x = c.add_input(random_values(shape, np.float32))
            k = int(RNG.integers(-3, 4))
            record(c, name, {"k": k}, (lambda f, xx, kk: lambda: f(xx, kk))(fn, x, k), "exact")
    for _ in range(12):
        c = new_case()
        shape = random_shape(int(RNG.integers(1, 4)))
        x = c.add_input(random_values(shape, np.float32, specials=True))
        axis = int(RNG.integers(-len(shape), len(shape)))
        record(c, "sort", {"axis": axis}, (lambda xx, a: lambda: np.sort(xx, axis=a))(x, axis), "exact")
        c2 = new_case()
        x2 = c2.add_input(random_values(shape, np.int32))
        record(c2, "argsort", {"axis": axis},
               (lambda xx, a: lambda: np.argsort(xx, axis=a, kind="stable"))(x2, axis), "exact")
    for _ in range(20):
        c = new_case()
        x = c.add_input(random_values(random_shape(int(RNG.integers(0, 7))), np.float32))
        record(c, "contiguous", {}, (lambda xx: lambda: xx)(x), "exact")

    # ---- run tessel ----
    batch = os.path.join(work, "batch.json")
    with open(batch, "w") as f:
        json.dump([spec for spec, *_ in cases], f)
    subprocess.run([args.tool, batch], check=True)

    failures = 0
    for spec, expect, kind, dtype, out in cases:
        label = f"{spec['op']} {[np.load(i['file']).shape for i in spec['inputs']]} views={[i['view'] for i in spec['inputs']]} attrs={spec['attrs']}"
        err_file = out + ".error"
        try:
            with np.errstate(all="ignore"):
                want = np.asarray(expect())
            numpy_error = None
        except (ValueError, IndexError) as e:
            want, numpy_error = None, e
        if os.path.exists(err_file):
            if numpy_error is None:
                failures += 1
                print(f"FAIL {label}: tessel raised {open(err_file).read()} but NumPy did not")
            continue
        if numpy_error is not None:
            failures += 1
            print(f"FAIL {label}: NumPy raised {numpy_error!r} but tessel did not")
            continue
        got = np.load(out)
        if got.shape != want.shape:
            failures += 1
            print(f"FAIL {label}: shape {got.shape}, expected {want.shape}")
            continue
        if not close(got, want, kind, dtype, spec):
            failures += 1
            bad = mismatch(got, want, kind, dtype)
            print(f"FAIL {label} ({kind}): {bad}")
    print(f"{len(cases)} cases, {failures} failed")
    return 1 if failures else 0


def tolerance(kind, dtype):
    if kind == "narrow":
        return (2.0 ** -7 if dtype == BF16 else 2.0 ** -10), 0.0
    if kind == "transcendental":
        return (1e-13, 1e-300) if dtype == np.float64 else (4e-6, 1e-30)
    if kind == "cancelling":
        # gelu's 1 + erf(x / sqrt 2) cancels for x < -4 in both libraries:
        # the error there is absolute (see test_unary_accuracy.cpp).
        return 4e-6, 3e-7
    return 0.0, 0.0


def close(got, want, kind, dtype, spec):
    if want.dtype == np.bool_ or got.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        return np.array_equal(got.astype(want.dtype), want)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if kind == "reduction":
        inputs = [np.load(i["file"]).astype(np.float64) for i in spec["inputs"]]
        scale = max((np.abs(x).sum() for x in inputs), default=1.0) + 1.0
        rtol = 1e-12 if dtype == np.float64 else 2e-6
        if spec["op"] in ("prod", "cumprod", "var", "std"):
            return np.allclose(g, w, rtol=1e-5 if dtype != np.float64 else 1e-12, atol=1e-6, equal_nan=True)
        return np.allclose(g, w, rtol=0, atol=rtol * scale, equal_nan=True)
    rtol, atol = tolerance(kind, dtype)
    if kind == "exact":
        return np.array_equal(g, w, equal_nan=True)
    return np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)


def mismatch(got, want, kind, dtype):
    """The element that is furthest outside the tolerance."""
    g = got.astype(np.float64).reshape(-1)
    w = np.asarray(want).astype(np.float64).reshape(-1)
    rtol, atol = tolerance(kind, dtype)
    with np.errstate(all="ignore"):
        excess = np.abs(g - w) - (atol + rtol * np.abs(w))
    excess[np.isnan(g) & np.isnan(w)] = -1
    excess[np.isnan(excess)] = np.inf
    i = int(np.argmax(excess))
    return f"element {i}: got {g[i]!r}, expected {w[i]!r}"


if __name__ == "__main__":
    sys.exit(main())

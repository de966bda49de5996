"""tessel's sparse COO and CSR tensors against PyTorch (CPU) on random cases
with a fixed seed: coalescing unsorted COO entries with repeats
(torch.sparse_coo_tensor(...).coalesce()), COO -> CSR (.to_sparse_csr()),
CSR -> COO and dense, dense -> COO/CSR (.to_sparse(), .to_sparse_csr())
with NaN and -0.0, i32 and i64 indices, the CSR x dense product
(torch.sparse.mm and CSR @ dense) with row-major and transposed dense
operands, and malformed parts, which torch's own validators
(torch._validate_sparse_{coo,csr}_tensor_args) and tessel must both refuse.

Tolerances, per element, against the exact f64 product of the same inputs
(scale = |A| @ |B|, which bounds every partial sum):
- f64: 1e-13 * scale; f32: 2e-6 * scale (a handful of products, each
  rounding by 2^-24 of at most the scale);
- bf16/f16 (torch has no CPU kernel; inputs are bf16/f16-exact, products
  exact in f32): the f32 bound plus half an ulp of the result, at most
  2^-8 (bf16) or 2^-11 (f16) times |exact|.
Coalesced sums of repeats: f64 1e-13 and f32 2e-6 times the sum of |values|
(torch and tessel may add repeats in different orders). Indices must match
exactly.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import torch

RNG = np.random.default_rng(20260611)
FAILURES = []
NARROW = {"bf16": ml_dtypes.bfloat16, "f16": np.float16}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


class Tool:
    def __init__(self, path, workdir):
        self.path, self.dir, self.count = path, workdir, 0

    def file(self, array):
        self.count += 1
        name = os.path.join(self.dir, f"in{self.count}.npy")
        np.save(name, np.ascontiguousarray(array))
        return name

    def prefix(self):
        self.count += 1
        return os.path.join(self.dir, f"out{self.count}")

    def run(self, *args):
        """(exit code, error code or None)."""
        r = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True)
        if r.returncode == 3:
            return 3, r.stderr.split(":")[0]
        if r.returncode != 0:
            print(r.stdout, r.stderr)
        return r.returncode, None

    def load(self, prefix, what):
        return np.load(f"{prefix}_{what}.npy")


def shape_arg(shape):
    return ",".join(str(s) for s in shape)


def close(got, want, scale, rel):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    return bool(np.all(np.abs(got - want) <= rel * np.asarray(scale, np.float64)))


def random_coo(shape, nnz, dtype):
    """Unsorted entries, with about a third repeated."""
    idx = np.stack([RNG.integers(0, max(s, 1), nnz) for s in shape]) if nnz else \
        np.zeros((len(shape), 0), np.int64)
    if nnz > 3:
        repeat = RNG.integers(0, nnz, nnz // 3)
        idx = np.concatenate([idx, idx[:, repeat]], axis=1)
    order = RNG.permutation(idx.shape[1])
    idx = idx[:, order]
    vals = RNG.standard_normal(idx.shape[1]).astype(dtype)
    return idx, vals


def coo_cases(tool):
    cases = [((5, 7), 12), ((40, 30), 150), ((1, 1), 3), ((3, 0), 0), ((6, 4), 0),
             ((4, 5, 6), 40), ((17,), 9)]
    for shape, nnz in cases:
        for index in (np.int32, np.int64):
            for dtype, rel in ((np.float32, 2e-6), (np.float64, 1e-13)):
                idx, vals = random_coo(shape, nnz, dtype)
                name = f"coo {shape} nnz={idx.shape[1]} {np.dtype(index).name} {np.dtype(dtype).name}"
                out = tool.prefix()
                rc, _ = tool.run("coo", tool.file(idx.astype(index)), tool.file(vals),
                                 shape_arg(shape), out)
                check(rc == 0, name + ": tool ran")
                if rc != 0:
                    continue
                t = torch.sparse_coo_tensor(torch.from_numpy(idx.astype(np.int64)),
                                            torch.from_numpy(vals), shape).coalesce()
                absum = torch.sparse_coo_tensor(torch.from_numpy(idx.astype(np.int64)),
                                                torch.from_numpy(np.abs(vals)), shape).coalesce()
                got_idx = tool.load(out, "indices")
                check(got_idx.dtype == index and
                      np.array_equal(got_idx, t.indices().numpy()), name + ": coalesced indices")
                check(close(tool.load(out, "values"), t.values().numpy(),
                            absum.values().numpy(), rel), name + ": coalesced values")
                check(close(tool.load(out, "dense"), t.to_dense().numpy(),
                            absum.to_dense().numpy(), rel), name + ": to_dense")
                if len(shape) == 2:
                    c = t.to_sparse_csr()
                    check(np.array_equal(tool.load(out, "crow"), c.crow_indices().numpy()) and
                          np.array_equal(tool.load(out, "col"), c.col_indices().numpy()),
                          name + ": CSR indices")
                    check(close(tool.load(out, "csr_values"), c.values().numpy(),
                                absum.values().numpy(), rel), name + ": CSR values")


def random_dense(shape, density=0.25):
    x = RNG.standard_normal(shape).astype(np.float32)
    x[RNG.random(shape) >= density] = 0
    return x


def dense_cases(tool):
    for shape in ((6, 9), (1, 5), (13,), (3, 4, 5), (0, 4), (5, 5)):
        x = random_dense(shape)
        if x.size >= 3:
            flat = x.reshape(-1)
            flat[0], flat[1], flat[2] = np.nan, -0.0, np.inf
        for index in ("i32", "i64"):
            name = f"dense {shape} {index}"
            out = tool.prefix()
            rc, _ = tool.run("dense", tool.file(x), index, out)
            check(rc == 0, name + ": tool ran")
            if rc != 0:
                continue
            t = torch.from_numpy(x)
            s = t.to_sparse()
            want_type = np.int32 if index == "i32" else np.int64
            got_idx = tool.load(out, "indices")
            check(got_idx.dtype == want_type and np.array_equal(got_idx, s.indices().numpy()),
                  name + ": to_sparse indices (NaN kept, -0.0 dropped)")
            check(np.array_equal(tool.load(out, "values"), s.values().numpy(), equal_nan=True),
                  name + ": to_sparse values")
            if len(shape) == 2:
                c = t.to_sparse_csr()
                check(np.array_equal(tool.load(out, "crow"), c.crow_indices().numpy()) and
                      np.array_equal(tool.load(out, "col"), c.col_indices().numpy()),
                      name + ": to_sparse_csr indices")


def csr_parts(shape, density, index=np.int64):
    c = torch.from_numpy(random_dense(shape, density)).to_sparse_csr()
    return (c.crow_indices().numpy().astype(index), c.col_indices().numpy().astype(index),
            c.values().numpy())


def torch_rejects(validate, *args):
    try:
        validate(*args)
    except RuntimeError:
        return True
    return False


def csr_cases(tool):
    for shape in ((7, 9), (30, 3), (4, 1)):
        for index in (np.int32, np.int64):
            crow, col, vals = csr_parts(shape, 0.4, index)
            name = f"csr {shape} {np.dtype(index).name}"
            out = tool.prefix()
            rc, _ = tool.run("csr", tool.file(crow), tool.file(col), tool.file(vals),
                             shape_arg(shape), out)
            check(rc == 0, name + ": tool ran")
            if rc != 0:
                continue
            t = torch.sparse_csr_tensor(torch.from_numpy(crow.astype(np.int64)),
                                        torch.from_numpy(col.astype(np.int64)),
                                        torch.from_numpy(vals), shape)
            check(np.array_equal(tool.load(out, "indices"), t.to_sparse_coo().indices().numpy()),
                  name + ": to_coo indices")
            check(np.array_equal(tool.load(out, "dense"), t.to_dense().numpy()),
                  name + ": to_dense")

    # Malformed parts: torch's validator and tessel both refuse them.
    shape = (5, 6)
    crow, col, vals = csr_parts(shape, 0.6)
    row = next(r for r in range(shape[0]) if crow[r + 1] - crow[r] >= 2)
    p = crow[row]

    def mutate(kind):
        c, k = crow.copy(), col.copy()
        if kind == "crow starts at 1":
            c[0] = 1
        elif kind == "crow decreases":
            c[2], c[3] = c[3] + 1, c[2]
        elif kind == "crow ends short":
            c[-1] -= 1
        elif kind == "columns unsorted":
            k[p], k[p + 1] = k[p + 1], k[p]
        elif kind == "column repeated":
            k[p + 1] = k[p]
        elif kind == "column past the end":
            k[p] = shape[1]
        elif kind == "negative column":
            k[p] = -1
        return c, k

    expected = {"crow starts at 1": "E3001", "crow decreases": "E3001",
                "crow ends short": "E3001", "columns unsorted": "E3001",
                "column repeated": "E3001", "column past the end": "E2302",
                "negative column": "E2302"}
    for kind, code in expected.items():
        c, k = mutate(kind)
        theirs = torch_rejects(torch._validate_sparse_csr_tensor_args,
                               torch.from_numpy(c), torch.from_numpy(k),
                               torch.from_numpy(vals), shape)
        _, ours = tool.run("csr", tool.file(c), tool.file(k), tool.file(vals),
                           shape_arg(shape), tool.prefix())
        check(theirs and ours == code, f"malformed CSR, {kind}: torch refuses, tessel {ours} (want {code})")

    idx, v = random_coo((4, 5), 6, np.float32)
    for kind, fix in (("index past the end", lambda i: i.__setitem__((1, 2), 5)),
                      ("negative index", lambda i: i.__setitem__((0, 0), -1))):
        bad = idx.copy()
        fix(bad)
        theirs = torch_rejects(torch._validate_sparse_coo_tensor_args,
                               torch.from_numpy(bad), torch.from_numpy(v), (4, 5))
        _, ours = tool.run("coo", tool.file(bad), tool.file(v), "4,5", tool.prefix())
        check(theirs and ours == "E2302", f"malformed COO, {kind}: torch refuses, tessel {ours}")


def spmm_cases(tool):
    cases = [(37, 53, 19, 0.1), (1, 1, 1, 1.0), (100, 64, 130, 0.1), (50, 20, 0, 0.2),
             (64, 300, 33, 0.02), (9, 0, 4, 0.0)]
    tolerances = {"f32": (2e-6, 0.0), "f64": (1e-13, 0.0),
                  "bf16": (2e-6, 2.0 ** -8), "f16": (2e-6, 2.0 ** -11)}
    for rows, cols, n, density in cases:
        a = random_dense((rows, cols), density).astype(np.float64)
        b = RNG.standard_normal((cols, n))
        for dtype, (rel, rounding) in tolerances.items():
            if dtype in NARROW:  # inputs exact in the narrow type
                a = a.astype(NARROW[dtype]).astype(np.float64)
                b = b.astype(NARROW[dtype]).astype(np.float64)
            store = np.float64 if dtype == "f64" else np.float32
            ta = torch.from_numpy(a.astype(store))
            csr = ta.to_sparse_csr()
            exact = a @ b
            scale = np.abs(a) @ np.abs(b)
            bound = rel * scale + rounding * np.abs(exact)
            if dtype in ("f32", "f64"):
                tb = torch.from_numpy(b.astype(store))
                ref_coo = torch.sparse.mm(ta.to_sparse(), tb).numpy()
                ref_csr = (csr @ tb).numpy() if n > 0 else ref_coo
                check(np.all(np.abs(ref_coo - exact) <= bound) and
                      np.all(np.abs(ref_csr - exact) <= bound),
                      f"torch spmm {rows}x{cols}x{n} {dtype} within the bound (sanity)")
            for layout in ("row", "t"):
                name = f"spmm {rows}x{cols}x{n} density {density} {dtype} b={layout}"
                out = tool.prefix() + ".npy"
                b_file = tool.file((b if layout == "row" else b.T).astype(store))
                rc, _ = tool.run("spmm", tool.file(csr.crow_indices().numpy().astype(np.int32)),
                                 tool.file(csr.col_indices().numpy().astype(np.int32)),
                                 tool.file(csr.values().numpy()), f"{rows},{cols}", b_file,
                                 dtype, layout, out)
                check(rc == 0, name + ": tool ran")
                if rc != 0:
                    continue
                got = np.load(out).astype(np.float64)
                err = np.abs(got - exact) if got.shape == exact.shape else np.inf
                check(got.shape == exact.shape and np.all(err <= bound),
                      f"{name}: max error {np.max(err, initial=0):.3g}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tool = Tool(args.tool, tmp)
        coo_cases(tool)
        dense_cases(tool)
        csr_cases(tool)
        spmm_cases(tool)
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

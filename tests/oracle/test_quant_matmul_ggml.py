"""linear(x, W) with GGUF block weights against ggml's CPU kernels.

ggml is llama-cpp-python's libggml-cpu (the llama.cpp that package vendors,
built for this CPU by scripts/setup), driven through ctypes: for each weight
row ggml quantises the activation row with its from_float (the type's
vec_dot_type, Q8_0 or Q8_K) and calls the type's vec_dot, which is what its
mul_mat does row by row.

- Types with a tessel integer kernel (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS)
  quantise the activations as ggml does at every M, and both their dot
  kernels (few rows) and their packed GEMM (more) sum the integer products
  exactly: every output must be within 1e-5 of ggml's, relative to the
  largest magnitude of ggml's output (only the f32 steps differ: the order
  of accumulation, and the GEMM's per-sub-block scale products).
- Every other type dequantises tiles exactly and runs an f32 GEMM with
  unrounded activations, so it is compared with the f64 product of ggml's
  own dequantisation (to_float) and x: within 2^-16 of sum |w x|.
- NaN outputs must be where ggml's are.

Usage: test_quant_matmul_ggml.py --tool BUILD/tests/quant_tool
"""
import argparse
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_quant_ggml import GGML_IDS, NEEDS_IMATRIX, Ggml  # noqa: E402

INTEGER_KERNELS = {"q4_0", "q8_0", "q4_k", "q5_k", "q6_k", "iq4_xs"}
# Weight types ggml multiplies (q8_1 and q8_k are activation formats).
WEIGHT_TYPES = [t for t in GGML_IDS if t not in ("q8_1", "q8_k")]
FAILURES = []


class CpuTraits(ctypes.Structure):
    _fields_ = [("from_float", ctypes.c_void_p), ("vec_dot", ctypes.c_void_p),
                ("vec_dot_type", ctypes.c_int), ("nrows", ctypes.c_int64)]


FROM_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_int64)
VEC_DOT = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                           ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                           ctypes.c_size_t, ctypes.c_int)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


class GgmlCpu:
    def __init__(self, base):
        import importlib.util
        spec = importlib.util.find_spec("llama_cpp")
        lib = os.path.join(os.path.dirname(spec.origin), "lib", "libggml-cpu.so")
        self.lib = ctypes.CDLL(lib)
        self.lib.ggml_cpu_init()
        self.lib.ggml_get_type_traits_cpu.restype = ctypes.POINTER(CpuTraits)
        self.lib.ggml_get_type_traits_cpu.argtypes = [ctypes.c_int]
        self.base = base

    def linear(self, name, w_bytes, n, k, x):
        t = self.lib.ggml_get_type_traits_cpu(GGML_IDS[name]).contents
        act_traits = self.base.traits_by_id(t.vec_dot_type)
        act_row = k // act_traits.blck_size * act_traits.type_size
        act_fn = self.lib.ggml_get_type_traits_cpu(t.vec_dot_type).contents
        row_bytes = len(w_bytes) // n
        dot = VEC_DOT(t.vec_dot)
        y = np.empty((x.shape[0], n), np.float32)
        out = np.zeros(1, np.float32)
        for i in range(x.shape[0]):
            xi = np.ascontiguousarray(x[i])
            act = np.zeros(act_row, np.uint8)
            FROM_FLOAT(act_fn.from_float)(xi.ctypes.data, act.ctypes.data, k)
            for r in range(n):
                dot(k, out.ctypes.data, 0,
                    w_bytes.ctypes.data + r * row_bytes, 0,
                    act.ctypes.data, 0, 1)
                y[i, r] = out[0]
        return y


class Tool:
    def __init__(self, tool, tmp):
        self.tool, self.tmp = tool, tmp

    def linear(self, name, w_bytes, n, k, x):
        w_path = os.path.join(self.tmp, "w.bin")
        x_path = os.path.join(self.tmp, "x.bin")
        y_path = os.path.join(self.tmp, "y.bin")
        w_bytes.tofile(w_path)
        np.ascontiguousarray(x, np.float32).tofile(x_path)
        subprocess.run([self.tool, "linear", name, str(n), str(k), w_path,
                        x_path, y_path], check=True)
        return np.fromfile(y_path, np.float32).reshape(x.shape[0], n)


def weights(ggml, name, rng, n, k):
    """ggml's own quantisation of random weights; random codes with a sane
    f16 scale for the types that need an importance matrix."""
    t = ggml.traits(name)
    if name not in NEEDS_IMATRIX:
        return ggml.quantize(name, rng.standard_normal(n * k).astype(np.float32),
                             n, k)
    blocks = rng.integers(0, 256, n * k // t.blck_size * t.type_size,
                          dtype=np.uint8).reshape(-1, t.type_size)
    if name != "iq1_m":  # the others start with an f16 scale
        blocks[:, 0:2] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)
    return blocks.reshape(-1)


def compare(name, m, got, want, what):
    nan_ok = np.array_equal(np.isnan(got), np.isnan(want))
    check(nan_ok, f"{name} M={m}: NaN outputs where {what}'s are")
    fin = ~np.isnan(want)
    return fin


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    base = Ggml()

    def traits_by_id(type_id):
        return base.lib.ggml_get_type_traits(type_id).contents
    base.traits_by_id = traits_by_id
    cpu = GgmlCpu(base)
    rng = np.random.default_rng(20261202)
    # N leaves a remainder after groups of four rows; K = 5 x 256 one after
    # groups of four K-quant blocks.
    n, k = 23, 1280
    with tempfile.TemporaryDirectory() as tmp:
        tool = Tool(args.tool, tmp)
        for name in WEIGHT_TYPES:
            w = weights(base, name, rng, n, k)
            w_f32 = base.dequantize(name, w, n * k).reshape(n, k).astype(np.float64)
            for m in (1, 3, 33):
                x = rng.standard_normal((m, k)).astype(np.float32)
                x[:, :32] *= 40  # a block with a much larger scale
                got = tool.linear(name, w, n, k, x)
                if name in INTEGER_KERNELS:
                    want = cpu.linear(name, w, n, k, x)
                    fin = compare(name, m, got, want, "ggml")
                    scale = np.max(np.abs(want[fin])) if fin.any() else 1.0
                    err = np.max(np.abs(got[fin] - want[fin]) / scale) if fin.any() else 0
                    check(err <= 1e-5,
                          f"{name} M={m}: within 1e-5 of ggml's vec_dot (worst {err:.2e})")
                else:
                    want = x.astype(np.float64) @ w_f32.T
                    fin = compare(name, m, got, want, "the f64 product")
                    bound = np.abs(x.astype(np.float64)) @ np.abs(w_f32.T) * 2.0**-16
                    excess = np.max(np.abs(got - want)[fin] - bound[fin]) if fin.any() else -1
                    check(excess <= 0,
                          f"{name} M={m}: within 2^-16 sum|wx| of the f64 product "
                          f"of ggml's dequantisation")
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

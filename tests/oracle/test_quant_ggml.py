"""tessel's GGUF block codecs against ggml's own C code and the gguf package.

ggml is llama-cpp-python's libggml-base (the llama.cpp that package vendors),
called through ctypes: `to_float` of ggml_get_type_traits is the dequantiser,
ggml_quantize_chunk without an importance matrix (what llama_model_quantize
runs) the quantiser, and `from_float_ref` for Q8_1 and Q8_K, which
ggml_quantize_chunk does not take (Q8_K's exported functions stand in for
its missing traits; ggml never decodes Q8_1, whose decode d * q is
computed in NumPy). Dequantisation must be bit-identical (where ggml gives a
NaN, tessel must too; see differing()) on random block bytes (every code),
on random blocks whose scale fields are sprinkled with chosen extremes (f16
and f32 ±Inf, NaNs, ±0, subnormals and the largest finite values; E8M0
exponent bytes 0, 1, 127, 254 and NaN), on all-zero and all-0xFF blocks and on
blocks ggml quantised;
quantisation must give identical bytes on normal data at several scales,
exact ties, zeros, one huge value, subnormals, constant rows and NaN/Inf
(ggml's result there comes from its comparisons and x86-64's conversions;
tessel reproduces it, docs/quantisation.md).
The gguf package's NumPy decoders (an independent reimplementation) must
agree with both on ggml-quantised blocks. The IQ1/IQ2/IQ3 types, which ggml
quantises only with an importance matrix, must be refused with E2201."""
import argparse
import ctypes
import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import gguf
except ImportError:  # the decoders are a second opinion; ggml is the oracle
    gguf = None

FAILURES = []

# tessel dtype name -> ggml type id (ggml.h).
GGML_IDS = {
    "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "q8_1": 9,
    "q2_k": 10, "q3_k": 11, "q4_k": 12, "q5_k": 13, "q6_k": 14, "q8_k": 15,
    "iq2_xxs": 16, "iq2_xs": 17, "iq3_xxs": 18, "iq1_s": 19, "iq4_nl": 20,
    "iq3_s": 21, "iq2_s": 22, "iq4_xs": 23, "iq1_m": 29, "tq1_0": 34,
    "tq2_0": 35, "mxfp4": 39,
}
NEEDS_IMATRIX = {"iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s",
                 "iq1_m"}
# Not taken by ggml_quantize_chunk: compared with from_float_ref instead.
REF_ONLY = {"q8_1", "q8_k"}


# The types whose quantiser searches candidate scales (ggml's
# make_qkx2_quants, make_qx_quants and the IQ4 group search; tessel runs
# the candidates a SIMD lane each).
SEARCHED = ("q2_k", "q4_k", "q5_k", "q6_k", "iq4_nl", "iq4_xs")


class TypeTraits(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("blck_size", ctypes.c_int64),
                ("blck_size_interleave", ctypes.c_int64),
                ("type_size", ctypes.c_size_t), ("is_quantized", ctypes.c_bool),
                ("to_float", ctypes.c_void_p), ("from_float_ref", ctypes.c_void_p)]


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
FROM_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def load_ggml():
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None:
        sys.exit("llama-cpp-python is not installed: run scripts/setup")
    lib = os.path.join(os.path.dirname(spec.origin), "lib", "libggml-base.so")
    ggml = ctypes.CDLL(lib)
    ggml.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
    ggml.ggml_get_type_traits.argtypes = [ctypes.c_int]
    # The CPU backend's run-time quantisers (what fills llama.cpp's KV
    # cache on this machine): x86 SIMD for some types.
    ggml.cpu = ctypes.CDLL(os.path.join(os.path.dirname(lib), "libggml-cpu.so"))
    ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64,
                                         ctypes.c_void_p]
    return ggml


class Ggml:
    def __init__(self):
        self.lib = load_ggml()

    def traits(self, name):
        return self.lib.ggml_get_type_traits(GGML_IDS[name]).contents

    def dequantize(self, name, blocks, n):
        if name == "q8_1":
            return q8_1_reference(blocks)
        out = np.empty(n, np.float32)
        # Q8_K has no to_float in ggml's traits, but its functions are
        # exported.
        fn = (ctypes.cast(self.lib.dequantize_row_q8_K, ctypes.c_void_p).value
              if name == "q8_k" else self.traits(name).to_float)
        TO_FLOAT(fn)(blocks.ctypes.data, out.ctypes.data, n)
        return out

    def quantize(self, name, values, rows, row_len):
        t = self.traits(name)
        out = np.zeros(rows * row_len // t.blck_size * t.type_size, np.uint8)
        if name in REF_ONLY:
            fn = (ctypes.cast(self.lib.quantize_row_q8_K_ref, ctypes.c_void_p).value
                  if name == "q8_k" else t.from_float_ref)
            FROM_FLOAT(fn)(values.ctypes.data, out.ctypes.data, rows * row_len)
        else:
            self.lib.ggml_quantize_chunk(GGML_IDS[name], values.ctypes.data,
                                         out.ctypes.data, 0, rows, row_len, None)
        return out

    def quantize_cpu(self, name, values, rows, row_len):
        """The CPU backend's quantize_row_<name> (SIMD on x86 for q8_0),
        None where it exports none."""
        fn = getattr(self.lib.cpu, f"quantize_row_{name}", None)
        if fn is None:
            return None
        t = self.traits(name)
        out = np.zeros(rows * row_len // t.blck_size * t.type_size, np.uint8)
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        fn(values.ctypes.data, out.ctypes.data, rows * row_len)
        return out

    def quantize_runtime(self, name, values, rows, row_len):
        """ggml's from_float_ref: how its CPU backend quantises tensors at
        run time (llama.cpp's KV cache), None where the traits have none."""
        t = self.traits(name)
        if not t.from_float_ref:
            return None
        out = np.zeros(rows * row_len // t.blck_size * t.type_size, np.uint8)
        FROM_FLOAT(t.from_float_ref)(values.ctypes.data, out.ctypes.data, rows * row_len)
        return out


def q8_1_reference(blocks):
    """ggml never decodes Q8_1 (an activation format): its decode is
    d * q with d the block's leading f16, here in NumPy."""
    b = blocks.reshape(-1, 36)
    d = b[:, 0:2].copy().view(np.float16).astype(np.float32)
    q = b[:, 4:].view(np.int8).astype(np.float32)
    return (d * q).reshape(-1)


class Tessel:
    def __init__(self, tool, tmp):
        self.tool, self.tmp = tool, tmp

    def run(self, mode, name, data, rows, row_len):
        src = os.path.join(self.tmp, "in.bin")
        dst = os.path.join(self.tmp, "out.bin")
        data.tofile(src)
        r = subprocess.run([self.tool, mode, name, str(rows), str(row_len), src, dst],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr.strip()
        return np.fromfile(dst, np.uint8 if mode.startswith("quantize") else np.float32), ""


def differing(a, b):
    """Positions whose bits differ, except where both are NaN: a NaN's sign
    and payload come from whichever operand the compiled code multiplies
    first (a NaN scale times a +-1 sign), which optimisation levels and
    sanitizer builds order differently; ggml's Release build and tessel's
    agree on them, but they are not part of the contract."""
    both_nan = np.isnan(a) & np.isnan(b)
    return (a.view(np.uint32) != b.view(np.uint32)) & ~both_nan


def bits_equal(a, b):
    return a is not None and a.shape == b.shape and not differing(a, b).any()


def first_difference(a, b):
    if a is None or a.shape != b.shape:
        return "shape"
    i = int(np.flatnonzero(differing(a, b))[0])
    return f"element {i}: tessel {a[i]!r} ggml {b[i]!r}"


def value_sets(rng, rows, row_len):
    n = rows * row_len
    sets = {
        "normal": rng.standard_normal(n),
        "normal*1e-3": rng.standard_normal(n) * 1e-3,
        "normal*1e4": rng.standard_normal(n) * 1e4,
        "heavy tails": rng.standard_t(2, n),
        "zeros": np.zeros(n),
        "constant": np.full(n, 0.75),
        "negative": -np.abs(rng.standard_normal(n)),
        "small integers (ties)": rng.integers(-8, 8, n) * 0.5,
        "subnormal": rng.standard_normal(n) * 1e-40,
    }
    huge = rng.standard_normal(n)
    huge[::97] = 3e4
    sets["one huge value per block"] = huge
    special = rng.standard_normal(n)
    special[5] = np.nan
    special[300] = np.inf
    special[301] = -np.inf
    special[1023] = np.nan  # the last value of a block
    sets["nan and inf"] = special
    return {k: np.ascontiguousarray(v, np.float32) for k, v in sets.items()}


# Extremes for the scale fields: f16 (±Inf, quiet and signalling NaNs, ±0,
# the smallest and largest subnormals, a negative subnormal, ±the largest
# finite, the smallest normal), f32 (the same kinds) and E8M0 exponent
# bytes (2^-127, 2^-126, 2^0, 2^127, NaN). Drawn from a generator of their
# own, so that the inputs of the checks after them stay as they were.
SPRINKLES = (
    ("f16 extremes", 2, [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE00, 0x0000, 0x8000, 0x0001,
                         0x03FF, 0x8001, 0x7BFF, 0xFBFF, 0x0400]),
    ("f32 extremes", 4, [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000000,
                         0x80000000, 0x00000001, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
                         0x00800000]),
    ("exponent-byte extremes", 1, [0x00, 0x01, 0x7F, 0xFE, 0xFF]),
)


def sprinkled(rng, nbytes, width, specials):
    """Random bytes with half of their aligned `width`-byte words (little
    endian) replaced by values drawn from `specials`."""
    blocks = rng.integers(0, 256, nbytes, dtype=np.uint8)
    words = blocks[: nbytes // width * width].view(f"<u{width}")
    chosen = rng.random(words.size) < 0.5
    words[chosen] = rng.choice(np.array(specials, dtype=f"<u{width}"), int(chosen.sum()))
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    args = ap.parse_args()
    ggml = Ggml()
    rng = np.random.default_rng(13)
    sprinkle_rng = np.random.default_rng(14)
    rows, row_len = 4, 512
    n = rows * row_len
    with tempfile.TemporaryDirectory() as tmp:
        tessel = Tessel(args.tool, tmp)
        for name in GGML_IDS:
            t = ggml.traits(name)
            nbytes = n // t.blck_size * t.type_size
            # Dequantisation of adversarial bytes.
            inputs = {
                "random bytes": rng.integers(0, 256, nbytes, dtype=np.uint8),
                "zero bytes": np.zeros(nbytes, np.uint8),
                "0xff bytes": np.full(nbytes, 0xFF, np.uint8),
            }
            for what, blocks in inputs.items():
                ours, err = tessel.run("dequantize", name, blocks, rows, row_len)
                theirs = ggml.dequantize(name, blocks, n)
                ok = bits_equal(ours, theirs)
                check(ok, f"{name} dequantise {what} ({n} values)" +
                      ("" if ok else f": {err or first_difference(ours, theirs)}"))
            # Scales chosen, not left to chance: random blocks with half
            # their aligned 16-bit words (every f16 scale sits at an even
            # offset of an even-sized block), 32-bit words (Q8_K's f32 d)
            # or bytes (MXFP4's E8M0 exponent) replaced by extremes.
            big_rows = 8 * rows
            big_n = big_rows * row_len
            big_bytes = big_n // t.blck_size * t.type_size
            for what, width, specials in SPRINKLES:
                blocks = sprinkled(sprinkle_rng, big_bytes, width, specials)
                ours, err = tessel.run("dequantize", name, blocks, big_rows, row_len)
                theirs = ggml.dequantize(name, blocks, big_n)
                ok = bits_equal(ours, theirs)
                check(ok, f"{name} dequantise blocks sprinkled with {what} ({big_n} values)" +
                      ("" if ok else f": {err or first_difference(ours, theirs)}"))
            # The gguf package decodes the lattice types independently; it
            # applies signs so that a NaN's sign bit can differ from ggml's,
            # hence NaN counts as equal to NaN here.
            if gguf is not None and name in NEEDS_IMATRIX:
                blocks = inputs["random bytes"]
                ours, _ = tessel.run("dequantize", name, blocks, rows, row_len)
                ref = gguf.quants.dequantize(
                    blocks.reshape(rows, -1),
                    gguf.GGMLQuantizationType[name.upper()]).reshape(-1)
                check(ours is not None and np.array_equal(ours, ref, equal_nan=True),
                      f"{name} random blocks decode as the gguf package's NumPy decoder")
            # Quantisation.
            if name in NEEDS_IMATRIX:
                _, err = tessel.run("quantize", name,
                                    rng.standard_normal(n).astype(np.float32),
                                    rows, row_len)
                check(err.startswith("E2201") and "importance matrix" in err,
                      f"{name} quantise refused with E2201 ({err[:60]})")
                continue
            # The searched K-quants' float sums decide a byte only now and
            # then (an FMA in one sum changed 1-234 bytes of a million
            # values, none of the small sets'): a million values more.
            if name in SEARCHED:
                for what, values in {
                        "normal": rng.standard_normal(1 << 20),
                        "heavy tails": rng.standard_t(2, 1 << 20)}.items():
                    values = values.astype(np.float32)
                    ours, err = tessel.run("quantize", name, values, 256, 4096)
                    theirs = ggml.quantize(name, values, 256, 4096)
                    ok = ours is not None and np.array_equal(ours, theirs)
                    where = err
                    if not ok and ours is not None and ours.shape == theirs.shape:
                        where = f"{int((ours != theirs).sum())} bytes differ"
                    check(ok, f"{name} quantise 2^20 values, {what}: bytes equal ggml's" +
                          ("" if ok else f": {where}"))
            for what, values in value_sets(rng, rows, row_len).items():
                ours, err = tessel.run("quantize", name, values, rows, row_len)
                theirs = ggml.quantize(name, values, rows, row_len)
                ok = ours is not None and np.array_equal(ours, theirs)
                where = err
                if not ok and ours is not None and ours.shape == theirs.shape:
                    i = int(np.flatnonzero(ours != theirs)[0])
                    where = f"byte {i} (block {i // t.type_size})"
                check(ok, f"{name} quantise {what}: bytes equal ggml's" +
                      ("" if ok else f": {where}"))
                # CastOptions::runtime_quantizer against ggml's run-time
                # quantiser (from_float_ref); for IQ4_NL it must differ
                # from the file quantiser on normal data, for the rest not.
                # ggml's run-time IQ4_NL leaves a block whose largest
                # magnitude is below 1e-15 with scale 0 and the codes its
                # stack buffer held: those codes are not compared (any
                # decodes to 0).
                runtime = ggml.quantize_runtime(name, values, rows, row_len)
                if runtime is not None:
                    ours_rt, err = tessel.run("quantize_runtime", name, values, rows, row_len)
                    if name == "iq4_nl" and ours_rt is not None and ours_rt.shape == runtime.shape:
                        blocks = runtime.reshape(-1, 18).copy()
                        mine = ours_rt.reshape(-1, 18).copy()
                        silent = np.nanmax(np.abs(values.reshape(-1, 32)), axis=1) < 1e-15
                        blocks[silent, 2:] = 0
                        mine[silent, 2:] = 0
                        runtime, ours_rt = blocks.reshape(-1), mine.reshape(-1)
                    ok = ours_rt is not None and np.array_equal(ours_rt, runtime)
                    if not ok and ours_rt is not None and ours_rt.shape == runtime.shape:
                        i = int(np.flatnonzero(ours_rt != runtime)[0])
                        err = f"byte {i} (block {i // t.type_size})"
                    check(ok, f"{name} run-time quantise {what}: bytes equal ggml's from_float_ref" +
                          ("" if ok else f": {err}"))
                    if what == "normal":
                        check((name == "iq4_nl") != np.array_equal(runtime, theirs),
                              f"{name} run-time and file quantisers "
                              f"{'differ' if name == 'iq4_nl' else 'agree'}")
                    # The CPU backend's own routine, where it exports one:
                    # the same bytes, except that x86's SIMD q8_0 and q8_1
                    # (127 / amax, rounding half to even) part from the
                    # reference on subnormal blocks and around NaN and Inf.
                    cpu = ggml.quantize_cpu(name, values, rows, row_len)
                    quirk = name in ("q8_0", "q8_1") and what in ("subnormal", "nan and inf")
                    if cpu is not None and ours_rt is not None and not quirk:
                        if name == "iq4_nl":
                            cpu = cpu.reshape(-1, 18).copy()
                            cpu[silent, 2:] = 0
                            cpu = cpu.reshape(-1)
                        check(np.array_equal(ours_rt, cpu),
                              f"{name} run-time quantise {what}: bytes equal "
                              f"libggml-cpu's quantize_row_{name}")
                if what == "normal" and ours is not None:
                    back, _ = tessel.run("dequantize", name, ours, rows, row_len)
                    check(bits_equal(back, ggml.dequantize(name, theirs, n)),
                          f"{name} round trip of normal data decodes as ggml's")
                    if gguf is not None and name not in {"q8_1", "q8_k"} and \
                            hasattr(gguf.GGMLQuantizationType, name.upper()):
                        try:
                            ref = gguf.quants.dequantize(
                                theirs.reshape(rows, -1),
                                gguf.GGMLQuantizationType[name.upper()])
                        except NotImplementedError:
                            continue
                        check(np.array_equal(back.reshape(rows, row_len), ref),
                              f"{name} decodes as the gguf package's NumPy decoder")
        # Rows that are not whole blocks are refused, naming the length.
        _, err = tessel.run("quantize", "q4_k", np.zeros(2 * 96, np.float32), 2, 96)
        check(err.startswith("E2102") and "96" in err,
              f"q4_k of rows of 96 refused with E2102 naming 96 ({err[:70]})")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`tessel convert` against the reference packages: inputs written by
`safetensors` (single files and a sharded checkpoint with its index),
`gguf.GGUFWriter` and `np.save` (C order, Fortran order, big-endian, a
directory of .npy files) are converted between every pair of formats the
issue names, with and without --dtype, and each output is read back with
the reference readers (`safetensors.safe_open`, `gguf.GGUFReader`,
`np.load`) and compared bit for bit with NumPy / ml_dtypes casts.

Expected values. f32 -> f16 is NumPy's cast, f32 -> bf16/f8_e4m3fn
ml_dtypes' (round to nearest even, one rounding). f16/bf16/f8 sources go
through ml_dtypes' own casts (f32 holds them exactly, so one rounding).
f64 sources: tessel rounds once from the f64 value (docs/dtypes.md), while
ml_dtypes rounds twice through f32; the expected bf16/f8 value is computed
by rounding f64 -> f32 *to odd* first (exact where the f32 value is exact,
otherwise the truncated f32 with its last bit set as a sticky bit), after
which ml_dtypes' f32 -> narrow cast is the correctly rounded single
rounding (f32 has more than twice the narrow types' precision plus two
bits). f64 -> f16 is NumPy's direct cast, which rounds once.

Between a checkpoint directory with config.json and GGUF, `tessel convert`
converts models (test_convert_model.py); here `--tensors` asks for the
tensors alone.

Failures: a dtype the output format lacks (E2201), several tensors into
one .npy (E2102), a truncated input (E3001, exit 3), a GGUF output with no
architecture (E4001, exit 4); none may leave an output or temporary file,
and an existing output survives a failed conversion intact."""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import gguf
import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

FAILURES = []
CHECKS = [0]
TESSEL = None
BF16 = np.dtype(ml_dtypes.bfloat16)
F8 = np.dtype(ml_dtypes.float8_e4m3fn)
NP_OF = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": BF16,
         "f8": F8, "f64": np.dtype(np.float64)}
ST_NAME = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", BF16: "BF16",
           F8: "F8_E4M3", np.dtype(np.float64): "F64", np.dtype(np.int64): "I64",
           np.dtype(np.int32): "I32", np.dtype(np.uint8): "U8"}
VERBOSE = False


def check(cond, what):
    CHECKS[0] += 1
    if VERBOSE or not cond:
        print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(*args):
    return subprocess.run([TESSEL, "convert", *map(str, args)], capture_output=True,
                          text=True)


def converted(what, *args):
    p = run(*args)
    check(p.returncode == 0, f"{what}: exit 0"
          + ("" if p.returncode == 0 else f" (got {p.returncode}: {p.stderr.strip()})"))
    return p


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


def f64_to_f32_round_to_odd(x):
    """f64 -> f32 rounding to odd: exact values stay, inexact ones become the
    f32 value truncated towards zero with its last mantissa bit set."""
    y = x.astype(np.float32)
    inexact = (y.astype(np.float64) != x) & np.isfinite(x)
    toward_zero = np.where(np.abs(y.astype(np.float64)) > np.abs(x),
                           np.nextafter(y, np.float32(0)), y)
    out = np.where(inexact, toward_zero, y)
    b = out.view(np.uint32).copy()
    b[inexact] |= 1
    return b.view(np.float32)


def expected_cast(x, target):
    """What tessel's cast to `target` must give for the array x."""
    target = np.dtype(target)
    if x.dtype == target or x.dtype.kind in "iub":
        return x
    if x.dtype == np.float64 and target in (BF16, F8):
        return f64_to_f32_round_to_odd(x).astype(target)
    return x.astype(target)


# ---- reading outputs with the reference readers ----

def read_safetensors(path):
    """{name: array}, metadata, {name: safetensors dtype} through safe_open.
    F8 tensors come back as raw bytes: safetensors' numpy reader asks for
    numpy.float8_e4m3fn, which NumPy < 2 lacks, so those bytes are read at
    the offsets of the header safe_open has validated."""
    out, dtypes = {}, {}
    with safe_open(path, "np") as f:
        meta = f.metadata()
        for name in f.keys():
            s = f.get_slice(name)
            dtypes[name] = s.get_dtype()
            if s.get_dtype() != "F8_E4M3":
                out[name] = f.get_tensor(name)
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(n))
        data = fh.read()
    for name, entry in header.items():
        if name != "__metadata__" and entry["dtype"] == "F8_E4M3":
            lo, hi = entry["data_offsets"]
            out[name] = np.frombuffer(data[lo:hi], F8).reshape(entry["shape"])
    return out, meta, dtypes


GGUF_NP = {gguf.GGMLQuantizationType.F32: np.dtype(np.float32),
           gguf.GGMLQuantizationType.F16: np.dtype(np.float16),
           gguf.GGMLQuantizationType.F64: np.dtype(np.float64),
           gguf.GGMLQuantizationType.I64: np.dtype(np.int64),
           gguf.GGMLQuantizationType.I32: np.dtype(np.int32),
           gguf.GGMLQuantizationType.BF16: BF16}


def read_gguf(path):
    """{name: row-major array}, {key: (value, type)}, {name: innermost-first
    dims as gguf-py reports them}."""
    r = gguf.GGUFReader(path)
    tensors, dims = {}, {}
    for t in r.tensors:
        dt = GGUF_NP[t.tensor_type]
        # t.shape lists GGUF's ne[], innermost first; gguf-py shapes t.data
        # row-major, but as raw bytes for BF16 (which NumPy lacks), so the
        # shape is taken from ne[] reversed.
        row_major = tuple(int(d) for d in reversed(t.shape))
        tensors[t.name] = np.frombuffer(t.data.tobytes(), dt).reshape(row_major)
        if t.tensor_type != gguf.GGMLQuantizationType.BF16:
            check(tuple(t.data.shape) == row_major,
                  f"gguf-py shapes '{t.name}' {t.data.shape} = ne[] reversed {row_major}")
        dims[t.name] = [int(d) for d in t.shape]
    fields = {k: (f.contents(), f.types) for k, f in r.fields.items()
              if not k.startswith("GGUF.")}
    return tensors, fields, dims


def no_temp_files(directory, what):
    leftovers = [n for n in os.listdir(directory) if n.startswith(".")]
    check(not leftovers, f"{what}: no temporary file left ({leftovers})")


def compare_all(what, got, expected):
    check(sorted(got) == sorted(expected),
          f"{what}: tensor names {sorted(got)} == {sorted(expected)}")
    for name, want in expected.items():
        if name in got:
            g = got[name]
            ok = same_bits(g, want)
            if not ok and g.shape == want.shape and g.dtype == want.dtype:
                diff = np.flatnonzero(bits(g).reshape(-1) != bits(want).reshape(-1))
                i = diff[0]
                src = f"got {bits(g).reshape(-1)[i]:#x} want {bits(want).reshape(-1)[i]:#x}"
                what_detail = f"{len(diff)} elements differ, first [{i}]: {src}"
            else:
                what_detail = f"{g.dtype}{g.shape} vs {want.dtype}{want.shape}"
            check(ok, f"{what}: '{name}' bit-exact ({what_detail if not ok else 'ok'})")


# ---- inputs ----

def f32_cases(rng):
    """Random bit patterns (every exponent, NaNs with payloads, subnormals)
    plus the values where rounding decides: ties of bf16, f16 and e4m3fn,
    overflow boundaries, signed zeros and infinities."""
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40, -1e-45, 3.4e38,
               65504.0, 65519.99, 65520.0, 448.0, 464.0, 465.0, 480.0, -1e5,
               1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-4,
               1 + 3 * 2**-4, 2**-24, 3 * 2**-25, 2**-10, 2**-7, 2**-9 * 1.5]
    randbits = rng.integers(0, 2**32, 1500, dtype=np.uint64).astype(np.uint32).view(np.float32)
    scaled = (rng.standard_normal(500) * np.exp2(rng.integers(-30, 30, 500))).astype(np.float32)
    x = np.concatenate([np.array(special, np.float32), randbits, scaled])
    x = np.concatenate([x, np.zeros((-len(x)) % 32, np.float32)])
    return x.reshape(-1, 32)


def f64_cases(rng):
    """f64 values f32 cannot hold, including the double-rounding trap of
    docs/dtypes.md (1 + 2^-8 + 2^-30 is above bf16's tie, but f32 drops the
    2^-30 and ml_dtypes then rounds to 1)."""
    special = [1 + 2**-8 + 2**-30, 1 + 2**-8 - 2**-30, 1 + 2**-4 + 2**-40, 1 + 2**-11 + 2**-45,
               0.1, -1 / 3, 1e-300, 1e300, np.nan, -np.inf, -0.0]
    x = np.concatenate([np.array(special), rng.standard_normal(245) * 100])
    return x.reshape(16, 16)


def write_inputs(tmp, rng):
    ins = {}
    # One safetensors file with every float dtype, an integer, a misaligning
    # u8, a scalar and an empty tensor.
    bf16 = rng.standard_normal((3, 7)).astype(np.float32)
    bf16[0, :3] = [np.nan, np.inf, -0.0]
    main = {
        "w_f32": f32_cases(rng),
        "w_f16": rng.integers(0, 2**16, (16, 8), dtype=np.uint64).astype(np.uint16).view(np.float16),
        "w_bf16": bf16.astype(BF16),
        "w_f64": f64_cases(rng),
        "ids_i64": rng.integers(-2**62, 2**62, 5, dtype=np.int64),
        "mask_u8": rng.integers(0, 256, 7, dtype=np.uint8),
        "scalar": np.array(3.1415927, np.float32),
        "empty": np.zeros((0, 4), np.float32),
    }
    meta = {"format": "pt", "note": "h\u00e9llo"}
    ins["st"] = os.path.join(tmp, "in", "main.safetensors")
    os.makedirs(os.path.dirname(ins["st"]))
    save_file(main, ins["st"], metadata=meta)
    ins["st_tensors"], ins["st_meta"] = main, meta

    # For GGUF: dtypes GGUF has, a config.json naming the architecture.
    to_gguf = {"w_f32": rng.standard_normal((4, 6)).astype(np.float32),
               "w_bf16": rng.standard_normal((2, 3, 4)).astype(BF16),
               "w_f64": np.linspace(-3, 3, 10),  # exact in f32
               "w_f16": rng.standard_normal((5,)).astype(np.float16),
               "ids_i64": np.arange(5, dtype=np.int64) * 3}
    for d in ("with_config", "no_config"):
        os.makedirs(os.path.join(tmp, d))
        save_file(to_gguf, os.path.join(tmp, d, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(tmp, "with_config", "config.json"), "w") as f:
        json.dump({"model_type": "qwen3", "hidden_size": 6}, f)
    ins["to_gguf"] = to_gguf

    # A GGUF file from gguf-py.
    ins["gguf"] = os.path.join(tmp, "in", "model.gguf")
    gt = {"tok_embd.weight": rng.standard_normal((3, 64)).astype(np.float32),
          "blk.0.attn_q.weight": rng.standard_normal((2, 32)).astype(np.float16),
          "blk.0.cube": rng.standard_normal((2, 3, 4)).astype(np.float32),
          "norm": rng.standard_normal(7).astype(np.float32)}
    w = gguf.GGUFWriter(ins["gguf"], "llama")
    w.add_string("general.name", "tiny")
    w.add_uint32("llama.context_length", 2048)
    w.add_float32("llama.rope.freq_base", 10000.0)
    w.add_bool("t.flag", True)
    w.add_array("t.ints", [1, 2, 3])
    for name, a in gt.items():
        w.add_tensor(name, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    ins["gguf_tensors"] = gt

    # .npy files: C order, Fortran order, big-endian, integers, f16.
    npys = {"c_order": rng.standard_normal((3, 5)).astype(np.float32),
            "fortran": np.asfortranarray(rng.standard_normal((4, 6)).astype(np.float32)),
            "big_endian": rng.standard_normal((2, 7)).astype(">f4"),
            "ints": rng.integers(-1000, 1000, (3, 3)).astype(np.int32),
            "halves": rng.standard_normal(9).astype(np.float16)}
    ins["npy_dir"] = os.path.join(tmp, "npys")
    os.makedirs(ins["npy_dir"])
    for name, a in npys.items():
        np.save(os.path.join(ins["npy_dir"], name + ".npy"), a)
    with open(os.path.join(ins["npy_dir"], "big_endian.npy"), "rb") as f:
        check(b"'>f4'" in f.read(128), "np.save wrote a big-endian file")
    with open(os.path.join(ins["npy_dir"], "fortran.npy"), "rb") as f:
        check(b"'fortran_order': True" in f.read(128), "np.save wrote a Fortran-order file")
    ins["npys"] = npys

    # A sharded checkpoint, index by hand.
    ins["sharded"] = os.path.join(tmp, "sharded")
    os.makedirs(ins["sharded"])
    shards = {"model-00001-of-00002.safetensors":
              {"a.weight": rng.standard_normal((4, 4)).astype(np.float32),
               "b.weight": rng.standard_normal(8).astype(BF16)},
              "model-00002-of-00002.safetensors":
              {"c.weight": rng.standard_normal((3, 3)).astype(np.float16),
               "d.positions": np.arange(2, dtype=np.int64)}}
    weight_map, total = {}, 0
    for shard, ts in shards.items():
        save_file(ts, os.path.join(ins["sharded"], shard), metadata={"format": "pt"})
        for name, a in ts.items():
            weight_map[name] = shard
            total += a.nbytes
    with open(os.path.join(ins["sharded"], "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    ins["sharded_tensors"] = {k: v for ts in shards.values() for k, v in ts.items()}
    return ins


# ---- the conversions ----

def safetensors_to_safetensors(tmp, ins):
    out_dir = os.path.join(tmp, "st2st")
    os.makedirs(out_dir)
    src = ins["st_tensors"]
    for dtype in (None, "bf16", "f16", "f8", "f32"):
        out = os.path.join(out_dir, f"{dtype or 'same'}.safetensors")
        args = [ins["st"], out] + (["--dtype", dtype] if dtype else [])
        what = f"safetensors -> safetensors --dtype {dtype}"
        converted(what, *args)
        got, meta, dtypes = read_safetensors(out)
        want = {k: (expected_cast(v, NP_OF[dtype]) if dtype else v) for k, v in src.items()}
        compare_all(what, got, want)
        check(meta == ins["st_meta"], f"{what}: __metadata__ kept ({meta})")
        check(all(dtypes[k] == ST_NAME[want[k].dtype] for k in want if k in dtypes),
              f"{what}: header dtypes {dtypes}")
        check(dtypes.get("ids_i64") == "I64" and dtypes.get("mask_u8") == "U8",
              f"{what}: integers keep their dtype")
    no_temp_files(out_dir, "safetensors -> safetensors")
    # Without --dtype the output has the reference writer's layout: the same
    # header entries (JSON key order aside), padding and data bytes.
    def parts(path):
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            return n, json.loads(f.read(n)), f.read()
    ref, ours = parts(ins["st"]), parts(os.path.join(out_dir, "same.safetensors"))
    check(ref == ours, "safetensors -> safetensors without --dtype: the reference writer's "
          "header length, entries and data bytes")


def safetensors_to_gguf(tmp, ins):
    src = ins["to_gguf"]
    out = os.path.join(tmp, "with_config", "out.gguf")
    what = "safetensors -> gguf --dtype f16 (config.json beside the input)"
    converted(what, os.path.join(tmp, "with_config", "model.safetensors"), out, "--dtype", "f16")
    tensors, fields, dims = read_gguf(out)
    check(fields.get("general.architecture", (None,))[0] == "qwen3",
          f"{what}: general.architecture from config.json model_type "
          f"({fields.get('general.architecture')})")
    check(fields.get("format", (None,))[0] == "pt", f"{what}: __metadata__ becomes string keys")
    want = {k: expected_cast(v, np.float16) for k, v in src.items()}
    compare_all(what, tensors, want)
    for name, a in src.items():
        check(dims.get(name) == list(reversed(a.shape)),
              f"{what}: '{name}' ne[] {dims.get(name)} is the shape {a.shape} innermost first")
    # The whole directory works as input too, as tensors with --tensors (a
    # directory with config.json is otherwise converted as a model).
    out2 = os.path.join(tmp, "dir_in.gguf")
    converted("safetensors dir -> gguf", os.path.join(tmp, "with_config"), out2, "--dtype", "f16",
              "--tensors")
    check(read_gguf(out2)[1]["general.architecture"][0] == "qwen3",
          "checkpoint dir -> gguf: architecture from its config.json")

    # No architecture anywhere: E4001, exit 4, nothing written.
    bare_dir = os.path.join(tmp, "no_config")
    before = sorted(os.listdir(bare_dir))
    bare = os.path.join(bare_dir, "out.gguf")
    p = run(os.path.join(bare_dir, "model.safetensors"), bare, "--dtype", "f16")
    check(p.returncode == 4 and "E4001" in p.stderr and "--arch" in p.stderr,
          f"gguf without an architecture: E4001 naming --arch, exit 4 "
          f"(got {p.returncode}: {p.stderr.strip()})")
    check(sorted(os.listdir(bare_dir)) == before, "gguf without an architecture: nothing written")
    converted("safetensors -> gguf --arch", os.path.join(bare_dir, "model.safetensors"), bare,
              "--dtype", "f16", "--arch", "llama")
    t2, f2, _ = read_gguf(bare)
    check(f2["general.architecture"][0] == "llama", "--arch sets general.architecture")
    compare_all("safetensors -> gguf --arch", t2, want)
    # Without --dtype, bf16 stays bf16 (GGUF has it) and f64 stays f64.
    same = os.path.join(tmp, "same.gguf")
    converted("safetensors -> gguf (no --dtype)", os.path.join(bare_dir, "model.safetensors"),
              same, "--arch", "llama")
    compare_all("safetensors -> gguf (no --dtype)", read_gguf(same)[0], src)


def gguf_conversions(tmp, ins):
    src = ins["gguf_tensors"]
    ref = gguf.GGUFReader(ins["gguf"])
    ref_fields = {k: f.contents() for k, f in ref.fields.items() if not k.startswith("GGUF.")}

    out = os.path.join(tmp, "from_gguf.safetensors")
    what = "gguf -> safetensors"
    converted(what, ins["gguf"], out)
    got, meta, _ = read_safetensors(out)
    compare_all(what, got, src)
    check(meta.get("general.architecture") == "llama" and meta.get("general.name") == "tiny"
          and meta.get("llama.context_length") == "2048",
          f"{what}: GGUF metadata becomes __metadata__ text ({meta})")

    out = os.path.join(tmp, "from_gguf_bf16.safetensors")
    what = "gguf -> safetensors --dtype bf16"
    converted(what, ins["gguf"], out, "--dtype", "bf16")
    compare_all(what, read_safetensors(out)[0],
                {k: expected_cast(v, BF16) for k, v in src.items()})

    out_dir = os.path.join(tmp, "from_gguf_npys")
    what = "gguf -> npy-dir"
    converted(what, ins["gguf"], out_dir, "--tensors")
    files = sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else []
    check(files == sorted(n + ".npy" for n in src), f"{what}: one .npy per tensor ({files})")
    compare_all(what, {f[:-4]: np.load(os.path.join(out_dir, f)) for f in files}, src)
    no_temp_files(tmp, what)
    # A directory named with a trailing slash, new and existing.
    for label in ("new", "existing"):
        slash_dir = os.path.join(tmp, "slash_npys")
        converted(f"gguf -> npy-dir/ ({label})", ins["gguf"], slash_dir + "/", "--dtype", "f16",
                  "--tensors")
        files = sorted(os.listdir(slash_dir)) if os.path.isdir(slash_dir) else []
        compare_all(f"gguf -> npy-dir/ ({label})",
                    {f[:-4]: np.load(os.path.join(slash_dir, f)) for f in files},
                    {k: expected_cast(v, np.float16) for k, v in src.items()})
        no_temp_files(slash_dir, f"gguf -> npy-dir/ ({label})")
    no_temp_files(tmp, "gguf -> npy-dir/")

    out = os.path.join(tmp, "from_gguf.gguf")
    what = "gguf -> gguf --dtype f16"
    converted(what, ins["gguf"], out, "--dtype", "f16")
    tensors, fields, dims = read_gguf(out)
    compare_all(what, tensors, {k: expected_cast(v, np.float16) for k, v in src.items()})
    check({k: v[0] for k, v in fields.items()} == ref_fields,
          f"{what}: every metadata value kept")
    check(all(fields[k][1] == f.types for k, f in ref.fields.items() if k in fields),
          f"{what}: every metadata value keeps its GGUF type")
    for t in ref.tensors:
        check(dims.get(t.name) == [int(d) for d in t.shape], f"{what}: '{t.name}' ne[] kept")


def npy_conversions(tmp, ins):
    out_dir = os.path.join(tmp, "npy2npy")
    os.makedirs(out_dir)
    for name, a in ins["npys"].items():
        src = os.path.join(ins["npy_dir"], name + ".npy")
        for dtype in (None, "f16"):
            out = os.path.join(out_dir, f"{name}_{dtype or 'same'}.npy")
            what = f"npy -> npy {name} --dtype {dtype}"
            converted(what, src, out, *(["--dtype", dtype] if dtype else []))
            got = np.load(out)
            want = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"))
            if dtype:
                want = expected_cast(want, np.float16)
            check(same_bits(got, want), f"{what}: values, dtype {got.dtype} and shape {got.shape}")
            with open(out, "rb") as f:
                version = np.lib.format.read_magic(f)
                shape, fortran, dt = np.lib.format._read_array_header(f, version)
            check(not fortran and dt.byteorder in "<|=" and shape == a.shape,
                  f"{what}: written C order, little-endian ({dt.str}, fortran={fortran})")
    no_temp_files(out_dir, "npy -> npy")

    out = os.path.join(tmp, "from_npys.safetensors")
    what = "npy-dir -> safetensors"
    converted(what, ins["npy_dir"], out)
    want = {k: np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<"))
            for k, v in ins["npys"].items()}
    compare_all(what, read_safetensors(out)[0], want)
    out = os.path.join(tmp, "from_npys_bf16.safetensors")
    converted(what + " --dtype bf16", ins["npy_dir"], out, "--dtype", "bf16")
    compare_all(what + " --dtype bf16", read_safetensors(out)[0],
                {k: expected_cast(v, BF16) for k, v in want.items()})


def sharded_conversion(tmp, ins):
    out = os.path.join(tmp, "merged.safetensors")
    what = "sharded checkpoint -> one safetensors"
    p = converted(what, ins["sharded"], out, "--json")
    compare_all(what, load_file(out), ins["sharded_tensors"])
    out = os.path.join(tmp, "merged_f16.safetensors")
    converted(what + " --dtype f16", ins["sharded"], out, "--dtype", "f16")
    compare_all(what + " --dtype f16", read_safetensors(out)[0],
                {k: expected_cast(v, np.float16) for k, v in ins["sharded_tensors"].items()})
    # --json
    try:
        summary = json.loads(p.stdout)
    except ValueError:
        summary = {}
    check(summary.get("tensors") == 4, f"--json: tensors = 4 ({summary.get('tensors')})")
    check(summary.get("bytes") == sum(a.nbytes for a in ins["sharded_tensors"].values()),
          f"--json: bytes = the output's tensor bytes ({summary.get('bytes')})")
    check(summary.get("input_format") == "safetensors" and summary.get("output_format")
          == "safetensors" and summary.get("output") == os.path.join(tmp, "merged.safetensors")
          and isinstance(summary.get("seconds"), (int, float)),
          f"--json: formats, output path and seconds ({summary})")
    p = converted("--json with --dtype", ins["st"], os.path.join(tmp, "j.safetensors"),
                  "--dtype", "bf16", "--json")
    summary = json.loads(p.stdout) if p.returncode == 0 else {}
    want_bytes = sum(expected_cast(v, BF16).nbytes for v in ins["st_tensors"].values())
    check(summary.get("tensors") == len(ins["st_tensors"]) and summary.get("bytes") == want_bytes,
          f"--json --dtype bf16: {len(ins['st_tensors'])} tensors, {want_bytes} output bytes "
          f"({summary})")
    p = converted("--json gguf -> npy-dir", ins["gguf"], os.path.join(tmp, "j_npys"), "--json",
                  "--to", "npy-dir")
    summary = json.loads(p.stdout) if p.returncode == 0 else {}
    check(summary.get("input_format") == "gguf" and summary.get("output_format") == "npy-dir"
          and summary.get("tensors") == len(ins["gguf_tensors"]),
          f"--json gguf -> npy-dir: formats and count ({summary})")


def failures(tmp, ins):
    fail_dir = os.path.join(tmp, "fail")
    os.makedirs(fail_dir)

    def refused(what, args, code, rc, out):
        before = sorted(os.listdir(fail_dir))
        p = run(*args)
        check(p.returncode == rc and code in p.stderr,
              f"{what}: {code}, exit {rc} (got {p.returncode}: {p.stderr.strip()})")
        check(not os.path.exists(out) or out in [os.path.join(fail_dir, b) for b in before],
              f"{what}: no output")
        check(sorted(os.listdir(fail_dir)) == before,
              f"{what}: directory unchanged, no temporary file ({sorted(os.listdir(fail_dir))})")

    c_order = os.path.join(ins["npy_dir"], "c_order.npy")
    refused("bf16 into .npy", [c_order, os.path.join(fail_dir, "x.npy"), "--dtype", "bf16"],
            "E2201", 2, os.path.join(fail_dir, "x.npy"))
    refused("f8 into .npy", [c_order, os.path.join(fail_dir, "x.npy"), "--dtype", "f8"],
            "E2201", 2, os.path.join(fail_dir, "x.npy"))
    refused("bf16 into an npy-dir", [ins["gguf"], os.path.join(fail_dir, "d"), "--dtype", "bf16",
                                     "--tensors"],
            "E2201", 2, os.path.join(fail_dir, "d"))
    refused("several tensors into one .npy", [ins["st"], os.path.join(fail_dir, "y.npy")],
            "E2102", 2, os.path.join(fail_dir, "y.npy"))
    refused("u8 into gguf", [ins["st"], os.path.join(fail_dir, "u.gguf"), "--arch", "llama"],
            "E2201", 2, os.path.join(fail_dir, "u.gguf"))
    refused("--dtype i32", [ins["st"], os.path.join(fail_dir, "i.safetensors"), "--dtype", "i32"],
            "E2201", 2, os.path.join(fail_dir, "i.safetensors"))

    # Truncated inputs.
    with open(ins["st"], "rb") as f:
        whole = f.read()
    for cut, label in ((len(whole) - 100, "data"), (20, "header")):
        bad = os.path.join(tmp, f"truncated_{label}.safetensors")
        with open(bad, "wb") as f:
            f.write(whole[:cut])
        refused(f"safetensors truncated in its {label}",
                [bad, os.path.join(fail_dir, "t.safetensors")], "E3001", 3,
                os.path.join(fail_dir, "t.safetensors"))
    with open(ins["gguf"], "rb") as f:
        g = f.read()
    bad = os.path.join(tmp, "truncated.gguf")
    with open(bad, "wb") as f:
        f.write(g[:len(g) - 64])
    refused("truncated gguf", [bad, os.path.join(fail_dir, "t.safetensors")], "E3001", 3,
            os.path.join(fail_dir, "t.safetensors"))

    # An existing output survives a failed conversion and is replaced whole
    # by a successful one.
    existing = os.path.join(fail_dir, "keep.safetensors")
    with open(existing, "wb") as f:
        f.write(b"old content")
    refused("failed conversion onto an existing file",
            [os.path.join(tmp, "truncated_data.safetensors"), existing], "E3001", 3, existing)
    with open(existing, "rb") as f:
        check(f.read() == b"old content", "a failed conversion leaves the existing output intact")
    existing_npy = os.path.join(fail_dir, "keep.npy")
    with open(existing_npy, "wb") as f:
        f.write(b"old npy")
    refused("bf16 onto an existing .npy", [c_order, existing_npy, "--dtype", "bf16"], "E2201", 2,
            existing_npy)
    with open(existing_npy, "rb") as f:
        check(f.read() == b"old npy", "a refused cast leaves the existing .npy intact")
    inode = os.stat(existing).st_ino
    converted("conversion onto an existing file", ins["st"], existing, "--dtype", "f16")
    check(os.stat(existing).st_ino != inode, "the existing output is replaced by a rename")
    compare_all("conversion onto an existing file", read_safetensors(existing)[0],
                {k: expected_cast(v, np.float16) for k, v in ins["st_tensors"].items()})
    no_temp_files(fail_dir, "after replacing an output")
    # A file converted onto itself: the input stays mapped while the new
    # file is written beside it and renamed over it.
    in_place = os.path.join(fail_dir, "in_place.safetensors")
    shutil.copy(ins["st"], in_place)
    converted("a file converted onto itself", in_place, in_place, "--dtype", "bf16")
    compare_all("a file converted onto itself", read_safetensors(in_place)[0],
                {k: expected_cast(v, BF16) for k, v in ins["st_tensors"].items()})

    # A directory output that fails part-way (an i64 tensor is written
    # first, then bf16 is refused for the next) leaves the old directory.
    mixed = os.path.join(tmp, "mixed.safetensors")
    save_file({"a_ids": np.arange(4, dtype=np.int64), "b_w": np.ones(3, np.float32)}, mixed)
    old_dir = os.path.join(fail_dir, "olddir")
    os.makedirs(old_dir)
    np.save(os.path.join(old_dir, "previous.npy"), np.arange(3))
    refused("npy-dir failing part-way over an existing directory", [mixed, old_dir, "--dtype",
            "bf16"], "E2201", 2, old_dir)
    check(sorted(os.listdir(old_dir)) == ["previous.npy"],
          f"the existing directory keeps its files ({sorted(os.listdir(old_dir))})")
    converted("npy-dir over an existing directory", mixed, old_dir, "--dtype", "f16")
    check(sorted(os.listdir(old_dir)) == ["a_ids.npy", "b_w.npy"],
          f"the existing directory is replaced whole ({sorted(os.listdir(old_dir))})")
    no_temp_files(fail_dir, "after replacing a directory")

    # A directory holding anything but .npy files is never replaced.
    work_dir = os.path.join(fail_dir, "work")
    os.makedirs(work_dir)
    with open(os.path.join(work_dir, "notes.txt"), "w") as f:
        f.write("precious")
    refused("npy-dir onto a directory holding other files", [mixed, work_dir], "E4001", 4,
            work_dir)
    check(sorted(os.listdir(work_dir)) == ["notes.txt"],
          f"a foreign directory keeps its files ({sorted(os.listdir(work_dir))})")

    # GGUF -> GGUF keeps a non-default alignment and lays the file out by it.
    aligned = os.path.join(tmp, "aligned64.gguf")
    writer = gguf.GGUFWriter(aligned, "llama")
    writer.data_alignment = 64
    writer.add_uint32("general.alignment", 64)
    writer.add_tensor("x", np.arange(5, dtype=np.float32))
    writer.add_tensor("y", np.arange(7, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    copy = os.path.join(tmp, "aligned64_copy.gguf")
    converted("gguf (alignment 64) -> gguf", aligned, copy)
    reader = gguf.GGUFReader(copy)
    check(int(reader.alignment) == 64, f"alignment 64 kept ({reader.alignment})")
    got = {t.name: np.array(t.data) for t in reader.tensors}
    check(np.array_equal(got.get("y"), np.arange(7, dtype=np.float32)),
          f"tensor after a 64-aligned one reads back ({got.get('y')})")


def peak_resident_mib(what, *args):
    p = run(*args, "--json")
    check(p.returncode == 0, f"{what} ({p.stderr.strip()})")
    return json.loads(p.stdout or "{}").get("peak_resident_bytes", -1) / 2**20


def streaming_memory(tmp):
    """Peak memory follows the largest tensor, not the file: 256 MiB of f32
    in 8 tensors of 32 MiB convert within 64 MiB of what converting a tiny
    file takes (the mapped input is released as it is consumed; the
    baseline absorbs the process's own footprint, which sanitizers
    inflate). tessel reports its own VmHWM: a child's ru_maxrss would
    include this Python's pages from before exec."""
    small = os.path.join(tmp, "small.safetensors")
    save_file({"w": np.ones(16, np.float32)}, small)
    base = peak_resident_mib("convert of a tiny file", small,
                             os.path.join(tmp, "small_out.safetensors"), "--dtype", "bf16")
    path = os.path.join(tmp, "big.safetensors")
    rng = np.random.default_rng(1)
    save_file({f"w{i}": rng.standard_normal(8 << 20, dtype=np.float32) for i in range(8)},
              path)
    for target, dtype in ((os.path.join(tmp, "big_bf16.safetensors"), "bf16"),
                          (os.path.join(tmp, "big_copy.safetensors"), "f32")):
        peak = peak_resident_mib(f"convert --dtype {dtype} of 256 MiB", path, target,
                                 "--dtype", dtype)
        check(base > 0 and peak - base < 64,
              f"convert --dtype {dtype} of 256 MiB: peak resident {peak:.0f} MiB, "
              f"{peak - base:.0f} MiB above a tiny file's {base:.0f} MiB (bound 64)")
        os.remove(target)



# ---- affine-quantised tensors (docs/quantisation.md) ----

QKEY = "tessel.quantization"


def pack_nibbles(codes):
    """Codes two to a byte, the first in the low nibble, as the entry says."""
    nib = (codes.reshape(-1).astype(np.int16) & 15).astype(np.uint8)
    if nib.size % 2:
        nib = np.append(nib, np.uint8(0))
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)


def quantized_values(codes, scale, zero, entry):
    """(q - zero_point) * scale in f32, the parameters spread by NumPy."""
    def spread(param):
        if entry["scheme"].startswith("per_channel"):
            shape = [1] * codes.ndim
            shape[entry["axis"]] = -1
            return param.reshape(shape)
        a = entry["axis"]
        return np.take(np.repeat(param, entry["group_size"], axis=a),
                       np.arange(codes.shape[a]), axis=a)
    zp = np.float32(0) if zero is None else spread(zero).astype(np.float32)
    return (codes.astype(np.float32) - zp) * spread(scale).astype(np.float32)


def quantized_conversions(tmp, rng):
    """A file laid out by hand with u4 groups (odd rows), i8 channels on each
    axis (one scale under a name of the file's own) and a plain tensor:
    converted to safetensors with --dtype f16 it keeps every code, scale and
    zero point bit for bit and its scheme (the plain tensor alone is cast);
    GGUF and .npy outputs are refused; inspect reports the schemes and the
    statistics of the dequantised values."""
    u4 = rng.integers(0, 16, (6, 7))
    u4_scale = rng.uniform(0.01, 1, (6, 2)).astype(np.float32)
    u4_zero = rng.integers(0, 16, (6, 2)).astype(np.int32)
    rows8 = rng.integers(-128, 128, (5, 3)).astype(np.int8)
    rows8_scale = rng.uniform(0.01, 1, (5,)).astype(np.float32)
    cols8 = rng.integers(-128, 128, (4, 3)).astype(np.int8)
    cols8_scale = rng.uniform(0.01, 1, (3,)).astype(np.float16)
    plain = rng.standard_normal((3, 5)).astype(np.float32)
    # Over a million elements: inspect --stats dequantises them a chunk of
    # rows at a time, with each chunk's rows of scales (channels and
    # groups along axis 0; groups of 64 rows end short).
    big8 = rng.integers(-128, 128, (2100, 1000)).astype(np.int8)
    big8_scale = rng.uniform(0.01, 1, (2100,)).astype(np.float32)
    big8_zero = rng.integers(-20, 20, (2100,)).astype(np.int8)
    tall4 = rng.integers(0, 16, (1500, 800))
    tall4_scale = rng.uniform(0.01, 1, (24, 800)).astype(np.float32)
    tall4_zero = rng.integers(0, 16, (24, 800)).astype(np.uint8)
    tensors = {"a.weight": pack_nibbles(u4), "a.weight_scale": u4_scale,
               "a.weight_zero_point": u4_zero, "b.weight": rows8,
               "b.weight_scale": rows8_scale, "c.weight": cols8, "c.scales": cols8_scale,
               "plain": plain, "d.weight": big8, "d.weight_scale": big8_scale,
               "d.weight_zero_point": big8_zero, "e.weight": pack_nibbles(tall4),
               "e.weight_scale": tall4_scale, "e.weight_zero_point": tall4_zero}
    entries = {
        "a.weight": {"dtype": "u4", "shape": [6, 7], "scheme": "per_group_affine", "axis": 1,
                     "group_size": 4, "scale": "a.weight_scale",
                     "zero_point": "a.weight_zero_point"},
        "b.weight": {"dtype": "i8", "scheme": "per_channel_symmetric", "axis": 0,
                     "scale": "b.weight_scale"},
        "c.weight": {"dtype": "i8", "scheme": "per_channel_symmetric", "axis": 1,
                     "scale": "c.scales"},
        "d.weight": {"dtype": "i8", "scheme": "per_channel_affine", "axis": 0,
                     "scale": "d.weight_scale", "zero_point": "d.weight_zero_point"},
        "e.weight": {"dtype": "u4", "shape": [1500, 800], "scheme": "per_group_affine",
                     "axis": 0, "group_size": 64, "scale": "e.weight_scale",
                     "zero_point": "e.weight_zero_point"}}
    src = os.path.join(tmp, "affine.safetensors")
    save_file(tensors, src, metadata={QKEY: json.dumps(entries), "owner": "test"})
    values = {"a.weight": quantized_values(u4, u4_scale, u4_zero, entries["a.weight"]),
              "b.weight": quantized_values(rows8, rows8_scale, None, entries["b.weight"]),
              "c.weight": quantized_values(cols8, cols8_scale, None, entries["c.weight"]),
              "d.weight": quantized_values(big8, big8_scale, big8_zero, entries["d.weight"]),
              "e.weight": quantized_values(tall4, tall4_scale, tall4_zero, entries["e.weight"])}

    out = os.path.join(tmp, "affine_f16.safetensors")
    p = converted("affine-quantised safetensors -> safetensors --dtype f16", src, out,
                  "--dtype", "f16")
    check("'c.scales' is written as 'c.weight_scale'" in p.stderr,
          f"a scale under another name is renamed, with a note (stderr: {p.stderr.strip()!r})")
    got, meta, _ = read_safetensors(out)
    written = json.loads(meta.get(QKEY, "{}"))
    for name, e in entries.items():
        want = dict(e, scale=name + "_scale")
        check({k: v for k, v in written.get(name, {}).items()} == want,
              f"{name}: the entry keeps its scheme ({written.get(name)})")
    check(meta.get("owner") == "test", "the user's metadata is kept")
    check(same_bits(got["a.weight"], tensors["a.weight"]), "u4 codes kept byte for byte")
    for name in ("a.weight_scale", "a.weight_zero_point", "b.weight", "b.weight_scale",
                 "c.weight"):
        check(same_bits(got[name], tensors[name]), f"{name} kept bit for bit (not cast)")
    check(same_bits(got.get("c.weight_scale", np.zeros(0)), cols8_scale),
          "the renamed f16 scale is kept bit for bit")
    check("c.scales" not in got, "the scale is not also written under its old name")
    check(same_bits(got["plain"], plain.astype(np.float16)), "the plain tensor is cast to f16")

    for target, args in ((os.path.join(tmp, "affine.gguf"), ("--arch", "llama")),
                         (os.path.join(tmp, "affine_npy"), ())):
        p = run(src, target, *args)
        check(p.returncode == 2 and "E2201" in p.stderr and "'a.weight'" in p.stderr
              and "safetensors" in p.stderr and not os.path.exists(target),
              f"affine-quantised tensors into {os.path.basename(target)}: E2201 naming "
              f"the tensor, nothing written (exit {p.returncode}: {p.stderr.strip()})")

    p = subprocess.run([TESSEL, "inspect", "--json", out], capture_output=True, text=True)
    q = json.loads(p.stdout)["quantization"] if p.returncode == 0 else {}
    check(q == {name: {k: v for k, v in dict(e, scale=name + "_scale").items()
                       if k not in ("dtype", "shape")} for name, e in entries.items()},
          f"inspect --json lists the schemes ({q})")
    p = subprocess.run([TESSEL, "inspect", "--stats", out], capture_output=True, text=True)
    table = p.stdout.split("affine-quantised")[0]
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.strip()}
    check("affine-quantised (statistics of the dequantised values):" in p.stdout,
          "inspect --stats says which statistics it shows")
    for name, v in values.items():
        # name, dtype, "[6,", "7]", bytes, then min max mean std nan inf
        shown = [float(x) for x in rows[name][-6:-2]] if name in rows else []
        v64 = v.astype(np.float64)
        want = [v64.min(), v64.max(), v64.mean(), v64.std()]
        check(len(shown) == 4 and np.allclose(shown, want, rtol=1e-3, atol=1e-6),
              f"inspect --stats {name}: statistics of the dequantised values "
              f"({shown} against NumPy's {want})")


def main():
    global TESSEL, VERBOSE
    parser = argparse.ArgumentParser()
    parser.add_argument("--tessel", required=True)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    TESSEL, VERBOSE = args.tessel, args.verbose
    rng = np.random.default_rng(6)
    np.seterr(all="ignore")  # the expected casts overflow and meet NaNs on purpose
    with tempfile.TemporaryDirectory() as tmp:
        ins = write_inputs(tmp, rng)
        safetensors_to_safetensors(tmp, ins)
        safetensors_to_gguf(tmp, ins)
        gguf_conversions(tmp, ins)
        npy_conversions(tmp, ins)
        sharded_conversion(tmp, ins)
        failures(tmp, ins)
        streaming_memory(tmp)
        quantized_conversions(tmp, rng)
    print(f"tessel convert vs safetensors/gguf/NumPy/ml_dtypes: {CHECKS[0]} checks, "
          + ("all ok" if not FAILURES else f"{len(FAILURES)} failed"))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

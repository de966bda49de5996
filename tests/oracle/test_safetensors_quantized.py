"""Affine-quantised tensors in safetensors files, against the reference
`safetensors` package and NumPy (docs/quantisation.md, "Quantised tensors
in files"):

- tessel quantises f32 tensors (i8, i4, u4; per tensor, per channel on
  axis 0 and 1, per group; symmetric and affine) and writes them; the
  package reads the file under the documented names ("<name>",
  "<name>_scale", "<name>_zero_point"), the i4/u4 codes unpacked from
  their U8 bytes (two per byte, low nibble first) equal NumPy's
  clip(round_half_even(x / scale) + zero_point), and tessel's dequantised
  values equal NumPy's (q - zero_point) * scale bit for bit;
- a file NumPy writes in the documented layout is read and dequantised by
  tessel exactly, copied by tessel without losing its quantisation, and
  one whose metadata names a missing scale is refused with E3001."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

FAILURES = []
KEY = "tessel.quantization"
RANGES = {"i8": (-128, 127), "i4": (-8, 7), "u4": (0, 15)}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def metadata(path):
    with safe_open(path, framework="np") as f:
        return f.metadata() or {}


def unpack(packed, dtype, shape):
    """Codes from U8 bytes, two per byte, the first in the low nibble."""
    b = packed.reshape(-1).astype(np.int16)
    codes = np.stack([b & 15, b >> 4], axis=-1).reshape(-1)[: int(np.prod(shape))]
    if dtype == "i4":
        codes = np.where(codes >= 8, codes - 16, codes)
    return codes.reshape(shape)


def pack(codes):
    nib = (codes.reshape(-1).astype(np.int16) & 15).astype(np.uint8)
    if nib.size % 2:
        nib = np.append(nib, np.uint8(0))
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)


def spread(param, entry, shape):
    """A scale or zero point broadcast to the codes' shape."""
    scheme = entry["scheme"]
    if scheme.startswith("per_tensor"):
        return param.reshape(())
    axis = entry["axis"]
    if scheme.startswith("per_channel"):
        view = [1] * len(shape)
        view[axis] = shape[axis]
        return param.reshape(view)
    g = entry["group_size"]
    return np.take(np.repeat(param, g, axis=axis), np.arange(shape[axis]), axis=axis)


def tessel_writes(tool, tmp):
    rng = np.random.default_rng(1)
    src = os.path.join(tmp, "x.safetensors")
    x = {"layer.weight": rng.standard_normal((6, 32)).astype(np.float32),
         "odd.weight": (rng.standard_normal((3, 16)) * 4).astype(np.float32)}
    save_file(x, src, metadata={"format": "pt"})
    for dtype in ("i8", "i4", "u4"):
        for gran in ("tensor", "channel:0", "channel:1", "group:8"):
            for sym in ("sym", "asym"):
                what = f"{dtype} {gran} {sym}"
                out = os.path.join(tmp, "q.safetensors")
                subprocess.run([tool, "quantize", src, out, dtype, gran, sym], check=True)
                got = load_file(out)
                meta = metadata(out)
                deq_path = os.path.join(tmp, "deq.safetensors")
                subprocess.run([tool, "dequantize", out, deq_path], check=True)
                deqs = load_file(deq_path)
                entries = json.loads(meta[KEY])
                check(meta.get("format") == "pt", f"{what}: the user's metadata is kept")
                exact = True
                for name, xv in x.items():
                    e = entries[name]
                    has_zp = "zero_point" in e
                    want_names = {name, name + "_scale"} | ({name + "_zero_point"} if has_zp else set())
                    exact &= want_names <= set(got) and e["scale"] == name + "_scale"
                    exact &= e["dtype"] == dtype and (e["zero_point"] == name + "_zero_point" if has_zp else True)
                    stored = got[name]
                    if dtype == "i8":
                        exact &= stored.dtype == np.int8 and list(e.get("shape", xv.shape)) == list(xv.shape)
                        q = stored.astype(np.int64)
                    else:
                        exact &= stored.dtype == np.uint8 and e["shape"] == list(xv.shape)
                        exact &= stored.size == (xv.size + 1) // 2
                        q = unpack(stored, dtype, xv.shape)
                    scale = got[name + "_scale"]
                    zp = got[name + "_zero_point"] if has_zp else np.zeros(scale.shape, np.int32)
                    s = spread(scale, e, xv.shape).astype(np.float32)
                    z = spread(zp, e, xv.shape).astype(np.float32)
                    lo, hi = RANGES[dtype]
                    # x / scale in f32, rounded half to even (ONNX, PyTorch).
                    want = np.clip(np.rint(np.float32(xv) / s) + z, lo, hi)
                    exact &= np.array_equal(q, want.astype(np.int64))
                    exact &= not sym == "sym" or dtype == "u4" or not has_zp
                    # tessel's dequantised values: (q - zp) * scale in f32.
                    exact &= np.array_equal(deqs[name], (q.astype(np.float32) - z) * s)
                check(bool(exact), f"{what}: names, codes and dequantised values match NumPy")


def numpy_writes(tool, tmp):
    """A file laid out by hand as docs/quantisation.md says."""
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 16, (4, 7)).astype(np.int64)  # u4, odd row length
    scale = rng.uniform(0.01, 1, (4, 2)).astype(np.float32)  # groups of 4
    zp = rng.integers(0, 16, (4, 2)).astype(np.int32)
    w8 = rng.integers(-128, 128, (5, 3)).astype(np.int8)
    s8 = rng.uniform(0.01, 1, (3,)).astype(np.float16)
    tensors = {"a.weight": pack(codes), "a.weight_scale": scale,
               "a.weight_zero_point": zp, "b.weight": w8, "b.weight_scale": s8}
    entries = {"a.weight": {"dtype": "u4", "shape": [4, 7], "scheme": "per_group_affine",
                            "axis": 1, "group_size": 4, "scale": "a.weight_scale",
                            "zero_point": "a.weight_zero_point"},
               "b.weight": {"dtype": "i8", "scheme": "per_channel_symmetric", "axis": 1,
                            "scale": "b.weight_scale"}}
    path = os.path.join(tmp, "np.safetensors")
    save_file(tensors, path, metadata={KEY: json.dumps(entries)})
    want_a = (codes.astype(np.float32) - spread(zp, entries["a.weight"], (4, 7)).astype(np.float32)) \
        * spread(scale, entries["a.weight"], (4, 7))
    want_b = w8.astype(np.float32) * spread(s8, entries["b.weight"], (5, 3)).astype(np.float32)
    for label, source in (("NumPy's file", path), ("tessel's copy of it", None)):
        if source is None:
            source = os.path.join(tmp, "np_copy.safetensors")
            subprocess.run([tool, "copy", path, source], check=True)
        deq = os.path.join(tmp, "np_deq.safetensors")
        subprocess.run([tool, "dequantize", source, deq], check=True)
        got = load_file(deq)
        check(set(got) == {"a.weight", "b.weight"} and np.array_equal(got["a.weight"], want_a)
              and np.array_equal(got["b.weight"], want_b),
              f"{label}: tessel dequantises u4 groups and i8 channels exactly")
    # A missing scale is E3001.
    del tensors["b.weight_scale"]
    save_file(tensors, path, metadata={KEY: json.dumps(entries)})
    p = subprocess.run([tool, "load", path], capture_output=True, text=True)
    check(p.returncode == 3 and "E3001" in p.stderr and "b.weight_scale" in p.stderr,
          "a scale the metadata names but the file lacks is E3001")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tessel_writes(args.tool, tmp)
        numpy_writes(args.tool, tmp)
    print("quantised safetensors:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

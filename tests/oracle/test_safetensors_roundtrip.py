"""tessel's safetensors reader and writer against the reference `safetensors`
package: a file the package writes (every dtype it and tessel share,
metadata, scalars, empty tensors, odd-sized U8 tensors that misalign what
follows) is read by tessel and written back; the package must read tessel's
file bit for bit, as single files and as sharded checkpoints with an index,
and tessel refuses broken indexes with E3001."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import torch
from safetensors.numpy import load_file, save_file
from safetensors.torch import save_file as save_torch

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def tensors():
    rng = np.random.default_rng(0)
    out = {
        "bool": rng.random((3, 5)) > 0.5,
        "u8_odd": rng.integers(0, 256, 7, dtype=np.uint8),  # misaligns the rest
        "i8": rng.integers(-128, 128, (4, 3), dtype=np.int8),
        "i16": rng.integers(-2**15, 2**15, (5,), dtype=np.int16),
        "u16": rng.integers(0, 2**16, (2, 2), dtype=np.uint16),
        "i32": rng.integers(-2**31, 2**31, (3, 1, 2), dtype=np.int32),
        "u32": rng.integers(0, 2**32, (6,), dtype=np.uint32),
        "i64": rng.integers(-2**62, 2**62, (2, 3), dtype=np.int64),
        "u64": rng.integers(0, 2**63, (3,), dtype=np.uint64),
        "f16": rng.standard_normal((4, 4)).astype(np.float16),
        "f32": rng.standard_normal((3, 5, 2)).astype(np.float32),
        "f64": rng.standard_normal((2, 2)),
        "scalar": np.array(3.25, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-40], dtype=np.float32)
    out["f32_special"] = special
    return out


def as_bits(a):
    return a.reshape(-1).view(np.uint8) if a.dtype != np.bool_ else a


def write_bf16_f8(path):
    """bf16 through torch (the package's torch writer); f8 written by hand
    in the format's layout, as torch 1.13 has no float8."""
    bf16 = torch.randn(3, 4).to(torch.bfloat16)
    save_torch({"bf16": bf16}, path, metadata={"format": "pt"})
    e4 = np.array([0.5, -448, 1.75, np.nan], dtype=ml_dtypes.float8_e4m3fn)
    e5 = np.array([2.0, -57344, 0.25, np.inf], dtype=ml_dtypes.float8_e5m2)
    header = {"e4": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]},
              "e5": {"dtype": "F8_E5M2", "shape": [4], "data_offsets": [4, 8]}}
    text = json.dumps(header).encode()
    with open(path + ".f8", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + e4.tobytes() + e5.tobytes())
    return bf16, e4, e5


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    tool = args.tool
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "ref.safetensors"), os.path.join(tmp, "ours.safetensors")
        ref = tensors()
        save_file(ref, src, metadata={"format": "np", "note": "written by safetensors"})
        subprocess.run([tool, "copy", src, dst], check=True)
        back = load_file(dst)
        check(set(back) == set(ref), "every tensor survives the round trip")
        for name, a in ref.items():
            b = back.get(name)
            check(b is not None and b.dtype == a.dtype and b.shape == a.shape and
                  np.array_equal(as_bits(a), as_bits(b)), f"{name}: bit-exact ({a.dtype}, {a.shape})")
        with open(dst, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
        check(n % 8 == 0, "tessel pads the header to 8 bytes")
        check(header["__metadata__"] == {"format": "np", "note": "written by safetensors"},
              "metadata survives")

        bf16, e4, e5 = write_bf16_f8(os.path.join(tmp, "b.safetensors"))
        subprocess.run([tool, "copy", os.path.join(tmp, "b.safetensors"),
                        os.path.join(tmp, "b2.safetensors")], check=True)
        from safetensors.torch import load_file as load_torch
        check(torch.equal(load_torch(os.path.join(tmp, "b2.safetensors"))["bf16"], bf16),
              "bf16 from the torch writer round-trips bit-exact")
        subprocess.run([tool, "copy", os.path.join(tmp, "b.safetensors.f8"),
                        os.path.join(tmp, "f8.safetensors")], check=True)
        with open(os.path.join(tmp, "f8.safetensors"), "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        for name, arr in (("e4", e4), ("e5", e5)):
            lo, hi = header[name]["data_offsets"]
            check(data[lo:hi] == arr.tobytes(), f"f8 {name} round-trips bit-exact")

        # Shards of 128 bytes, read back by the package and by tessel.
        shard_dir = os.path.join(tmp, "sharded")
        os.makedirs(shard_dir)
        subprocess.run([tool, "shard", src, shard_dir, "128"], check=True)
        index = json.load(open(os.path.join(shard_dir, "model.safetensors.index.json")))
        shards = sorted(set(index["weight_map"].values()))
        check(len(shards) > 1 and shards[0] == f"model-00001-of-{len(shards):05}.safetensors",
              f"sharded into {len(shards)} files named like save_pretrained's")
        merged = {}
        for s in shards:
            merged.update(load_file(os.path.join(shard_dir, s)))
        check(set(merged) == set(ref) and all(
            np.array_equal(as_bits(merged[k]), as_bits(ref[k])) for k in ref),
            "the package reads every shard exactly")
        total = sum(a.nbytes for a in ref.values())
        check(index["metadata"]["total_size"] == total, "the index records total_size")
        out = subprocess.run([tool, "load", shard_dir], check=True, capture_output=True,
                             text=True).stdout.split("\n")
        check(len([l for l in out if l]) == len(ref), "tessel loads the sharded directory")

        # Broken indexes are E3001.
        def broken(mutate, what):
            bad = json.loads(json.dumps(index))
            mutate(bad)
            with open(os.path.join(shard_dir, "model.safetensors.index.json"), "w") as f:
                json.dump(bad, f)
            p = subprocess.run([tool, "load", shard_dir], capture_output=True, text=True)
            check(p.returncode == 3 and "E3001" in p.stderr, f"{what} is E3001")
        broken(lambda j: j["weight_map"].update({"ghost": shards[0]}), "a tensor missing from its shard")
        # (A shard the index never names is not part of the checkpoint; one
        # it names must not hold tensors it does not list.)
        counts = {}
        for name, shard in index["weight_map"].items():
            counts.setdefault(shard, []).append(name)
        shared = next(names[0] for names in counts.values() if len(names) > 1)
        broken(lambda j: j["weight_map"].pop(shared), "a shard tensor the index omits")
        broken(lambda j: j["weight_map"].update({"f32": "../x.safetensors"}), "a shard outside the directory")
        broken(lambda j: j.pop("weight_map"), "an index without weight_map")
    print("safetensors round trip:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

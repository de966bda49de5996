"""tessel's GGUF reader against the `gguf` package (llama.cpp's gguf-py):
a file written by gguf.GGUFWriter with metadata of every value type
(including nested arrays) and tensors of plain and block-quantised types
is read by tessel exactly as gguf.GGUFReader reads it (values, dtypes,
row-major shapes, bytes); malformed files (truncated, absurd counts,
misaligned or out-of-range tensors, unknown types) are E3001. A big-endian
file written by gguf.GGUFWriter(endianess=BIG) reads exactly like its
little-endian twin (metadata and tensor values), tessel writes it back as a
little-endian file the package reads like the twin, and quantised tensors in
a big-endian file are refused (E3001) rather than misread."""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q

FAILURES = []
NESTED = {"t.nested": [[1, 2], [3]], "t.deep": [[[1, -2]], [[3]]]}
NAMES = {Q.F32: "f32", Q.F16: "f16", Q.BF16: "bf16", Q.I8: "i8", Q.I16: "i16",
         Q.I32: "i32", Q.I64: "i64", Q.F64: "f64", Q.Q8_0: "q8_0", Q.Q4_0: "q4_0"}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def fnv1a(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def add_metadata(w):
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -2**62)
    w.add_float32("t.f32", 0.1)
    w.add_float64("t.f64", 1e-300)
    w.add_bool("t.bool", True)
    w.add_string("t.str", "héllo wörld")
    w.add_array("t.ints", [1, 2, 3])
    w.add_array("t.strs", ["a", "bc", ""])
    for key, value in NESTED.items():
        w.add_array(key, value)
    w.add_array("t.empty", [])
    w.add_array("t.f32s", [0.5, -1.25])  # packed as float32


def plain_tensors(rng):
    tensors = {
        "f32": rng.standard_normal((3, 64)).astype(np.float32),
        "f16": rng.standard_normal((2, 32)).astype(np.float16),
        "f64": rng.standard_normal((5,)),
        "i8": rng.integers(-128, 128, (4, 32), dtype=np.int8),
        "i16": rng.integers(-2**15, 2**15, (7,), dtype=np.int16),
        "i32": rng.integers(-2**31, 2**31, (2, 3, 4), dtype=np.int32),
        "i64": rng.integers(-2**62, 2**62, (3,), dtype=np.int64),
    }
    bf16 = rng.integers(0, 2**16, (2, 64), dtype=np.uint16)
    return tensors, bf16


def add_plain_tensors(w, tensors, bf16):
    # The writer swaps big-endian data in place: give it copies.
    for name, a in tensors.items():
        w.add_tensor(name, a.copy())
    w.add_tensor("bf16", bf16.copy(), raw_dtype=Q.BF16)


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_reference(path):
    rng = np.random.default_rng(1)
    w = gguf.GGUFWriter(path, "llama")
    add_metadata(w)
    add_plain_tensors(w, *plain_tensors(rng))
    for qt, name in ((Q.Q8_0, "q8_0"), (Q.Q4_0, "q4_0")):
        data = rng.standard_normal((4, 64)).astype(np.float32)
        # The quantised bytes (4, 64 / 32 * block bytes); the writer derives
        # the element shape (4, 64).
        w.add_tensor(name, gguf.quants.quantize(data, qt), raw_dtype=qt)
    finish(w)


def write_twins(tmp):
    """The same metadata and plain tensors, little- and big-endian."""
    paths = []
    for endian in (gguf.GGUFEndian.LITTLE, gguf.GGUFEndian.BIG):
        path = os.path.join(tmp, f"twin_{endian.name.lower()}.gguf")
        w = gguf.GGUFWriter(path, "llama", endianess=endian)
        add_metadata(w)
        add_plain_tensors(w, *plain_tensors(np.random.default_rng(2)))
        finish(w)
        paths.append(path)
    return paths


def check_big_endian(tool, tmp):
    le, be = write_twins(tmp)
    raw = open(be, "rb").read()
    check(raw[4:8] == b"\0\0\0\3", "the package wrote a big-endian file")
    ours_le, ours_be = (run(tool, p) for p in (le, be))
    check(ours_le.returncode == 0 and ours_be.returncode == 0,
          "tessel reads both twins " + ours_le.stderr + ours_be.stderr)
    a, b = json.loads(ours_le.stdout), json.loads(ours_be.stdout)
    check(not a["big_endian"] and b["big_endian"], "big_endian reported")
    check(b["version"] == 3 and b["alignment"] == 32, "big-endian version 3, alignment 32")
    n_fields = sum(not k.startswith("GGUF.") for k in gguf.GGUFReader(le).fields)
    check(a["metadata"] == b["metadata"] and len(b["metadata"]) == n_fields,
          "big-endian metadata (every type, nested arrays) = little-endian twin's")
    check(b["metadata"]["t.deep"]["value"] == [[[1, -2]], [[3]]],
          "nested arrays in a big-endian file")
    check(b["metadata"]["t.u64"]["value"] == 2**63 + 5 and
          b["metadata"]["t.f32s"]["value"] == [0.5, -1.25],
          "big-endian u64 and f32 array values")
    tensors, _ = plain_tensors(np.random.default_rng(2))
    check(len(b["tensors"]) == len(tensors) + 1 and len(a["tensors"]) == len(b["tensors"]),
          "every big-endian tensor")
    for ta, tb in zip(a["tensors"], b["tensors"]):
        check(ta == tb, f"big-endian tensor {tb['name']} ({tb['dtype']} {tb['shape']}): "
              "same bytes as the little-endian twin")
    # tessel's copy of the big-endian file is little-endian and reads, in
    # the package, like the little-endian twin.
    out = os.path.join(tmp, "from_be.gguf")
    p = subprocess.run([tool, "copy", be, out], capture_output=True, text=True)
    check(p.returncode == 0, "tessel copies the big-endian file " + p.stderr)
    ra, rb = gguf.GGUFReader(le), gguf.GGUFReader(out)
    check(rb.endianess == gguf.GGUFEndian.LITTLE, "the copy is little-endian")
    ka = {k: f.contents() for k, f in ra.fields.items() if not k.startswith("GGUF.")}
    kb = {k: f.contents() for k, f in rb.fields.items() if not k.startswith("GGUF.")}
    check(ka == kb, "the package reads the copy's metadata like the twin's")
    check([(t.name, int(t.tensor_type), t.shape.tolist(),
            np.ascontiguousarray(t.data).tobytes()) for t in ra.tensors] ==
          [(t.name, int(t.tensor_type), t.shape.tolist(),
            np.ascontiguousarray(t.data).tobytes()) for t in rb.tensors],
          "the package reads the copy's tensors like the twin's")
    # Truncated big-endian files.
    for cut in (6, 30, len(raw) // 2, len(raw) - 1):
        path = os.path.join(tmp, "be_cut.gguf")
        open(path, "wb").write(raw[:cut])
        p = run(tool, path)
        check(p.returncode == 3 and "E3001" in p.stderr and "at byte" in p.stderr,
              f"a big-endian file cut at {cut} is E3001 ({p.stderr.strip()[:70]})")
    # Quantised data in a big-endian file: GGUFWriter stores block bytes
    # as given (its byteswap of a uint8 array changes nothing), so the Q8_0
    # scale stays little-endian, while gguf_convert_endian.py would swap
    # it; tessel refuses rather than guess.
    q = os.path.join(tmp, "be_q8.gguf")
    w = gguf.GGUFWriter(q, "llama", endianess=gguf.GGUFEndian.BIG)
    w.add_tensor("f", np.ones(4, dtype=np.float32))
    blocks = gguf.quants.quantize(np.full((1, 32), 2.0, dtype=np.float32), Q.Q8_0)
    w.add_tensor("w.q", blocks.copy(), raw_dtype=Q.Q8_0)
    finish(w)
    data = open(q, "rb").read()
    raw_block = blocks.tobytes()
    check(raw_block in data and raw_block[1::-1] + raw_block[2:] not in data,
          "GGUFWriter(BIG) leaves Q8_0 block bytes (and its f16 scale) unswapped")
    p = run(tool, q)
    check(p.returncode == 3 and "E3001" in p.stderr and "'w.q'" in p.stderr and
          "q8_0" in p.stderr, f"a big-endian Q8_0 tensor is E3001 ({p.stderr.strip()[:90]})")


def field_value(field):
    return field.contents()


def run(tool, path):
    return subprocess.run([tool, path], capture_output=True, text=True)


def corrupt(tool, src, tmp, what, mutate):
    data = bytearray(open(src, "rb").read())
    data = mutate(data)
    path = os.path.join(tmp, "bad.gguf")
    open(path, "wb").write(bytes(data))
    p = run(tool, path)
    check(p.returncode == 3 and "E3001" in p.stderr, f"{what} is E3001 ({p.stderr.strip()[:80]})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    tool = parser.parse_args().tool
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ref.gguf")
        write_reference(path)
        p = run(tool, path)
        check(p.returncode == 0, "tessel reads the gguf package's file " + p.stderr)
        ours = json.loads(p.stdout)
        reader = gguf.GGUFReader(path)
        check(ours["version"] == 3 and ours["alignment"] == 32, "version 3, alignment 32")
        for key, field in reader.fields.items():
            if key.startswith("GGUF."):
                continue  # the reader's pseudo-fields for the header
            mine = ours["metadata"].get(key)
            theirs = field_value(field)
            if len(field.types) > 1 and field.types[1] == gguf.GGUFValueType.ARRAY:
                # gguf-py's reader flattens nested arrays; compare with what
                # was written.
                theirs = NESTED[key]
            if isinstance(theirs, float) and mine is not None:
                same = abs(mine["value"] - theirs) <= 1e-12 * max(1.0, abs(theirs))
            else:
                same = mine is not None and mine["value"] == theirs
            check(same and mine["type"] == int(field.types[0]),
                  f"metadata {key} = {theirs!r}")
        check(len(ours["tensors"]) == len(reader.tensors), "every tensor")
        for t in reader.tensors:
            mine = next((m for m in ours["tensors"] if m["name"] == t.name), None)
            shape = [int(d) for d in reversed(t.shape.tolist())]
            check(mine is not None and mine["dtype"] == NAMES[t.tensor_type] and
                  mine["shape"] == shape and
                  mine["hash"] == fnv1a(np.ascontiguousarray(t.data).tobytes()),
                  f"tensor {t.name}: {NAMES[t.tensor_type]} {shape}, same bytes")

        # tessel's writer: the package reads back the same file content.
        for src_alignment in (32, 64):
            src = path
            if src_alignment == 64:
                src = os.path.join(tmp, "aligned64.gguf")
                w = gguf.GGUFWriter(src, "llama")
                w.add_custom_alignment(64)
                w.add_tensor("a", np.arange(3, dtype=np.float32))
                w.add_tensor("b", np.arange(10, dtype=np.int16))
                w.write_header_to_file(); w.write_kv_data_to_file()
                w.write_tensors_to_file(); w.close()
            out = os.path.join(tmp, f"ours{src_alignment}.gguf")
            p = subprocess.run([tool, "copy", src, out], capture_output=True, text=True)
            check(p.returncode == 0, f"tessel writes GGUF (alignment {src_alignment}) {p.stderr}")
            a, b = gguf.GGUFReader(src), gguf.GGUFReader(out)
            ka = {k: f.contents() for k, f in a.fields.items() if not k.startswith("GGUF.")}
            kb = {k: f.contents() for k, f in b.fields.items() if not k.startswith("GGUF.")}
            if src_alignment == 32:
                # The spec requires it with quantised tensors; gguf-py's
                # writer leaves it to the caller, tessel adds it.
                check(kb.pop("general.quantization_version", None) == 2,
                      "tessel adds general.quantization_version")
            check(ka == kb,
                  f"the package reads tessel's metadata back (alignment {src_alignment})")
            check([(t.name, int(t.tensor_type), t.shape.tolist(),
                    np.ascontiguousarray(t.data).tobytes()) for t in a.tensors] ==
                  [(t.name, int(t.tensor_type), t.shape.tolist(),
                    np.ascontiguousarray(t.data).tobytes()) for t in b.tensors],
                  f"the package reads tessel's tensors back (alignment {src_alignment})")
            check(all(int(t.data_offset) % src_alignment == 0 for t in b.tensors),
                  f"tensor data aligned to {src_alignment}")

        size = os.path.getsize(path)
        corrupt(tool, path, tmp, "a truncated file", lambda d: d[: size // 2])
        corrupt(tool, path, tmp, "a bad magic", lambda d: b"GGUX" + d[4:])
        corrupt(tool, path, tmp, "version 1", lambda d: d[:4] + struct.pack("<I", 1) + d[8:])
        # A little-endian file whose version field alone says big-endian:
        # its counts, read big-endian, cannot fit.
        corrupt(tool, path, tmp, "a little-endian file with a big-endian version",
                lambda d: d[:4] + struct.pack(">I", 3) + d[8:])
        corrupt(tool, path, tmp, "an absurd tensor count",
                lambda d: d[:8] + struct.pack("<Q", 2**60) + d[16:])
        corrupt(tool, path, tmp, "an absurd metadata count",
                lambda d: d[:16] + struct.pack("<Q", 2**60) + d[24:])
        # The first metadata value: key "general.architecture" (u64 length
        # 20, the key), type 8 (string), then its length.
        at = 24 + 8 + len("general.architecture") + 4
        corrupt(tool, path, tmp, "a string length past the end",
                lambda d: d[:at] + struct.pack("<Q", 2**40) + d[at + 8:])
        # The last tensor info ends just before the data padding: its offset
        # is the last u64 before the aligned data start.
        info_end = len(open(path, "rb").read()) - sum(
            int(t.n_bytes) for t in reader.tensors)
        def find_offset_field(d):
            # offset of the u64 'offset' field of the last tensor info
            name = reader.tensors[-1].name.encode()
            pos = bytes(d).rfind(name) + len(name)
            n_dims = struct.unpack("<I", d[pos:pos + 4])[0]
            return pos + 4 + 8 * n_dims + 4
        def misalign(d):
            p = find_offset_field(d)
            off = struct.unpack("<Q", d[p:p + 8])[0]
            return d[:p] + struct.pack("<Q", off + 1) + d[p + 8:]
        corrupt(tool, path, tmp, "a misaligned tensor offset", misalign)
        def outside(d):
            p = find_offset_field(d)
            return d[:p] + struct.pack("<Q", 2**40) + d[p + 8:]
        corrupt(tool, path, tmp, "tensor data past the end", outside)
        def unknown_type(d):
            p = find_offset_field(d) - 4
            return d[:p] + struct.pack("<I", 16) + d[p + 4:]  # IQ2_XXS
        corrupt(tool, path, tmp, "an unsupported tensor type (IQ2_XXS)", unknown_type)
        def overlap(d):
            p = find_offset_field(d)
            return d[:p] + struct.pack("<Q", 0) + d[p + 8:]
        corrupt(tool, path, tmp, "overlapping tensors", overlap)
        del info_end
        check_big_endian(tool, tmp)
    print("gguf:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

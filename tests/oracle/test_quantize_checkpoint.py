"""`tessel quantize` from HF checkpoint directories, against llama.cpp's own
pipeline for them: convert_hf_to_gguf.py, then llama_model_quantize.

On the model fixtures (model_fixtures.py):
  - llama (Llama 3 rope scaling, q/k rows to interleave), qwen2 (biases)
    and qwen3 (q/k norms), all f32: `tessel quantize DIR --type Q4_K_M`
    and `--type Q4_0` write exactly the bytes of the fixture files
    llama_model_quantize made from the converter's f32 GGUF.
  - qwen3-bf16 (every tensor bf16): Q4_K_M, Q6_K and Q8_0 write every
    matrix as llama_model_quantize does from the converter's bf16 GGUF
    (run here), and every 1-D tensor as the checkpoint's values in f32,
    as the converter writes 1-D tensors.
  - qwen3-sharded: the same tensors as qwen3's file (only general.name,
    from the directory's name, differs).
  - --json describes the checkpoint's tensors under their GGUF names and
    dtypes.
Refusals (nothing written): a checkpoint of another architecture (E4001
naming it), a tensor no decoder has (E4001 from `[quantize]` naming it)
and a NaN in a weight (E3001 naming the GGUF tensor, as llama.cpp refuses
it). Memory: a 300 MiB f32 llama checkpoint quantises to Q4_K_M
(the bytes of its converted GGUF's) within 8 MiB of the peak resident
set of quantising that GGUF: its interleaved q/k rows are made one tensor
at a time and their mapped pages released.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402
import test_convert_model as tcm  # noqa: E402  (checkpoint builders, hf_name)
import test_quant_mix as qm  # noqa: E402  (llama_quantize, FTYPES)

import gguf  # noqa: E402

FAILURES = []
CHECKS = [0]
TESSEL = FX = None


def check(cond, what, detail=""):
    CHECKS[0] += 1
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        if detail:
            print("     " + str(detail)[:2000])
        FAILURES.append(what)


def quantize(*args):
    return subprocess.run([TESSEL, "quantize", *map(str, args)], capture_output=True,
                          text=True)


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def tensors_of(path):
    r = gguf.GGUFReader(path)
    return [(t.name, t.tensor_type.name, [int(d) for d in t.shape], t.data.tobytes())
            for t in r.tensors]


def fixture_files(tmp):
    for name in ("llama", "qwen2", "qwen3"):
        for mix, fixture in (("Q4_K_M", "q4_k_m"), ("Q4_0", "q4_0")):
            ours = os.path.join(tmp, f"{name}-{fixture}.gguf")
            p = quantize(os.path.join(FX, name), ours, "--type", mix)
            check(p.returncode == 0, f"{name} {mix}: exit 0", p.stderr.strip())
            theirs = mf.gguf_path(FX, name, fixture)
            check(p.returncode == 0 and same_bytes(ours, theirs),
                  f"{name} checkpoint {mix}: the bytes llama_model_quantize wrote from "
                  f"the converter's f32 file")

    sharded = os.path.join(tmp, "sharded.gguf")
    p = quantize(os.path.join(FX, "qwen3-sharded"), sharded, "--type", "Q4_K_M")
    check(p.returncode == 0 and tensors_of(sharded) == tensors_of(mf.gguf_path(FX, "qwen3", "q4_k_m")),
          "qwen3-sharded Q4_K_M: qwen3's tensors, names, types and bytes", p.stderr.strip())


def bf16_as_f32(path, name):
    """A bf16 tensor of a safetensors file widened to f32 (safetensors'
    numpy reader has no bf16): the 16 bits become the top of the 32."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        entry = header[name]
        assert entry["dtype"] == "BF16", entry
        begin, end = entry["data_offsets"]
        f.seek(8 + n + begin)
        bits = np.frombuffer(f.read(end - begin), dtype="<u2")
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bf16_checkpoint(tmp):
    """The fixture's qwen3-bf16.gguf is the converter's bf16 file of the f32
    qwen3 directory: its matrices are qwen3-bf16/'s, its 1-D tensors the
    unrounded f32 ones. So the matrices must come out as llama_model_quantize
    writes them from it, and the 1-D tensors as qwen3-bf16/'s bf16 values."""
    import llama_cpp
    converted = mf.gguf_path(FX, "qwen3", "bf16")
    hf = os.path.join(FX, "qwen3-bf16", "model.safetensors")
    for mix in ("Q4_K_M", "Q6_K", "Q8_0"):
        theirs = os.path.join(tmp, f"theirs-bf16-{mix}.gguf")
        rc, _ = qm.llama_quantize(llama_cpp, converted, theirs, qm.FTYPES[mix],
                                  os.path.join(tmp, "log"))
        check(rc == 0, f"llama_model_quantize qwen3-bf16.gguf {mix}")
        ours = os.path.join(tmp, f"ours-bf16-{mix}.gguf")
        p = quantize(os.path.join(FX, "qwen3-bf16"), ours, "--type", mix)
        check(p.returncode == 0, f"qwen3-bf16 {mix}: exit 0", p.stderr.strip())
        if p.returncode != 0 or rc != 0:
            continue
        got, want = tensors_of(ours), tensors_of(theirs)
        check([t[:3] for t in got] == [t[:3] for t in want],
              f"qwen3-bf16 checkpoint {mix}: llama_model_quantize's names, types and shapes")
        matrices = [(a[0], a[3] == b[3]) for a, b in zip(got, want) if len(a[2]) == 2]
        check(len(matrices) > 0 and all(same for _, same in matrices),
              f"qwen3-bf16 checkpoint {mix}: every matrix llama_model_quantize's bytes",
              [n for n, same in matrices if not same])
        ones = [t for t in got if len(t[2]) == 1]
        bad = [t[0] for t in ones
               if t[1] != "F32" or t[3] != bf16_as_f32(hf, tcm.hf_name(t[0])).tobytes()]
        check(len(ones) > 0 and not bad,
              f"qwen3-bf16 checkpoint {mix}: all {len(ones)} 1-D tensors the bf16 values in f32",
              bad)


def json_summary(tmp):
    out = os.path.join(tmp, "summary.gguf")
    p = quantize(os.path.join(FX, "qwen3-bf16"), out, "--type", "Q4_K_M", "--json")
    check(p.returncode == 0, "--json: exit 0", p.stderr.strip())
    summary = json.loads(p.stdout or "{}")
    rows = {t["name"]: t for t in summary.get("tensors", [])}
    check(rows.get("blk.0.attn_q.weight", {}).get("from") == "bf16"
          and rows.get("blk.0.attn_norm.weight", {}).get("from") == "f32"
          and rows.get("blk.0.attn_q.weight", {}).get("to") == "q4_k"
          and summary.get("tensor_count") == len(tensors_of(out)),
          "--json: GGUF names, the converter's dtypes (matrices bf16, norms f32) and "
          "the types written", json.dumps(summary.get("tensors", [])[:3]))


def refusals(tmp):
    fail = os.path.join(tmp, "fail")
    os.makedirs(fail)

    def refused(what, checkpoint, mix, code, rc, needles, absent):
        out = os.path.join(fail, os.path.basename(checkpoint) + ".gguf")
        p = quantize(checkpoint, out, "--type", mix)
        check(p.returncode == rc and code in p.stderr
              and all(n in p.stderr for n in needles)
              and not any(n in p.stderr for n in absent) and not os.path.exists(out),
              f"{what}: {code} naming {needles}, nothing written", p.stderr.strip())

    refused("a gpt2 checkpoint",
            tcm.edited_checkpoint(os.path.join(FX, "qwen3"), os.path.join(tmp, "gpt2-dir"),
                                  config={"model_type": "gpt2"}),
            "Q4_0", "E4001", 4, ["gpt2"], ["--tensors"])
    refused("a checkpoint with a foreign tensor",
            tcm.edited_checkpoint(os.path.join(FX, "qwen3"), os.path.join(tmp, "extra-dir"),
                                  tensors=tcm.with_foreign_tensor),
            "Q4_0", "E4001", 4, ["[quantize]", "model.vision_tower.weight"], ["--tensors"])

    def nan_in_k_proj(arrays):
        arrays["model.layers.1.self_attn.k_proj.weight"][3, 5] = np.nan
    refused("a NaN in llama's k_proj",
            tcm.edited_checkpoint(os.path.join(FX, "llama"), os.path.join(tmp, "nan-dir"),
                                  tensors=nan_in_k_proj),
            "Q4_K_M", "E3001", 3, ["blk.1.attn_k.weight"], ["byte"])
    leftovers = [n for n in os.listdir(fail) if n.startswith(".")]
    check(not leftovers, "refusals: no temporary files", leftovers)


def peak_resident_mib(what, *args):
    p = quantize(*args, "--json")
    check(p.returncode == 0, f"{what}: exit 0", p.stderr.strip())
    return json.loads(p.stdout or "{}").get("peak_resident_bytes", -1) / 2**20


def streaming_memory(tmp):
    """Against the same model as a GGUF file (tessel convert's, quantised the
    same way): the checkpoint costs the one tensor made at a time (q, 4
    MiB in f32), not the reordered tensors of every layer kept mapped."""
    big = os.path.join(tmp, "big-llama")
    tcm.big_llama_checkpoint(big)
    converted = os.path.join(tmp, "big-llama.gguf")
    p = subprocess.run([TESSEL, "convert", big, converted], capture_output=True, text=True)
    check(p.returncode == 0, "tessel convert of the 300 MiB llama checkpoint", p.stderr.strip())
    theirs = os.path.join(tmp, "big-from-gguf.gguf")
    from_gguf = peak_resident_mib("300 MiB llama GGUF Q4_K_M", converted, theirs,
                                  "--type", "Q4_K_M")
    ours = os.path.join(tmp, "big.gguf")
    peak = peak_resident_mib("300 MiB llama checkpoint Q4_K_M", big, ours, "--type", "Q4_K_M")
    check(same_bytes(ours, theirs),
          "300 MiB llama: the checkpoint's Q4_K_M is its converted GGUF's")
    check(from_gguf > 0 and peak - from_gguf < 8,
          f"300 MiB llama checkpoint -> Q4_K_M: peak resident {peak:.0f} MiB, "
          f"{peak - from_gguf:.0f} MiB above quantising its GGUF ({from_gguf:.0f} MiB; bound 8)")


def main():
    global TESSEL, FX
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("fixtures", nargs="?", default=os.environ.get("TESSEL_MODEL_FIXTURES"))
    args = ap.parse_args()
    TESSEL, FX = args.tessel, args.fixtures
    if not FX or not os.path.isfile(mf.paths(FX)["index"]):
        print(f"no model fixtures in {FX!r}: run tests/oracle/model_fixtures.py")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        fixture_files(tmp)
        bf16_checkpoint(tmp)
        json_summary(tmp)
        refusals(tmp)
        streaming_memory(tmp)
    print(f"tessel quantize (checkpoints) vs convert_hf_to_gguf.py + llama_model_quantize: "
          f"{CHECKS[0]} checks, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

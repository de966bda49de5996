"""`tessel quantize` against llama.cpp's llama_model_quantize, file for file.

Tiny llama, qwen2 and qwen3 GGUF models (written with the gguf package, with
a small SentencePiece-style vocabulary so that llama.cpp can load them) are
quantised by llama.cpp (llama-cpp-python, no importance matrix) and by
`tessel quantize` to the same mix, and the two files must agree on every
metadata pair (keys, order, types, values), every tensor's name, order,
type, shape, offset and bytes, and in the end byte for byte. The inputs
cover f16, bf16 and f32 weights, grouped-query heads, tied and untied
embeddings, qwen2's biases, qwen3's q/k norms, widths that force llama.cpp's
fallback types (down to F16), a tensor whose GGUF dimensions end in 1,
metadata of every GGUF type (not nested arrays, which llama.cpp's reader
refuses), and a stale
general.quantization_version and split keys (llama.cpp moves the first to
the end and drops the others). llama.cpp must load tessel's output and
compute the same logits as from its own.

The CLI's refusals: an unknown mix (E4001), a mix that needs an importance
matrix (E4001), a missing input (E3002), an unsupported architecture
(E4001), NaN input (E3001) and a weight too large for f16 scales (E2401) —
llama.cpp refuses those last two as well — and no output file after a
failure. A block-quantised input is copied where the mix keeps its types
and refused where it would requantise, as llama.cpp does. --json parses and
describes the file written; nothing but fallback warnings goes to a piped
stderr.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_quant_mix as qm  # noqa: E402  (also teaches gguf the MXFP4 type)

import gguf  # noqa: E402

FAILURES = []
MIXES = ["Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "Q4_0", "Q2_K", "IQ4_XS", "F16", "BF16"]


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def build(path, arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, dtype,
          seed=0, extra_kv=False, rope_freqs=False, vocab=64, poison=None):
    """A model llama.cpp loads: its hyper-parameters, a 64-token SPM
    vocabulary and every tensor of `arch`. `poison` = (tensor name, value)
    writes one bad value into that tensor."""
    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(path, arch)
    head_dim = n_embd // n_head
    if extra_kv:
        # A stale quantization version and split keys, which llama.cpp
        # moves to the end and removes; values of every GGUF type.
        w.add_uint32("general.quantization_version", 1)
        w.add_uint16("split.no", 0)
        w.add_uint16("split.count", 1)
        w.add_int32("split.tensors.count", 0)
        w.add_name("tiny test model")
        w.add_uint8("test.u8", 200)
        w.add_int8("test.i8", -5)
        w.add_uint16("test.u16", 60000)
        w.add_int16("test.i16", -30000)
        w.add_int64("test.i64", -(1 << 40))
        w.add_uint64("test.u64", 1 << 63)
        w.add_float64("test.f64", 1.0 / 3.0)
        w.add_bool("test.bool", True)
        w.add_array("test.strings", ["a", "", "ünïcode"])
    w.add_block_count(n_layer)
    w.add_context_length(256)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    if arch == "qwen3":
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    w.add_file_type({np.float32: 0, np.float16: 1, "bf16": 32}[dtype])
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(3, vocab)])
    w.add_token_scores([-float(i) for i in range(vocab)])
    w.add_token_types([2, 3, 3] + [1] * (vocab - 3))

    def weight(name, *shape):
        x = (rng.standard_normal(shape) * 0.02).astype(np.float32)
        if poison and poison[0] == name:
            x.flat[shape[-1] + 3] = poison[1]
        if dtype == "bf16":
            bits = (x.view(np.uint32) + 0x8000) >> 16  # round to bf16
            w.add_tensor(name, bits.astype(np.uint16), raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            w.add_tensor(name, x.astype(dtype))

    def norm(name, n):
        w.add_tensor(name, (1 + 0.1 * rng.standard_normal(n)).astype(np.float32))

    weight("token_embd.weight", vocab, n_embd)
    norm("output_norm.weight", n_embd)
    if not tied:
        weight("output.weight", vocab, n_embd)
    if rope_freqs:
        # Written with ne = [n_rot/2, 1]; llama.cpp writes it back 1-D.
        w.add_tensor("rope_freqs.weight", np.ones((1, head_dim // 2), np.float32))
    q, kv = n_head * head_dim, n_head_kv * head_dim
    for i in range(n_layer):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight", n_embd)
        weight(p + "attn_q.weight", q, n_embd)
        weight(p + "attn_k.weight", kv, n_embd)
        weight(p + "attn_v.weight", kv, n_embd)
        weight(p + "attn_output.weight", n_embd, q)
        if arch == "qwen2":
            for b, n in (("q", q), ("k", kv), ("v", kv)):
                w.add_tensor(p + f"attn_{b}.bias", (0.01 * rng.standard_normal(n)).astype(np.float32))
        if arch == "qwen3":
            norm(p + "attn_q_norm.weight", head_dim)
            norm(p + "attn_k_norm.weight", head_dim)
        norm(p + "ffn_norm.weight", n_embd)
        weight(p + "ffn_gate.weight", n_ff, n_embd)
        weight(p + "ffn_up.weight", n_ff, n_embd)
        weight(p + "ffn_down.weight", n_embd, n_ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


MODELS = {
    # name: (arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, dtype, options)
    "llama_f16_gqa_untied": ("llama", 2, 256, 512, 4, 1, False, np.float16, {"extra_kv": True}),
    "qwen2_bf16_tied": ("qwen2", 2, 256, 768, 4, 2, True, "bf16", {}),
    "qwen3_f32_gqa_untied": ("qwen3", 3, 256, 512, 4, 2, False, np.float32, {}),
    # 288 is not a multiple of 256 (K types fall back), 80 not of 32 (F16).
    "llama_f32_fallback": ("llama", 2, 288, 80, 4, 4, False, np.float32, {"rope_freqs": True}),
}


def tessel(tool, *args):
    return subprocess.run([tool, "quantize", *args], capture_output=True, text=True)


def fields(reader):
    out = []
    for key, f in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        out.append((key, [int(t) for t in f.types], f.contents()))
    return out


def compare_files(label, ours, theirs):
    a, b = gguf.GGUFReader(ours), gguf.GGUFReader(theirs)
    fa, fb = fields(a), fields(b)
    check([k for k, _, _ in fa] == [k for k, _, _ in fb], f"{label}: metadata keys and order")
    diff = [k for (k, ta, va), (_, tb, vb) in zip(fa, fb) if ta != tb or va != vb]
    check(not diff, f"{label}: metadata types and values" + (f": {diff[:3]}" if diff else ""))
    ia = [(t.name, int(t.tensor_type), [int(x) for x in t.shape], int(t.data_offset)) for t in a.tensors]
    ib = [(t.name, int(t.tensor_type), [int(x) for x in t.shape], int(t.data_offset)) for t in b.tensors]
    check([x[0] for x in ia] == [x[0] for x in ib], f"{label}: tensor names and order")
    wrong = [f"{x} vs {y}" for x, y in zip(ia, ib) if x != y]
    check(not wrong, f"{label}: tensor types, shapes and offsets" + (f": {wrong[:2]}" if wrong else ""))
    bad = [t.name for t, u in zip(a.tensors, b.tensors) if bytes(t.data.tobytes()) != bytes(u.data.tobytes())]
    check(not bad, f"{label}: tensor bytes" + (f": {bad[:3]}" if bad else ""))
    with open(ours, "rb") as f, open(theirs, "rb") as g:
        check(f.read() == g.read(), f"{label}: the files are identical")


def logits(llama_cpp, path):
    m = llama_cpp.Llama(model_path=path, n_ctx=256, n_batch=64, logits_all=True, verbose=False)
    m.eval([1, 7, 12, 40])
    out = np.array(m.scores[: m.n_tokens], dtype=np.float32)
    m.close()
    return out


def expect_error(label, res, code, exit_code):
    check(res.returncode == exit_code and f"error {code}" in res.stderr,
          f"{label}: exit {exit_code} with {code} (got {res.returncode}: {res.stderr.strip()[:160]})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    args = ap.parse_args()
    import llama_cpp
    tool = args.tessel
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "log")
        for name, (arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, dtype, opts) in MODELS.items():
            src = os.path.join(tmp, name + ".gguf")
            build(src, arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, dtype, **opts)
            for mix in MIXES:
                label = f"{name} {mix}"
                theirs = os.path.join(tmp, "llama.gguf")
                ours = os.path.join(tmp, "tessel.gguf")
                rc, lines = qm.llama_quantize(llama_cpp, src, theirs, qm.FTYPES[mix], log)
                check(rc == 0, f"{label}: llama.cpp quantises it")
                res = tessel(tool, src, ours, "--type", mix.lower() if mix == "Q4_0" else mix)
                check(res.returncode == 0, f"{label}: tessel quantises it"
                      + (f" ({res.stderr.strip()[-300:]})" if res.returncode else ""))
                if rc != 0 or res.returncode != 0:
                    continue
                compare_files(label, ours, theirs)
                # Warnings as llama.cpp prints them; nothing else when piped.
                notes = [line for line in lines if line.startswith("warning: ")]
                err = res.stderr.splitlines()
                check(err[: len(notes)] == notes and len(err) == len(notes) + (1 if notes else 0),
                      f"{label}: fallback warnings on stderr ({len(notes)}), nothing else")
                if mix == "Q4_K_M":
                    mine, ref = logits(llama_cpp, ours), logits(llama_cpp, theirs)
                    check(mine.shape == (4, 64) and np.isfinite(mine).all() and np.array_equal(mine, ref),
                          f"{label}: llama.cpp loads tessel's file and computes the same logits")
                os.remove(ours)
                os.remove(theirs)

        # Block-quantised input: tensors the mix leaves are copied, and
        # changing one is refused (llama.cpp's allow_requantize is off).
        src = os.path.join(tmp, "llama_f16_gqa_untied.gguf")
        q4 = os.path.join(tmp, "q4.gguf")
        check(tessel(tool, src, q4, "--type", "Q4_K_M").returncode == 0, "a Q4_K_M file to start from")
        for mix in ("Q4_K_M", "Q8_0"):
            theirs, ours = os.path.join(tmp, "llama.gguf"), os.path.join(tmp, "tessel.gguf")
            rc, _ = qm.llama_quantize(llama_cpp, q4, theirs, qm.FTYPES[mix], log)
            res = tessel(tool, q4, ours, "--type", mix)
            if mix == "Q4_K_M":
                check(rc == 0 and res.returncode == 0, "Q4_K_M of a Q4_K_M file: both copy it")
                if rc == 0 and res.returncode == 0:
                    compare_files("Q4_K_M of Q4_K_M", ours, theirs)
                    os.remove(ours)
            else:
                check(rc != 0, "Q8_0 of a Q4_K_M file: llama.cpp refuses to requantise")
                expect_error("Q8_0 of a Q4_K_M file", res, "E4001", 4)
                check("requantizing" in res.stderr and not os.path.exists(ours),
                      "Q8_0 of a Q4_K_M file: tessel says why and writes nothing")

        # --json describes the file written.
        src = os.path.join(tmp, "llama_f32_fallback.gguf")
        out = os.path.join(tmp, "json.gguf")
        res = tessel(tool, src, out, "--type", "Q4_K_M", "--json")
        try:
            summary = json.loads(res.stdout)
        except ValueError:
            summary = None
        check(res.returncode == 0 and summary is not None, "--json prints JSON")
        if summary:
            r = gguf.GGUFReader(out)
            names = [t.name for t in r.tensors]
            check([t["name"] for t in summary["tensors"]] == names, "--json: tensors in file order")
            check(all(t["to"] == rt.tensor_type.name.lower() and t["bytes"] == rt.n_bytes
                      and t["shape"] == [int(x) for x in reversed(rt.shape)]
                      for t, rt in zip(summary["tensors"], r.tensors)),
                  "--json: each tensor's type, shape and bytes as written")
            check(summary["output_bytes"] == sum(t["bytes"] for t in summary["tensors"])
                  and summary["file_bytes"] == os.path.getsize(out)
                  and summary["type"] == "Q4_K_M" and summary["file_type"] == 15,
                  "--json: totals, mix and file type")
            warnings = [line for line in res.stderr.splitlines() if line.startswith("warning: ")]
            check(len(warnings) > 0 and [f["warning"] for f in summary["fallbacks"]] == warnings,
                  f"--json: the {len(warnings)} fallbacks listed as printed")
            check(summary["peak_resident_bytes"] > 0 and summary["seconds"] >= 0,
                  "--json: time and peak memory")

        # Refusals.
        src = os.path.join(tmp, "llama_f16_gqa_untied.gguf")
        out = os.path.join(tmp, "refused.gguf")
        expect_error("unknown mix", tessel(tool, src, out, "--type", "Q4_K_X"), "E4001", 4)
        expect_error("IQ2_XS needs an importance matrix", tessel(tool, src, out, "--type", "IQ2_XS"), "E4001", 4)
        expect_error("missing input", tessel(tool, os.path.join(tmp, "nope.gguf"), out, "--type", "Q8_0"),
                     "E3002", 3)
        other = os.path.join(tmp, "gptneox.gguf")
        build(other, "gptneox", 1, 256, 512, 4, 4, True, np.float32)
        expect_error("architecture gptneox", tessel(tool, other, out, "--type", "Q8_0"), "E4001", 4)
        for what, value, code, exit_code in (("NaN weight", np.nan, "E3001", 3),
                                             ("weight of 1e38", 1e38, "E2401", 2)):
            bad = os.path.join(tmp, "bad.gguf")
            build(bad, "llama", 1, 256, 512, 4, 4, False, np.float32,
                  poison=("blk.0.ffn_up.weight", value))
            rc, _ = qm.llama_quantize(llama_cpp, bad, os.path.join(tmp, "llama_bad.gguf"), 15, log)
            res = tessel(tool, bad, out, "--type", "Q4_K_M")
            expect_error(what, res, code, exit_code)
            check(rc != 0 and "blk.0.ffn_up.weight" in res.stderr,
                  f"{what}: llama.cpp refuses too, tessel names the tensor")
        check(not os.path.exists(out), "no output file after a failure")
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

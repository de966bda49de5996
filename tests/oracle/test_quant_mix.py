"""tessel's quantisation-mix planner against llama.cpp's llama_model_quantize.

Tiny GGUF models (written with the gguf package) of each architecture tessel
runs, shaped to reach llama.cpp's rules: untied and tied heads, grouped-query
heads (attn_v's extra bits), 4 to 80 layers (the per-layer ffn_down and
attn_v rules, the 70B bump), widths and FFN sizes that are not multiples of
256 (the fallback chain down to F16), f16 inputs, and an 8-expert llama.
Each is quantised by llama.cpp (llama-cpp-python, no importance matrix) to
every mix tessel offers, and the planner must agree on every tensor's type,
the write order, general.file_type, the fallback warnings word for word
(llama.cpp prints them on stderr), and on which mixes are refused.
"""
import argparse
import contextlib
import ctypes
import enum
import os
import subprocess
import sys
import tempfile

import gguf
import gguf.gguf_reader as gguf_reader
import gguf.quants
import numpy as np

FTYPES = {"F32": 0, "F16": 1, "BF16": 32, "Q4_0": 2, "Q4_1": 3, "Q5_0": 8, "Q5_1": 9,
          "Q8_0": 7, "Q2_K": 10, "Q2_K_S": 21, "Q3_K_S": 11, "Q3_K_M": 12, "Q3_K_L": 13,
          "Q4_K_S": 14, "Q4_K_M": 15, "Q5_K_S": 16, "Q5_K_M": 17, "Q6_K": 18,
          "IQ4_NL": 25, "IQ4_XS": 30, "TQ1_0": 36, "TQ2_0": 37, "MXFP4_MOE": 38}
RNG = np.random.default_rng(0)
FAILURES = []

# gguf 0.17.1 predates MXFP4 (ggml type 39): teach its reader the type.
if not hasattr(gguf.GGMLQuantizationType, "MXFP4"):
    Q = enum.IntEnum("GGMLQuantizationType",
                     {**{m.name: m.value for m in gguf.GGMLQuantizationType}, "MXFP4": 39})
    gguf_reader.GGMLQuantizationType = Q
    gguf_reader.GGML_QUANT_SIZES = gguf.quants.GGML_QUANT_SIZES = {
        **{Q(k.value): v for k, v in gguf.GGML_QUANT_SIZES.items()}, Q.MXFP4: (32, 17)}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def build(path, arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, head_dim=None,
          dtype=np.float32, n_expert=0, vocab=64):
    w = gguf.GGUFWriter(path, arch)
    head_dim = head_dim or n_embd // n_head
    w.add_block_count(n_layer)
    w.add_context_length(128)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    if arch == "qwen3":
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    if n_expert:
        w.add_expert_count(n_expert)
        w.add_expert_used_count(2)
    w.add_file_type(0 if dtype == np.float32 else 1)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"t{i}" for i in range(vocab)])

    def weight(name, *shape):
        w.add_tensor(name, (RNG.standard_normal(shape) * 0.02).astype(dtype))

    def ones(name, n):
        w.add_tensor(name, np.ones(n, np.float32))

    weight("token_embd.weight", vocab, n_embd)
    ones("output_norm.weight", n_embd)
    if not tied:
        weight("output.weight", vocab, n_embd)
    q, kv = n_head * head_dim, n_head_kv * head_dim
    for i in range(n_layer):
        p = f"blk.{i}."
        ones(p + "attn_norm.weight", n_embd)
        weight(p + "attn_q.weight", q, n_embd)
        weight(p + "attn_k.weight", kv, n_embd)
        weight(p + "attn_v.weight", kv, n_embd)
        weight(p + "attn_output.weight", n_embd, q)
        if arch == "qwen2":
            for b, n in (("q", q), ("k", kv), ("v", kv)):
                w.add_tensor(p + f"attn_{b}.bias", np.zeros(n, np.float32))
        if arch == "qwen3":
            ones(p + "attn_q_norm.weight", head_dim)
            ones(p + "attn_k_norm.weight", head_dim)
        ones(p + "ffn_norm.weight", n_embd)
        if n_expert:
            weight(p + "ffn_gate_inp.weight", n_expert, n_embd)
            for part in ("gate", "up"):
                weight(p + f"ffn_{part}_exps.weight", n_expert, n_ff, n_embd)
            weight(p + "ffn_down_exps.weight", n_expert, n_embd, n_ff)
        else:
            weight(p + "ffn_gate.weight", n_ff, n_embd)
            weight(p + "ffn_up.weight", n_ff, n_embd)
            weight(p + "ffn_down.weight", n_embd, n_ff)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


MODELS = {
    # name: build(arch, n_layer, n_embd, n_ff, n_head, n_head_kv, tied, head_dim, dtype[, n_expert])
    "llama_L8_e256_gqa4_untied": ("llama", 8, 256, 512, 4, 1, False, None, np.float32),
    "llama_L4_e288_ff80_tied": ("llama", 4, 288, 80, 4, 4, True, None, np.float32),
    "llama_L80_e256_gqa4_f16": ("llama", 80, 256, 256, 4, 1, False, None, np.float16),
    "llama_moe8_L4_e256": ("llama", 4, 256, 256, 4, 1, False, None, np.float32, 8),
    "qwen2_L8_e256_gqa4_untied": ("qwen2", 8, 256, 768, 8, 2, False, None, np.float32),
    "qwen2_L12_e256_ff96_tied_f16": ("qwen2", 12, 256, 96, 4, 2, True, None, np.float16),
    "qwen3_L4_e96_tied": ("qwen3", 4, 96, 256, 3, 1, True, 32, np.float32),
    "qwen3_L16_e256_gqa2_untied": ("qwen3", 16, 256, 512, 4, 2, False, 64, np.float32),
    "qwen3_L28_e320_gqa8_tied_f16": ("qwen3", 28, 320, 288, 8, 1, True, 32, np.float16),
}


def planner_input(path):
    r = gguf.GGUFReader(path)
    arch = r.fields["general.architecture"].contents()

    def meta(key, default):
        f = r.fields.get(f"{arch}.{key}")
        return f.contents() if f is not None else default

    lines = [f"{arch} {meta('block_count', 0)} {meta('attention.head_count', 0)} "
             f"{meta('attention.head_count_kv', -1)} {meta('expert_count', 0)} MIX"]
    for t in r.tensors:
        shape = " ".join(str(int(x)) for x in reversed(t.shape))
        lines.append(f"{t.name} {t.tensor_type.name.lower()} {shape}")
    return "\n".join(lines) + "\n"


def run_planner(tool, text, mix):
    out = subprocess.run([tool], input=text.replace(" MIX\n", f" {mix}\n", 1),
                         capture_output=True, text=True, check=True).stdout
    res = {"types": {}, "order": [], "notes": [], "summary": None, "error": None, "ftype": None}
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        if key == "TYPE":
            name, dtype = rest.split()
            res["types"][name] = dtype
        elif key == "ORDER":
            res["order"].append(rest)
        elif key == "NOTE":
            res["notes"].append(rest)
        elif key == "SUMMARY":
            res["summary"] = rest
        elif key == "ERROR":
            res["error"] = rest
        elif key == "FTYPE":
            res["ftype"] = int(rest)
    return res


@contextlib.contextmanager
def captured_stderr(path):
    """llama.cpp writes its warnings to the process's fd 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "w") as f:
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()  # llama_cpp's log callback writes through Python
        os.dup2(saved, 2)
        os.close(saved)


def llama_quantize(llama_cpp, src, dst, ftype, log):
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = ftype
    p.nthread = 2
    with captured_stderr(log):
        rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    with open(log) as f:
        return rc, f.read().splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    args = ap.parse_args()
    import llama_cpp
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in MODELS.items():
            src = os.path.join(tmp, name + ".gguf")
            build(src, *spec[:7], head_dim=spec[7], dtype=spec[8],
                  n_expert=spec[9] if len(spec) > 9 else 0)
            text = planner_input(src)
            for mix, ftype in FTYPES.items():
                dst = os.path.join(tmp, "out.gguf")
                rc, log = llama_quantize(llama_cpp, src, dst, ftype, os.path.join(tmp, "log"))
                ours = run_planner(args.tool, text, mix)
                label = f"{name} {mix}"
                if rc != 0:
                    check(ours["error"] is not None,
                          f"{label}: llama.cpp refuses, and so does tessel ({ours['error']})")
                    continue
                if ours["error"] is not None:
                    check(False, f"{label}: tessel refused: {ours['error']}")
                    continue
                r = gguf.GGUFReader(dst)
                theirs = {t.name: t.tensor_type.name.lower() for t in r.tensors}
                wrong = [f"{n}: llama.cpp {d}, tessel {ours['types'].get(n)}"
                         for n, d in theirs.items() if ours["types"].get(n) != d]
                check(not wrong, f"{label}: every tensor's type" + (f": {wrong[:3]}" if wrong else ""))
                check([t.name for t in r.tensors] == ours["order"], f"{label}: write order")
                check(r.fields["general.file_type"].contents() == ours["ftype"] == ftype,
                      f"{label}: general.file_type {ftype}")
                notes = [line for line in log if line.startswith("warning: ")]
                summary = next((line for line in log if "required fallback" in line), None)
                check(notes == ours["notes"] and summary == ours["summary"],
                      f"{label}: fallback warnings word for word ({len(notes)})")
                os.remove(dst)
    if FAILURES:
        print(f"{len(FAILURES)} failures")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

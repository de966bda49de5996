"""The model fixtures of model_fixtures.py exist and agree with themselves.

No tessel here: this checks the references before tessel is compared with
them. The fixture dir must be current (its stamp) and hold every HF dir and
GGUF of the index; qwen3-sharded must hold qwen3's tensors byte for byte in
two or more shards, qwen3-bf16 qwen3's tensors rounded to bfloat16 (to
nearest even), and qwen3-bf16.gguf the same bf16 matrices. The GGUFs carry
the expected metadata (architecture, the gpt-2 pre-tokenizer, BOS only for
llama, llama's rope_freqs) and Q4_K_M really uses K-quants. llama.cpp must
tokenise the prompt and the perplexity text as tokenizer.json does, its f32
GGUF logits must be within 1e-4 (max|a-b| / max|b|) of transformers' and its
f32 perplexity within 1e-4 (relative) of transformers' by the same rule. The
other types' differences are printed, bounded loosely (catching a broken
file, not grading llama.cpp).

Usage: test_model_fixtures.py FIXTURES_DIR (made by model_fixtures.py)."""
import json
import os
import struct
import sys

import gguf
import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

FAILURES = []

# max|llama.cpp - transformers| / max|transformers| allowed per GGUF type:
# f32 is the finding to hold; the rest only catch garbage (measured on
# these random models: f16 ~2e-3, bf16 ~2e-2, q8_0 ~5e-2, q4 0.3-0.7: the
# random weights amplify a weight perturbation about five times).
LOGIT_BOUND = {"f32": 1e-4, "f16": 1e-2, "bf16": 5e-2, "q8_0": 0.15, "q4_0": 1.5, "q4_k_m": 1.5}
ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3"}


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        if detail:
            print("     " + detail[:2000])
        FAILURES.append(what)


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def safetensors_raw(paths):
    """name -> (dtype, shape, bytes) of every tensor in the files."""
    out = {}
    for path in paths:
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            header = json.loads(f.read(n))
            data = f.read()
        for name, t in header.items():
            if name != "__metadata__":
                a, b = t["data_offsets"]
                out[name] = (t["dtype"], tuple(t["shape"]), data[a:b])
    return out


def hf_tensors(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.isfile(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    return safetensors_raw(os.path.join(d, f) for f in files), files


def gguf_name(hf):
    """qwen3's HF tensor names -> GGUF names (matrices and norms)."""
    parts = hf.split(".")
    if hf == "model.embed_tokens.weight":
        return "token_embd.weight"
    if hf == "model.norm.weight":
        return "output_norm.weight"
    table = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
             "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    return f"blk.{parts[2]}.{table['.'.join(parts[3:-1])]}.{parts[-1]}"


def check_files(out_dir, index):
    for name in mf.HF_DIRS:
        d = os.path.join(out_dir, name)
        for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
            check(os.path.isfile(os.path.join(d, f)), f"{name}/{f} exists")
    for key, g in index["ggufs"].items():
        check(os.path.isfile(os.path.join(out_dir, g["file"])), f"{g['file']} exists")

    qwen3, _ = hf_tensors(os.path.join(out_dir, "qwen3"))
    sharded, files = hf_tensors(os.path.join(out_dir, "qwen3-sharded"))
    check(len(files) >= 2, f"qwen3-sharded: {len(files)} shards and an index")
    check(sharded == qwen3, "qwen3-sharded: qwen3's tensors, byte for byte")
    bf16, _ = hf_tensors(os.path.join(out_dir, "qwen3-bf16"))
    wrong = [n for n, (dt, shape, raw) in qwen3.items()
             if n not in bf16 or bf16[n][0] != "BF16" or bf16[n][1] != shape
             or bf16[n][2] != np.frombuffer(raw, np.float32).astype(ml_dtypes.bfloat16).tobytes()]
    check(set(bf16) == set(qwen3) and not wrong,
          "qwen3-bf16: qwen3's tensors rounded to bfloat16", str(wrong[:3]))

    r = gguf.GGUFReader(mf.gguf_path(out_dir, "qwen3", "bf16"))
    by_name = {t.name: t for t in r.tensors}
    wrong = []
    for n, (dt, shape, raw) in bf16.items():
        t = by_name.get(gguf_name(n))
        if len(shape) == 2 and (t is None or t.tensor_type != gguf.GGMLQuantizationType.BF16
                                or bytes(t.data.tobytes()) != raw):
            wrong.append(n)
    check(not wrong, "qwen3-bf16.gguf: the bf16 matrices of qwen3-bf16/", str(wrong[:3]))


def field(reader, key):
    f = reader.fields.get(key)
    return f.contents() if f is not None else None


def check_gguf_metadata(out_dir, index):
    for key, g in index["ggufs"].items():
        r = gguf.GGUFReader(os.path.join(out_dir, g["file"]))
        model = g["model"]
        add_bos = index["models"][model]["add_bos"]
        got = (field(r, "general.architecture"), field(r, "tokenizer.ggml.model"),
               field(r, "tokenizer.ggml.pre"), bool(field(r, "tokenizer.ggml.add_bos_token")),
               field(r, "tokenizer.ggml.bos_token_id"))
        want = (ARCH[model], "gpt2", "gpt-2", add_bos, index["models"][model]["bos_id"])
        check(got == want, f"{key}: architecture, tokenizer model and pre, BOS", f"{got} != {want}")
        names = {t.name for t in r.tensors}
        if model == "llama":
            check("rope_freqs.weight" in names, f"{key}: llama3 rope scaling as rope_freqs")
        if g["type"] == "q4_k_m":
            types = {t.tensor_type.name for t in r.tensors if t.name.startswith("blk.")
                     and t.name.endswith(".weight") and len(t.shape) == 2}
            check(types <= {"Q4_K", "Q5_K", "Q6_K"} and "Q4_K" in types,
                  f"{key}: K-quant matrices {sorted(types)} (no fallback)")


def check_outputs(out_dir, index):
    print(f"{'GGUF':14s} {'logits rel':>10s} {'top-1':>6s} {'ppl llama.cpp':>14s} "
          f"{'ppl transformers':>17s}")
    for key, g in index["ggufs"].items():
        m = index["models"][g["model"]]
        a = np.load(os.path.join(out_dir, g["llama_cpp_logits"]))
        b = np.load(os.path.join(out_dir, m["transformers_logits"]))
        ppl = g["llama_cpp_perplexity"]
        tppl = m["transformers_perplexity"]
        d = rel(a, b) if a.shape == b.shape else float("inf")
        print(f"{key:14s} {d:10.2e} {(a.argmax(1) == b.argmax(1)).mean():6.2f} "
              f"{ppl['ppl']:14.4f} {tppl['ppl']:17.4f}")
        check(g["prompt_ids"] == m["prompt_ids"],
              f"{key}: llama.cpp tokenises the prompt as tokenizer.json does",
              f"{g['prompt_ids']} != {m['prompt_ids']}")
        check(ppl["tokens_match_transformers"] and ppl["add_bos"] == m["add_bos"],
              f"{key}: llama.cpp tokenises the perplexity text as tokenizer.json does")
        check(d <= LOGIT_BOUND[g["type"]],
              f"{key}: llama.cpp logits within {LOGIT_BOUND[g['type']]:g} of transformers'",
              f"{d:.3e}")
        if g["type"] == "f32":
            p = abs(ppl["ppl"] - tppl["ppl"]) / tppl["ppl"]
            check(p <= 1e-4, f"{key}: perplexity within 1e-4 of transformers' ({p:.1e})")
    q = {n: np.load(os.path.join(out_dir, index["models"][n]["transformers_logits"]))
         for n in ("qwen3", "qwen3-sharded", "qwen3-bf16")}
    check(rel(q["qwen3-sharded"], q["qwen3"]) == 0.0, "qwen3-sharded: qwen3's logits")
    d = rel(q["qwen3-bf16"], q["qwen3"])
    check(0 < d < 5e-2, f"qwen3-bf16: near qwen3's logits, not equal ({d:.2e})")
    for name in mf.MODELS:
        gen = index["models"][name]["generate"]
        check(len(gen["new_ids"]) == mf.GENERATE_NEW and all(
            0 <= t < index["vocab_size"] for t in gen["new_ids"]),
            f"{name}: {mf.GENERATE_NEW} greedy tokens (smallest top-2 gap "
            f"{min(gen['top2_gaps']):.2e})")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = os.path.abspath(sys.argv[1])
    check(mf.is_current(out_dir), f"{out_dir} is current (stamp)")
    if not os.path.isfile(mf.paths(out_dir)["index"]):
        print(f"FAIL no fixtures in {out_dir}: run model_fixtures.py")
        return 1
    index = mf.load_index(out_dir)
    check_files(out_dir, index)
    check_gguf_metadata(out_dir, index)
    check_outputs(out_dir, index)
    if FAILURES:
        print(f"{len(FAILURES)} checks failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

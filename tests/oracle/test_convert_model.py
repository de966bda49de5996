"""`tessel convert` between HF checkpoint directories and GGUF model files
against llama.cpp's own converter (convert_hf_to_gguf.py), llama.cpp and
the `tokenizers` package, on the model fixtures (model_fixtures.py: tiny
llama with Llama 3 rope scaling, qwen2 with biases, qwen3, a sharded and a
bf16 checkpoint, their GGUFs by the converter and llama_model_quantize).

HF -> GGUF. For llama, qwen2 and qwen3 and --dtype f32, f16 and bf16,
tessel's file holds the converter's tensors (names in order, GGML types,
dimensions, bytes: llama's q/k rows interleaved, rope_freqs, the f32 norms
and biases) and every metadata key of the converter's file with its GGUF
type and value (architecture and hyperparameters, file type, the gpt2
vocabulary: tokens, types, merges, pre "gpt-2", BOS/EOS/SEP ids and flags,
chat template; general.name and size_label too). Whether the whole file is
byte-identical is checked as well. Without --dtype f32 weights stay f32
and bf16 weights bf16; qwen3-sharded gives qwen3's tensors and qwen3-bf16
the converter's bf16 ones. llama.cpp (llama-cpp-python, the settings of
model_fixtures_llama.py) runs tessel's files and gives exactly the logits
the fixture index holds for the converter's.

GGUF -> HF. The converter's f32 files come back as the original
checkpoints: safetensors tensors bit for bit, config.json with the
original's hyperparameters (llama's rope scaling recovered from
rope_freqs), and model_tool (CausalLM::load) gives the original
directory's logits exactly; tokenizer.json, rebuilt from the vocabulary,
encodes texts with and without special tokens as the original does (the
`tokenizers` package). f16/bf16 files keep their dtype and convert back to
the converter's tensors; q8_0/q4_0/q4_k_m files dequantise to f32 as
gguf-py's dequantize does, q/k rows un-interleaved. --shard-size writes
shards and an index that the reference safetensors reader and tessel load.

Tokenizer families: BPEs trained as GPT-2's, Llama 3's and Qwen2's
tokenizer.json files are built (tokenizer_corpus.py) are named gpt-2,
llama-bpe and qwen2, llama.cpp tokenises the test texts with tessel's GGUF
as `tokenizers` does with the original, and the tokenizer.json rebuilt from
the GGUF encodes them all as the original.

Refusals (E4001 naming what is wrong, nothing written): a config.json of
another architecture, a missing tensor (both directions), a tensor no
decoder has, a GGUF of another architecture, a foreign output directory,
--dtype q8_0. Memory: a 300 MiB llama converts to bf16 GGUF and back with
a peak resident set within 64 MiB of a tiny model's."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import gguf
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

FAILURES = []
CHECKS = [0]
VERBOSE = False
TESSEL = MODEL_TOOL = FX = None
MODELS = ("llama", "qwen2", "qwen3")
TYPES = ("f32", "f16", "bf16")
# Keys gguf-py computes from the file being written, not the model.
NOT_MODEL_KEYS = ("GGUF.",)


def check(cond, what, detail=""):
    CHECKS[0] += 1
    if VERBOSE or not cond:
        print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        if detail:
            print("     " + str(detail)[:2000])
        FAILURES.append(what)


def convert(*args):
    return subprocess.run([TESSEL, "convert", *map(str, args)], capture_output=True, text=True)


def converted(what, *args):
    p = convert(*args)
    check(p.returncode == 0, f"{what}: exit 0", p.stderr.strip())
    return p


def read_gguf(path):
    """{key: (types, value)}, [(name, type name, ne, bytes)] in file order."""
    r = gguf.GGUFReader(path)
    fields = {k: (list(f.types), f.contents()) for k, f in r.fields.items()
              if not k.startswith(NOT_MODEL_KEYS)}
    tensors = [(t.name, t.tensor_type.name, [int(d) for d in t.shape], t.data.tobytes())
               for t in r.tensors]
    return fields, tensors


def same_tensors(what, ours, ref, ordered=True, matrices_only=False):
    names, ref_names = [t[0] for t in ours], [t[0] for t in ref]
    if ordered:
        check(names == ref_names, f"{what}: the converter's tensor names in its order",
              f"{names} vs {ref_names}")
    else:
        check(sorted(names) == sorted(ref_names), f"{what}: the converter's tensor names",
              set(names) ^ set(ref_names))
    by_name = {t[0]: t for t in ours}
    bad = [t[0] for t in ref if (len(t[2]) > 1 or not matrices_only)
           and by_name.get(t[0], (None,) * 4)[1:] != t[1:]]
    check(not bad, f"{what}: every {'matrix' if matrices_only else 'tensor'}'s type, "
          "dimensions and bytes equal", bad)


def same_metadata(what, ours, ref, skip=()):
    bad = [k for k in ref if k not in skip and ours.get(k) != ref[k]]
    extra = [k for k in ours if k not in ref and k not in skip]
    check(not bad and not extra, f"{what}: every metadata key, type and value equal",
          f"differ: {[(k, str(ours.get(k))[:80], str(ref[k])[:80]) for k in bad]} extra: {extra}")


# ---- HF -> GGUF ------------------------------------------------------------

def hf_to_gguf(tmp):
    for model in MODELS:
        for t in TYPES:
            ref = mf.gguf_path(FX, model, t)
            out = os.path.join(tmp, f"{model}-{t}.gguf")
            what = f"{model} -> gguf --dtype {t}"
            converted(what, os.path.join(FX, model), out, "--dtype", t)
            if not os.path.exists(out):
                continue
            (fo, to), (fr, tr) = read_gguf(out), read_gguf(ref)
            same_tensors(what, to, tr)
            same_metadata(what, fo, fr)
            with open(out, "rb") as a, open(ref, "rb") as b:
                check(a.read() == b.read(), f"{what}: the converter's file byte for byte")
    # Without --dtype: f32 stays f32, bf16 stays bf16.
    out = os.path.join(tmp, "llama-default.gguf")
    converted("llama -> gguf (no --dtype)", os.path.join(FX, "llama"), out)
    if os.path.exists(out):
        same_tensors("llama -> gguf (no --dtype)", read_gguf(out)[1],
                     read_gguf(mf.gguf_path(FX, "llama", "f32"))[1])
    # qwen3-sharded holds qwen3's tensors (the converter reads shard by
    # shard, so its order differs); qwen3-bf16 qwen3's matrices rounded to
    # bf16 as the converter rounds them (its norms are bf16 too, where the
    # converter's file has the f32 originals).
    for d, ref_type, args, bf16 in (("qwen3-sharded", "f32", ["--dtype", "f32"], False),
                                    ("qwen3-bf16", "bf16", [], True)):
        out = os.path.join(tmp, f"{d}-dir.gguf")
        what = f"{d} -> gguf {' '.join(args)}"
        converted(what, os.path.join(FX, d), out, *args)
        if os.path.exists(out):
            (fo, to), (fr, tr) = read_gguf(out), read_gguf(mf.gguf_path(FX, "qwen3", ref_type))
            same_tensors(f"{what} (qwen3's {ref_type} file)", to, tr, ordered=False,
                         matrices_only=bf16)
            same_metadata(f"{what} (qwen3's {ref_type} file)", fo, fr,
                          skip=("general.name", "general.size_label"))


def llama_cpp_runs(tmp):
    import llama_cpp
    index = mf.load_index(FX)
    for model in MODELS:
        for t in TYPES:
            path = os.path.join(tmp, f"{model}-{t}.gguf")
            entry = index["ggufs"].get(f"{model}-{t}")
            if not os.path.exists(path) or entry is None:
                continue
            llm = llama_cpp.Llama(model_path=path, logits_all=True, type_k=0, type_v=0,
                                  n_threads=2, n_threads_batch=2, n_ctx=256, n_batch=256,
                                  n_ubatch=256, verbose=False)
            llm.reset()
            llm.eval(index["models"][model]["prompt_ids"])
            got = np.array(llm.scores[:llm.n_tokens], dtype=np.float32)
            llm.close()
            want = np.load(os.path.join(FX, entry["llama_cpp_logits"]))
            check(got.shape == want.shape and np.array_equal(got, want),
                  f"llama.cpp on tessel's {model} {t} GGUF: the converter file's logits exactly",
                  f"max diff {np.abs(got - want).max() if got.shape == want.shape else got.shape}")


# ---- GGUF -> HF ------------------------------------------------------------

def logits(model_path, ids, out):
    p = subprocess.run([MODEL_TOOL, "logits", str(model_path), ",".join(map(str, ids)), out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        check(False, f"model_tool logits {model_path}", p.stderr)
        return None
    return np.load(out)


def encode(tokenizer_json, text):
    from tokenizers import Tokenizer
    return Tokenizer.from_file(tokenizer_json).encode(text).ids


def config_of(d):
    with open(os.path.join(d, "config.json")) as f:
        c = json.load(f)
    rope = c.get("rope_parameters") or c.get("rope_scaling") or {}
    return {"model_type": c["model_type"], "vocab_size": c["vocab_size"],
            "hidden_size": c["hidden_size"], "intermediate_size": c["intermediate_size"],
            "layers": c["num_hidden_layers"], "heads": c["num_attention_heads"],
            "kv_heads": c["num_key_value_heads"], "head_dim": c.get("head_dim"),
            "rms_norm_eps": c["rms_norm_eps"], "max_pos": c["max_position_embeddings"],
            "rope_theta": c.get("rope_theta", rope.get("rope_theta")),
            "tie": c.get("tie_word_embeddings"), "bos": c.get("bos_token_id"),
            "eos": c.get("eos_token_id"),
            "rope_type": rope.get("rope_type", rope.get("type", "default")),
            **{k: rope.get(k) for k in ("factor", "low_freq_factor", "high_freq_factor",
                                        "original_max_position_embeddings")}}


def gguf_to_hf(tmp):
    index = mf.load_index(FX)
    texts = [index["prompt_text"], "<|im_start|>user\nHello there!<|im_end|>\n",
             "Ünïcödé  spaces\n\n\ttabs 12345 don't"]
    for model in MODELS:
        src = os.path.join(FX, model)
        out = os.path.join(tmp, f"back-{model}")
        what = f"{model}-f32.gguf -> hf"
        converted(what, mf.gguf_path(FX, model, "f32"), out)
        if not os.path.isdir(out):
            continue
        got, want = load_file(os.path.join(out, "model.safetensors")), load_file(
            os.path.join(src, "model.safetensors"))
        check(sorted(got) == sorted(want), f"{what}: the original tensor names",
              set(got) ^ set(want))
        bad = [k for k in want if k not in got or got[k].dtype != want[k].dtype
               or got[k].shape != want[k].shape or got[k].tobytes() != want[k].tobytes()]
        check(not bad, f"{what}: every tensor the original's bit for bit", bad)
        check(config_of(out) == config_of(src), f"{what}: config.json's hyperparameters",
              f"{config_of(out)} vs {config_of(src)}")
        ids = index["models"][model]["prompt_ids"]
        a = logits(out, ids, os.path.join(tmp, "a.npy"))
        b = logits(src, ids, os.path.join(tmp, "b.npy"))
        if a is not None and b is not None:
            check(np.array_equal(a, b), f"{what}: CausalLM::load gives the original's logits",
                  np.abs(a - b).max())
        for text in texts:
            check(encode(os.path.join(out, "tokenizer.json"), text)
                  == encode(os.path.join(src, "tokenizer.json"), text),
                  f"{what}: tokenizer.json encodes {text[:20]!r} as the original")
        with open(os.path.join(out, "tokenizer_config.json")) as f:
            tc = json.load(f)
        with open(os.path.join(src, "chat_template.jinja")) as f:
            check(tc.get("chat_template") == f.read(), f"{what}: the chat template")
        check(tc.get("bos_token") == "<|endoftext|>" and tc.get("eos_token") == "<|endoftext|>",
              f"{what}: bos/eos tokens ({tc.get('bos_token')}, {tc.get('eos_token')})")

        # f16/bf16 files keep their dtype and go back to the same file.
        for t in ("f16", "bf16"):
            d = os.path.join(tmp, f"back-{model}-{t}")
            what = f"{model}-{t}.gguf -> hf -> gguf"
            converted(what, mf.gguf_path(FX, model, t), d)
            again = os.path.join(tmp, f"again-{model}-{t}.gguf")
            converted(what, d, again)
            if os.path.exists(again):
                same_tensors(what, read_gguf(again)[1], read_gguf(mf.gguf_path(FX, model, t))[1])

        # Quantised files dequantise as gguf-py does.
        for t in ("q8_0", "q4_0", "q4_k_m"):
            ref = mf.gguf_path(FX, model, t)
            d = os.path.join(tmp, f"back-{model}-{t}")
            what = f"{model}-{t}.gguf -> hf"
            converted(what, ref, d)
            if not os.path.isdir(d):
                continue
            got = load_file(os.path.join(d, "model.safetensors"))
            cfg = config_of(src)
            bad = []
            for tensor in gguf.GGUFReader(ref).tensors:
                if tensor.name == "rope_freqs.weight":
                    continue
                w = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
                w = w.reshape([int(x) for x in reversed(tensor.shape)])
                if model == "llama" and ".attn_q." in tensor.name:
                    w = unpermute(w, cfg["heads"])
                if model == "llama" and ".attn_k." in tensor.name:
                    w = unpermute(w, cfg["kv_heads"])
                name = hf_name(tensor.name)
                if name not in got or not np.array_equal(got[name], w):
                    bad.append(name)
            check(not bad, f"{what}: every tensor gguf-py's dequantisation", bad)


def unpermute(w, heads):
    """convert_hf_to_gguf's permute undone: (heads, half, 2) rows -> (heads, 2, half)."""
    return (w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def hf_name(name):
    fixed = {"token_embd.weight": "model.embed_tokens.weight",
             "output_norm.weight": "model.norm.weight", "output.weight": "lm_head.weight"}
    if name in fixed:
        return fixed[name]
    layer = {"attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj",
             "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
             "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
             "attn_k_norm": "self_attn.k_norm", "ffn_norm": "post_attention_layernorm",
             "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
    _, i, part, suffix = name.split(".")
    return f"model.layers.{i}.{layer[part]}.{suffix}"


def round_trip_and_shards(tmp):
    src = os.path.join(FX, "llama")
    mid = os.path.join(tmp, "rt.gguf")
    out = os.path.join(tmp, "rt-hf")
    converted("llama -> gguf -> hf (1MB shards)", src, mid)
    converted("llama -> gguf -> hf (1MB shards)", mid, out, "--shard-size", "1MB")
    if not os.path.isdir(out):
        return
    files = sorted(os.listdir(out))
    shards = [f for f in files if f.endswith(".safetensors")]
    check(len(shards) >= 3 and "model.safetensors.index.json" in files,
          f"--shard-size 1MB: several shards and an index ({files})")
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        index = json.load(f)
    got = {}
    for shard in shards:
        with safe_open(os.path.join(out, shard), "np") as f:
            check(f.metadata() == {"format": "pt"}, f"{shard}: metadata format pt")
            for k in f.keys():
                got[k] = f.get_tensor(k)
                check(index["weight_map"].get(k) == shard, f"index names {k}'s shard")
    check(index["metadata"]["total_size"] == sum(a.nbytes for a in got.values()),
          "index total_size")
    want = load_file(os.path.join(src, "model.safetensors"))
    check(sorted(got) == sorted(want) and all(
        got[k].tobytes() == want[k].tobytes() for k in want),
        "llama -> gguf -> hf: the original tensors bit for bit")
    ids = mf.load_index(FX)["models"]["llama"]["prompt_ids"]
    a = logits(out, ids, os.path.join(tmp, "a.npy"))
    b = logits(src, ids, os.path.join(tmp, "b.npy"))
    if a is not None and b is not None:
        check(np.array_equal(a, b), "sharded round trip: the original's logits")


# ---- refusals --------------------------------------------------------------

def edited_checkpoint(src, d, config=None, tensors=None):
    """A copy of checkpoint directory `src` at `d` with `config` merged into
    its config.json and `tensors` (a function editing the name -> array dict
    in place) applied to its model.safetensors."""
    shutil.copytree(src, d)
    if config:
        with open(os.path.join(d, "config.json")) as f:
            cfg = json.load(f)
        cfg.update(config)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f)
    if tensors:
        arrays = load_file(os.path.join(d, "model.safetensors"))
        tensors(arrays)
        save_file(arrays, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    return d


def with_foreign_tensor(arrays):
    arrays["model.vision_tower.weight"] = np.zeros(4, np.float32)


def refusals(tmp):
    def refused(what, args, out, needle, code="E4001", rc=4):
        p = convert(*args)
        check(p.returncode == rc and code in p.stderr and needle in p.stderr,
              f"{what}: {code} naming {needle!r}", f"{p.returncode}: {p.stderr.strip()}")
        check(not os.path.exists(out), f"{what}: nothing written")
        leftovers = [n for n in os.listdir(os.path.dirname(out)) if n.startswith(".")]
        check(not leftovers, f"{what}: no temporary files", leftovers)

    fail = os.path.join(tmp, "fail")
    os.makedirs(fail)
    qwen3 = os.path.join(FX, "qwen3")
    bad_arch = edited_checkpoint(qwen3, os.path.join(tmp, "gpt2-dir"),
                                 config={"model_type": "gpt2"})
    refused("config.json of gpt2", [bad_arch, os.path.join(fail, "a.gguf")],
            os.path.join(fail, "a.gguf"), "gpt2")

    missing = edited_checkpoint(qwen3, os.path.join(tmp, "missing-dir"),
                                tensors=lambda t: t.pop("model.layers.1.mlp.up_proj.weight"))
    refused("checkpoint without a tensor", [missing, os.path.join(fail, "b.gguf")],
            os.path.join(fail, "b.gguf"), "model.layers.1.mlp.up_proj.weight")

    extra = edited_checkpoint(qwen3, os.path.join(tmp, "extra-dir"),
                              tensors=with_foreign_tensor)
    refused("checkpoint with a foreign tensor", [extra, os.path.join(fail, "c.gguf")],
            os.path.join(fail, "c.gguf"), "model.vision_tower.weight")

    refused("--dtype q8_0", [os.path.join(FX, "qwen3"), os.path.join(fail, "d.gguf"),
                             "--dtype", "q8_0"], os.path.join(fail, "d.gguf"), "q8_0",
            code="E2201", rc=2)

    # A GGUF of another architecture, and one missing a tensor.
    other = os.path.join(tmp, "gemma.gguf")
    w = gguf.GGUFWriter(other, "gemma")
    w.add_uint32("gemma.block_count", 1)
    w.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    refused("GGUF of gemma", [other, os.path.join(fail, "e")], os.path.join(fail, "e"),
            "general.architecture")
    r = gguf.GGUFReader(mf.gguf_path(FX, "qwen2", "f32"))
    cut = os.path.join(tmp, "cut.gguf")
    w = gguf.GGUFWriter(cut, "qwen2")
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        v = f.contents()
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            w.add_key_value(k, v, t, sub_type=f.types[1])
        else:
            w.add_key_value(k, v, t)
    for t in r.tensors:
        if t.name != "blk.0.attn_v.bias":
            w.add_tensor(t.name, np.array(t.data).reshape([int(x) for x in reversed(t.shape)]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    refused("GGUF without a tensor", [cut, os.path.join(fail, "f")], os.path.join(fail, "f"),
            "blk.0.attn_v.bias")

    # A directory holding other files is never replaced.
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    with open(os.path.join(work, "notes.txt"), "w") as f:
        f.write("precious")
    p = convert(mf.gguf_path(FX, "qwen3", "f32"), work)
    check(p.returncode == 4 and "E4001" in p.stderr and os.listdir(work) == ["notes.txt"],
          "GGUF -> a directory holding other files: E4001, untouched", p.stderr.strip())
    # --tensors keeps the plain tensor conversion (GGUF names, .npy files).
    npys = os.path.join(tmp, "npys")
    converted("--tensors gguf -> npy-dir", mf.gguf_path(FX, "qwen3", "f32"), npys, "--tensors")
    check(os.path.exists(os.path.join(npys, "token_embd.weight.npy")),
          "--tensors: a directory of .npy files under GGUF names")


def tiny_checkpoint(d, model_type, vocab):
    """A small random llama/qwen2 checkpoint (numpy) for a tokenizer to ride on."""
    os.makedirs(d)
    hidden, inter, heads, kv, head_dim = 64, 128, 2, 1, 32
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": model_type, "hidden_size": hidden, "intermediate_size": inter,
                   "vocab_size": vocab, "num_hidden_layers": 1, "num_attention_heads": heads,
                   "num_key_value_heads": kv, "head_dim": head_dim,
                   "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
                   "tie_word_embeddings": True}, f)
    rng = np.random.default_rng(5)
    p = "model.layers.0."
    shapes = {"model.embed_tokens.weight": (vocab, hidden), "model.norm.weight": (hidden,),
              p + "input_layernorm.weight": (hidden,),
              p + "post_attention_layernorm.weight": (hidden,),
              p + "self_attn.q_proj.weight": (heads * head_dim, hidden),
              p + "self_attn.k_proj.weight": (kv * head_dim, hidden),
              p + "self_attn.v_proj.weight": (kv * head_dim, hidden),
              p + "self_attn.o_proj.weight": (hidden, heads * head_dim),
              p + "mlp.gate_proj.weight": (inter, hidden), p + "mlp.up_proj.weight": (inter, hidden),
              p + "mlp.down_proj.weight": (hidden, inter)}
    if model_type == "qwen2":
        shapes.update({p + f"self_attn.{x}_proj.bias": (n * head_dim,)
                       for x, n in (("q", heads), ("k", kv), ("v", kv))})
    save_file({k: (rng.standard_normal(v) * 0.02).astype(np.float32) for k, v in shapes.items()},
              os.path.join(d, "model.safetensors"), metadata={"format": "pt"})


def tokenizer_families(tmp):
    """The pre-tokenizers of the families (tokenizer_corpus.py trains them as
    their published tokenizer.json files are built) get llama.cpp's names,
    llama.cpp tokenises tessel's GGUF as tokenizers tokenises the original,
    and the tokenizer.json rebuilt from the GGUF encodes every test text as
    the original (texts NFC changes are left out for llama.cpp, which does
    not normalise: docs/models.md, Tokenizers)."""
    import unicodedata

    import llama_cpp
    import tokenizer_corpus as tc
    from tokenizers import Tokenizer
    families = {"gpt2": ("qwen2", "gpt-2", "<|endoftext|>", "<|endoftext|>", False),
                "llama3": ("llama", "llama-bpe", "<|begin_of_text|>", "<|end_of_text|>", True),
                "qwen2": ("qwen2", "qwen2", None, "<|im_end|>", False)}
    for family, (arch, pre, bos, eos, add_bos) in families.items():
        tok = tc.train(family, vocab_size=1000)
        d = os.path.join(tmp, f"family-{family}")
        tiny_checkpoint(d, arch, tok.get_vocab_size())
        tok.save(os.path.join(d, "tokenizer.json"))
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"bos_token": bos, "eos_token": eos, "chat_template": "{{ x }}"}, f)
        out = os.path.join(tmp, f"family-{family}.gguf")
        what = f"{family} tokenizer -> gguf"
        converted(what, d, out)
        if not os.path.exists(out):
            continue
        fields = read_gguf(out)[0]
        check(fields["tokenizer.ggml.pre"][1] == pre, f"{what}: pre {pre}",
              fields["tokenizer.ggml.pre"][1])
        check(fields["tokenizer.ggml.add_bos_token"][1] == add_bos, f"{what}: add_bos {add_bos}")
        original = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        llm = llama_cpp.Llama(model_path=out, vocab_only=True, verbose=False)
        bad = [t for t in tc.TEXTS if unicodedata.normalize("NFC", t) == t
               and llm.tokenize(t.encode(), add_bos=True, special=True) != original.encode(t).ids]
        llm.close()
        check(not bad, f"{what}: llama.cpp tokenises as tokenizers", bad)
        back = os.path.join(tmp, f"family-{family}-back")
        converted(f"{family} gguf -> hf", out, back)
        if os.path.isdir(back):
            rebuilt = Tokenizer.from_file(os.path.join(back, "tokenizer.json"))
            bad = [t for t in tc.TEXTS if rebuilt.encode(t).ids != original.encode(t).ids]
            check(not bad, f"{family} gguf -> hf: tokenizer.json encodes as the original", bad)


def peak_resident_mib(what, *args):
    p = convert(*args, "--json")
    check(p.returncode == 0, f"{what}: exit 0", p.stderr.strip())
    return json.loads(p.stdout or "{}").get("peak_resident_bytes", -1) / 2**20


def big_llama_checkpoint(big):
    """A 300 MiB random f32 llama checkpoint (largest tensor 32 MiB), for
    the streaming bounds here and in test_quantize_checkpoint.py."""
    os.makedirs(big)
    hidden, inter, vocab, layers = 1024, 4096, 8192, 4
    with open(os.path.join(big, "config.json"), "w") as f:
        json.dump({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
                   "hidden_size": hidden, "intermediate_size": inter, "vocab_size": vocab,
                   "num_hidden_layers": layers, "num_attention_heads": 8,
                   "num_key_value_heads": 4, "max_position_embeddings": 256,
                   "rms_norm_eps": 1e-5, "tie_word_embeddings": False}, f)
    rng = np.random.default_rng(3)
    shapes = {"model.embed_tokens.weight": (vocab, hidden), "lm_head.weight": (vocab, hidden),
              "model.norm.weight": (hidden,)}
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes.update({p + "input_layernorm.weight": (hidden,),
                       p + "post_attention_layernorm.weight": (hidden,),
                       p + "self_attn.q_proj.weight": (hidden, hidden),
                       p + "self_attn.k_proj.weight": (hidden // 2, hidden),
                       p + "self_attn.v_proj.weight": (hidden // 2, hidden),
                       p + "self_attn.o_proj.weight": (hidden, hidden),
                       p + "mlp.gate_proj.weight": (inter, hidden),
                       p + "mlp.up_proj.weight": (inter, hidden),
                       p + "mlp.down_proj.weight": (hidden, inter)})
    save_file({k: rng.standard_normal(v, dtype=np.float32) for k, v in shapes.items()},
              os.path.join(big, "model.safetensors"), metadata={"format": "pt"})


def streaming_memory(tmp):
    """Peak memory follows a chunk, not the model: a 300 MiB f32 llama
    (largest tensor 32 MiB) converts to bf16 GGUF and back within 64 MiB of
    what converting the tiny fixture takes (the same bound as
    test_convert.py's for tensors)."""
    base = peak_resident_mib("tiny model -> gguf", os.path.join(FX, "qwen3"),
                             os.path.join(tmp, "tiny.gguf"))
    big = os.path.join(tmp, "big-llama")
    big_llama_checkpoint(big)
    gguf_out = os.path.join(tmp, "big.gguf")
    peak = peak_resident_mib("300 MiB llama -> gguf bf16", big, gguf_out, "--dtype", "bf16")
    check(base > 0 and peak - base < 64,
          f"300 MiB llama -> gguf bf16: peak resident {peak:.0f} MiB, {peak - base:.0f} MiB "
          f"above the tiny model's {base:.0f} MiB (bound 64)")
    peak = peak_resident_mib("gguf bf16 -> hf f32", gguf_out, os.path.join(tmp, "big-back"),
                             "--dtype", "f32", "--shard-size", "100MB")
    check(base > 0 and peak - base < 64,
          f"gguf bf16 -> 300 MiB hf f32: peak resident {peak:.0f} MiB, {peak - base:.0f} MiB "
          f"above the tiny model's {base:.0f} MiB (bound 64)")


def main():
    global TESSEL, MODEL_TOOL, FX, VERBOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--model-tool", required=True)
    ap.add_argument("fixtures", nargs="?", default=os.environ.get("TESSEL_MODEL_FIXTURES"))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    TESSEL, MODEL_TOOL, FX, VERBOSE = args.tessel, args.model_tool, args.fixtures, args.verbose
    if not FX or not os.path.isfile(mf.paths(FX)["index"]):
        print(f"no model fixtures in {FX!r}: run tests/oracle/model_fixtures.py")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        hf_to_gguf(tmp)
        llama_cpp_runs(tmp)
        gguf_to_hf(tmp)
        round_trip_and_shards(tmp)
        refusals(tmp)
        tokenizer_families(tmp)
        streaming_memory(tmp)
    print(f"tessel convert (models) vs llama.cpp's converter, llama.cpp, tokenizers: "
          f"{CHECKS[0]} checks, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())

"""Tiny random checkpoints made by the reference tools, and their outputs (issue 14).

Run with .venv-torch2's python (scripts/setup --torch2):

    .venv-torch2/bin/python tests/oracle/model_fixtures.py OUT_DIR

It does nothing when OUT_DIR/stamp holds stamp() (VERSION and a hash of this
file and of model_fixtures_llama.py); otherwise it empties OUT_DIR and makes:

  tokenizer/      a byte-level BPE (GPT-2 regex, ByteLevel pre-tokenizer and
                  decoder) of VOCAB_SIZE tokens trained with `tokenizers` on
                  training_text(), with the special tokens SPECIALS, saved by
                  transformers: tokenizer.json, tokenizer_config.json (bos and
                  eos <|endoftext|>) and chat_template.jinja (ChatML). It
                  adds no BOS when encoding.
  llama/          LlamaForCausalLM, Llama-3 rope scaling (rope_type llama3),
                  rope_theta 500000, GQA 4/2 heads, untied head. Its
                  tokenizer.json adds BOS (<|endoftext|>, a TemplateProcessing
                  after the ByteLevel post-processor, as Llama-3's does).
  qwen2/          Qwen2ForCausalLM: q/k/v biases (random, std 0.5), tied head.
  qwen3/          Qwen3ForCausalLM: q_norm/k_norm (1 + 0.2 randn), tied head.
  qwen3-sharded/  qwen3's weights in several safetensors shards + index.
  qwen3-bf16/     qwen3's weights rounded to bfloat16 (model.to(bfloat16)).
  <model>-<type>.gguf  for llama, qwen2 and qwen3: llama.cpp's
                  convert_hf_to_gguf.py (f32, f16, bf16, q8_0) and
                  llama_model_quantize from the f32 file (q4_0, q4_k_m).
                  qwen3-bf16.gguf holds the bf16 matrices of qwen3-bf16/
                  (the converter keeps 1-D tensors in f32, unrounded).
  expected/       the reference outputs, indexed by expected/index.json
                  (paths relative to OUT_DIR; load_index() reads it).

Every HF model: hidden 256, intermediate 512, 2 layers, 4 heads of 64, 2 KV
heads, vocab = the tokenizer's, max_position_embeddings 256, f32. Weights:
torch.manual_seed(SEEDS[model]), then in named_parameters() order every
matrix N(0, 0.1), every norm weight 1 + 0.1 randn (q_norm/k_norm 1 + 0.2
randn), every bias 0.5 randn.

Reference outputs (expected/index.json, "models"):
  - transformers logits [n, vocab] f32 for the prompt ids (PROMPT_TEXT
    encoded by the dir's tokenizer.json with the `tokenizers` package, post-
    processor included, so llama's start with BOS; see transformers_outputs()
    for why not AutoTokenizer): AutoModelForCausalLM.from_pretrained(dir,
    dtype=float32, attn_implementation="eager", use_kernels=False), one
    forward pass, torch with 2 threads. For qwen3-bf16: the bf16 weights
    upcast to f32 and the whole computation in f32, what tessel should match
    when it computes in f32 from bf16 weights.
  - transformers greedy generate (llama, qwen2, qwen3): GENERATE_TEXT encoded
    as above, 32 new tokens, do_sample=False, no EOS stop, KV cache; the ids
    and per step the gap between the best and second-best logit.
  - llama.cpp logits for every GGUF (model_fixtures_llama.py, in the main
    .venv: llama-cpp-python 0.3.36): Llama(path, logits_all=True, type_k=0,
    type_v=0 (f32 KV cache), n_threads=2, n_ctx=256, n_batch=256), eval(the
    same prompt ids), scores; and llama.cpp's own tokenisation of the prompt.
  - perplexity ("perplexity"): of every GGUF by llama.cpp, and of every HF
    dir by transformers, both by the rule below on perplexity_text() (about
    600 tokens, saved as expected/perplexity.txt) with n_ctx PPL_CTX = 128.

The perplexity rule (llama.cpp's tools/perplexity/perplexity.cpp,
perplexity() with the default --ppl-stride 0 and n_batch >= n_ctx):
  1. tokens = tokenize(text, add_special=True, parse_special=False): BOS
     first only if the vocabulary adds BOS (tokenizer.ggml.add_bos_token;
     here llama yes, qwen2/qwen3 no). At least 2*n_ctx tokens are needed.
  2. n_chunk = len(tokens) // n_ctx; the tail after the last whole chunk is
     dropped. Chunk c is tokens[c*n_ctx : (c+1)*n_ctx], evaluated alone
     (KV cache cleared, positions 0 .. n_ctx-1). If the vocabulary adds BOS,
     the chunk's FIRST token is REPLACED by BOS for the evaluation (not
     prepended: in every chunk but the first, one text token is lost).
  3. first = n_ctx // 2. For j in first .. n_ctx-2 the chunk scores
     nll_j = -log_softmax(logits[j])[tokens[c*n_ctx + j + 1]]: the last
     n_ctx-1-first = 63 predictions of the chunk; position n_ctx-1's logits
     are unused. log_softmax as llama.cpp: m = max (f32),
     s = sum(expf(l - m)) summed in double, nll = -(l_t - m - log(s)).
  4. ppl = exp(sum of all nll / count), count = n_chunk * (n_ctx - 1 - first).
The per-token nll values are saved too (in scoring order).

Determinism: fixed seeds, torch.use_deterministic_algorithms, 2 threads for
torch and llama.cpp, single-threaded tokenizer training. Library use:
paths(out_dir), gguf_path(out_dir, model, type), load_index(out_dir); its
top-level imports are the standard library's, so the main .venv can import
it (model_fixtures_llama.py, test_model_fixtures.py).
"""
# tessel-venv: .venv-torch2
import argparse
import contextlib
import hashlib
import importlib
import json
import logging
import os
import runpy
import shutil
import subprocess
import sys
import time

VERSION = "issue14-v1"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.realpath(os.path.join(HERE, "..", ".."))
LLAMA_CPP_VERSION = "0.3.36"  # scripts/deps/pypi.txt; scripts/setup --torch2 extracts it

VOCAB_SIZE = 1000
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
PROMPT_TEXT = "Copyright (C) 2007 Free Software Foundation, Inc. Everyone is permitted"
GENERATE_TEXT = "The licensor grants you"
GENERATE_NEW = 32
PPL_CTX = 128
PPL_CHARS = 1750  # about 600 tokens of PERPLEXITY_SOURCE

MODELS = ("llama", "qwen2", "qwen3")
HF_DIRS = MODELS + ("qwen3-sharded", "qwen3-bf16")
SEEDS = {"llama": 1, "qwen2": 2, "qwen3": 3}
CONVERTED = ("f32", "f16", "bf16", "q8_0")  # convert_hf_to_gguf.py --outtype
QUANTIZED = ("q4_0", "q4_k_m")  # llama_model_quantize from the f32 GGUF
# No GGUF of qwen3-sharded (qwen3's tensors) nor of qwen3-bf16:
# qwen3-bf16.gguf, qwen3 converted with --outtype bf16, has its bf16
# matrices (both round to nearest even; only the 1-D norms stay f32 there).
GGUFS = {m: CONVERTED + QUANTIZED for m in MODELS}
SHARD_SIZE = "2MB"

TRAINING_FILES = ["Apache-2.0", "Artistic", "BSD", "GPL-3", "LGPL-2.1", "MPL-2.0"]
PERPLEXITY_SOURCE = "GFDL-1.3"


# ---- paths (the library part: stdlib only) --------------------------------

def paths(out_dir):
    """Where everything lies under out_dir."""
    return {
        "tokenizer": os.path.join(out_dir, "tokenizer"),
        "expected": os.path.join(out_dir, "expected"),
        "index": os.path.join(out_dir, "expected", "index.json"),
        "stamp": os.path.join(out_dir, "stamp"),
        **{name: os.path.join(out_dir, name) for name in HF_DIRS},
    }


def gguf_path(out_dir, model, gguf_type):
    return os.path.join(out_dir, f"{model}-{gguf_type}.gguf")


def load_index(out_dir):
    with open(paths(out_dir)["index"]) as f:
        return json.load(f)


def stamp():
    h = hashlib.sha256()
    for name in ("model_fixtures.py", "model_fixtures_llama.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    return f"{VERSION} {h.hexdigest()[:16]}\n"


def is_current(out_dir):
    try:
        with open(paths(out_dir)["stamp"]) as f:
            return f.read() == stamp()
    except OSError:
        return False


def license_file(name):
    return os.path.join("/usr/share/common-licenses", name)


def training_text():
    """The licence texts Debian installs (base-files); the repository's own
    Markdown where they are missing."""
    files = [license_file(n) for n in TRAINING_FILES]
    if not all(os.path.isfile(f) for f in files):
        files = sorted(os.path.join(REPO, "docs", n) for n in os.listdir(os.path.join(REPO, "docs"))
                       if n.endswith(".md"))
    parts = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            parts.append(f.read())
    return "\n".join(parts)


def perplexity_text():
    path = license_file(PERPLEXITY_SOURCE)
    if not os.path.isfile(path):
        path = os.path.join(REPO, "README.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text[:PPL_CHARS]


# ---- the tokenizer ---------------------------------------------------------

def make_tokenizer(out):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(training_text().splitlines(keepends=True), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=SPECIALS[0],
                                   eos_token=SPECIALS[0], chat_template=CHAT_TEMPLATE)
    fast.save_pretrained(out["tokenizer"])
    return fast


def copy_tokenizer(out, model_dir, add_bos):
    for name in os.listdir(out["tokenizer"]):
        shutil.copy(os.path.join(out["tokenizer"], name), model_dir)
    if add_bos:
        path = os.path.join(model_dir, "tokenizer.json")
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        bos = SPECIALS[0]
        bos_id = next(t["id"] for t in spec["added_tokens"] if t["content"] == bos)
        template = {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
        }
        spec["post_processor"] = {"type": "Sequence",
                                  "processors": [spec["post_processor"], template]}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(spec, f, ensure_ascii=False, indent=2)


# ---- the models ------------------------------------------------------------

def config(name, vocab, bos_id, eos_id):
    import transformers
    common = dict(vocab_size=vocab, hidden_size=256, intermediate_size=512,
                  num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  head_dim=64, max_position_embeddings=256, bos_token_id=bos_id,
                  eos_token_id=eos_id, pad_token_id=None, dtype="float32")
    if name == "llama":
        return transformers.LlamaForCausalLM, transformers.LlamaConfig(
            **common, rms_norm_eps=1e-5, tie_word_embeddings=False,
            rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 64})
    if name == "qwen2":
        return transformers.Qwen2ForCausalLM, transformers.Qwen2Config(
            **common, rms_norm_eps=1e-6, tie_word_embeddings=True,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    return transformers.Qwen3ForCausalLM, transformers.Qwen3Config(
        **common, rms_norm_eps=1e-6, tie_word_embeddings=True, attention_bias=False,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})


def make_model(name, vocab, bos_id, eos_id):
    import torch
    cls, cfg = config(name, vocab, bos_id, eos_id)
    torch.manual_seed(SEEDS[name])
    model = cls(cfg).to(torch.float32)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith(".bias"):
                p.copy_(torch.randn_like(p) * 0.5)
            elif p.dim() == 1:  # RMSNorm weights
                spread = 0.2 if pname.endswith(("q_norm.weight", "k_norm.weight")) else 0.1
                p.copy_(1.0 + spread * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) * 0.1)
    return model.eval()


def load_hf(model_dir):
    import torch
    from transformers import AutoModelForCausalLM
    # use_kernels=False: transformers 5.25 otherwise swaps in Hub kernels (and
    # fails without the `kernels` package); the reference is the eager modules.
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                 attn_implementation="eager", use_kernels=False)
    return model.eval()


# ---- llama.cpp's converter -------------------------------------------------

def llama_cpp_dir(arg):
    return arg or os.path.join(REPO, ".cache", "llama.cpp", LLAMA_CPP_VERSION)


@contextlib.contextmanager
def converter(src):
    """convert_hf_to_gguf.py's main(), importable in this process. The
    freshly trained BPE's pre-tokenizer hash is unknown to llama.cpp's table,
    which raises NotImplementedError: it is the GPT-2 regex (ByteLevel with
    use_regex), so an unknown hash maps to "gpt-2". Nothing else changes,
    and the vendored files stay as the sdist has them."""
    script = os.path.join(src, "convert_hf_to_gguf.py")
    if not os.path.isfile(script):
        raise SystemExit(f"model_fixtures: no {script}: run scripts/setup --torch2")
    saved_path = list(sys.path)
    sys.path[:0] = [src, os.path.join(src, "gguf-py")]
    try:
        # The sdist's own package, on sys.path only from here on (so not a
        # plain import, which check-dependencies would look for in the venv).
        TextModel = importlib.import_module("conversion.base").TextModel
        known = TextModel.get_vocab_base_pre

        def get_vocab_base_pre(self, tokenizer):
            previous = logging.root.manager.disable
            logging.disable(logging.CRITICAL)  # its banner about the unknown hash
            try:
                return known(self, tokenizer)
            except NotImplementedError:
                return "gpt-2"
            finally:
                logging.disable(previous)

        TextModel.get_vocab_base_pre = get_vocab_base_pre

        def convert(model_dir, outfile, outtype):
            argv = sys.argv
            sys.argv = [script, model_dir, "--outfile", outfile, "--outtype", outtype]
            logging.disable(logging.WARNING)  # progress, and "Unknown RoPE type: default"
            try:
                runpy.run_path(script, run_name="__main__")
            finally:
                sys.argv = argv
                logging.disable(logging.NOTSET)
        yield convert
    finally:
        sys.path[:] = saved_path


# ---- reference outputs -----------------------------------------------------

def save_npy(out, name, array):
    import numpy as np
    rel = os.path.join("expected", name)
    np.save(os.path.join(out["root"], rel), np.ascontiguousarray(array))
    return rel


def nll_llama_cpp_rule(logits, targets):
    """-log_softmax(logits)[target] per row, as perplexity.cpp computes it."""
    import numpy as np
    logits = np.asarray(logits, dtype=np.float32)
    m = logits.max(axis=1, keepdims=True)
    s = np.exp(logits - m, dtype=np.float32).astype(np.float64).sum(axis=1)
    lt = logits[np.arange(len(targets)), targets].astype(np.float64)
    return -(lt - m[:, 0].astype(np.float64) - np.log(s))


def perplexity(tokens, n_ctx, bos_id, logits_of):
    """The rule of the module docstring; logits_of(chunk ids) -> [n_ctx, vocab]."""
    import numpy as np
    n_chunk = len(tokens) // n_ctx
    assert len(tokens) >= 2 * n_ctx, (len(tokens), n_ctx)
    first = n_ctx // 2
    nll = []
    for c in range(n_chunk):
        chunk = list(tokens[c * n_ctx:(c + 1) * n_ctx])
        if bos_id is not None:
            chunk[0] = bos_id
        logits = logits_of(chunk)
        targets = tokens[c * n_ctx + first + 1:(c + 1) * n_ctx]
        nll.append(nll_llama_cpp_rule(logits[first:n_ctx - 1], targets))
    nll = np.concatenate(nll)
    return float(np.exp(nll.sum() / len(nll))), nll


def transformers_outputs(out, index, ppl_text, bos_id):
    """Token ids come from the dir's tokenizer.json through the `tokenizers`
    package (with its post-processor: llama's adds BOS). Not from
    AutoTokenizer: for a config.json of model_type qwen2, transformers 5.25
    loads Qwen2Tokenizer whatever tokenizer_config.json declares, and that
    class replaces the file's pre-tokenizer with Qwen2's regex (digits one
    by one), so it encodes differently from tokenizer.json and from
    llama.cpp."""
    import numpy as np
    import tokenizers
    import torch
    for name in HF_DIRS:
        d = out[name]
        tok = tokenizers.Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        model = load_hf(d)
        ids = tok.encode(PROMPT_TEXT).ids
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].float().numpy()
        add_bos = name == "llama"
        assert (ids[0] == bos_id) == add_bos, (name, ids)
        entry = index["models"].setdefault(name, {})
        entry.update({
            "hf_dir": name,
            "add_bos": add_bos,
            "bos_id": bos_id, "eos_id": bos_id,
            "prompt_ids": ids,
            "transformers_logits": save_npy(out, f"{name}.transformers.logits.npy", logits),
        })
        if name in MODELS:
            gen_ids = tok.encode(GENERATE_TEXT).ids
            with torch.no_grad():
                res = model.generate(
                    torch.tensor([gen_ids]), attention_mask=torch.ones(1, len(gen_ids),
                                                                       dtype=torch.long),
                    max_new_tokens=GENERATE_NEW, do_sample=False, eos_token_id=None,
                    pad_token_id=bos_id, return_dict_in_generate=True,
                    output_logits=True)
            new = res.sequences[0, len(gen_ids):].tolist()
            assert len(new) == GENERATE_NEW, new
            top2 = [torch.topk(step[0].float(), 2).values for step in res.logits]
            entry["generate"] = {"prompt_ids": gen_ids, "new_ids": new,
                                 "top2_gaps": [float(v[0] - v[1]) for v in top2]}
        ppl_ids = tok.encode(ppl_text).ids
        bos = bos_id if add_bos else None

        def logits_of(chunk):
            with torch.no_grad():
                return model(torch.tensor([chunk])).logits[0].float().numpy()
        value, nll = perplexity(ppl_ids, PPL_CTX, bos, logits_of)
        entry["transformers_perplexity"] = {
            "ppl": value, "n_tokens": len(ppl_ids),
            "ids": save_npy(out, f"{name}.perplexity_ids.npy", np.array(ppl_ids, np.int32)),
            "nll": save_npy(out, f"{name}.transformers.nll.npy", nll.astype(np.float64))}


# ---- main ------------------------------------------------------------------

def timed(label, timings):
    @contextlib.contextmanager
    def block():
        t = time.perf_counter()
        yield
        timings[label] = round(time.perf_counter() - t, 2)
        print(f"model_fixtures: {label} {timings[label]:.1f} s", flush=True)
    return block()


def make(out_dir, llama_python, llama_src):
    import numpy as np
    import tokenizers
    import torch
    import transformers

    torch.manual_seed(0)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    out = paths(out_dir)
    out["root"] = out_dir
    os.makedirs(out["expected"])
    timings = {}
    ppl_text = perplexity_text()
    with open(os.path.join(out["expected"], "perplexity.txt"), "w", encoding="utf-8") as f:
        f.write(ppl_text)

    with timed("tokenizer", timings):
        tok = make_tokenizer(out)
    vocab = len(tok)
    bos_id = tok.convert_tokens_to_ids(SPECIALS[0])
    with timed("models", timings):
        for name in MODELS:
            model = make_model(name, vocab, bos_id, bos_id)
            model.save_pretrained(out[name])
            copy_tokenizer(out, out[name], add_bos=name == "llama")
            if name == "qwen3":
                model.save_pretrained(out["qwen3-sharded"], max_shard_size=SHARD_SIZE)
                copy_tokenizer(out, out["qwen3-sharded"], add_bos=False)
                model.to(torch.bfloat16).save_pretrained(out["qwen3-bf16"])
                copy_tokenizer(out, out["qwen3-bf16"], add_bos=False)
        shards = [n for n in os.listdir(out["qwen3-sharded"]) if n.endswith(".safetensors")]
        assert len(shards) >= 2 and os.path.isfile(
            os.path.join(out["qwen3-sharded"], "model.safetensors.index.json")), shards

    with timed("convert", timings), converter(llama_cpp_dir(llama_src)) as convert:
        for name, types in GGUFS.items():
            for t in types:
                if t in CONVERTED:
                    convert(out[name], gguf_path(out_dir, name, t), t)

    index = {
        "version": VERSION,
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "tokenizers": tokenizers.__version__, "numpy": np.__version__,
                     "llama_cpp_python": LLAMA_CPP_VERSION},
        "vocab_size": vocab,
        "prompt_text": PROMPT_TEXT,
        "generate_text": GENERATE_TEXT,
        "perplexity": {"text": "expected/perplexity.txt", "n_ctx": PPL_CTX,
                       "rule": "llama.cpp perplexity.cpp; see model_fixtures.py's docstring"},
        "transformers": {"dtype": "float32", "attn_implementation": "eager", "threads": 2,
                         "bf16_dir": "bf16 weights upcast to float32, computed in float32"},
        "llama_cpp": {"type_k": "f32", "type_v": "f32", "n_threads": 2, "n_ctx": 256,
                      "quantized_from": "f32"},
        "models": {},
        "ggufs": {},
    }
    with timed("transformers", timings):
        transformers_outputs(out, index, ppl_text, bos_id)
    for name, types in GGUFS.items():
        for t in types:
            index["ggufs"][f"{name}-{t}"] = {
                "model": name, "type": t, "file": os.path.basename(gguf_path(out_dir, name, t)),
                "made_by": "convert_hf_to_gguf.py" if t in CONVERTED else "llama_model_quantize"}
    with open(out["index"], "w") as f:
        json.dump(index, f, indent=1)

    # llama.cpp runs in the main venv (llama-cpp-python is built there):
    # it quantises, then adds its logits and perplexities to the index.
    with timed("llama.cpp", timings):
        subprocess.run([llama_python, os.path.join(HERE, "model_fixtures_llama.py"), out_dir],
                       check=True)
    index = load_index(out_dir)
    index["timings_s"] = timings
    with open(out["index"], "w") as f:
        json.dump(index, f, indent=1)
    with open(out["stamp"], "w") as f:
        f.write(stamp())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("out_dir")
    ap.add_argument("--llama-python", default=os.path.join(REPO, ".venv", "bin", "python"),
                    help="the python with llama-cpp-python (default: the project's .venv)")
    ap.add_argument("--llama-cpp", default=None,
                    help="the extracted llama.cpp sources (default: .cache/llama.cpp/VERSION)")
    ap.add_argument("--force", action="store_true", help="remake even when the stamp matches")
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out_dir)
    os.environ["RAYON_NUM_THREADS"] = "1"  # tokenizers' trainer: one thread, one order
    os.environ["TQDM_DISABLE"] = "1"  # the converter's progress bars (read at tqdm's import)
    if not args.force and is_current(out_dir):
        print(f"model_fixtures: {out_dir} is up to date")
        return 0
    t = time.perf_counter()
    make(out_dir, args.llama_python, args.llama_cpp)
    print(f"model_fixtures: made {out_dir} in {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`tessel merge` against mergekit 0.1.5 itself (run as `mergekit-yaml`).

Run with .venv-torch2's python (mergekit, transformers, torch 2):

    .venv-torch2/bin/python tests/oracle/test_merge.py --tessel build/tools/cli/tessel \
        --fixtures build/model_fixtures

Models: tiny random Qwen3 (tied head) and Llama (untied) checkpoints made by
transformers (from_config under torch.manual_seed, save_pretrained, f32),
each a base and three "fine-tunes" (the base plus seeded N(0, 0.02) noise),
with the model fixtures' tokenizer (model_fixtures.py).

Deterministic methods (linear, task_arithmetic, slerp, nuslerp, ties,
breadcrumbs, breadcrumbs_ties, model_stock, passthrough): for several
configs each, with gradients over layers, filters, slices and per-model
parameters, every output tensor equals mergekit's within 1e-6 of the
tensor's largest magnitude (both in f32: `dtype: float32`), the names and
shapes are the same, and config.json says the same layer count. A merge
whose inputs are GGUF files made by llama.cpp's converter (f32 for llama,
whose q/k rows the converter interleaves; q8_0 for qwen3) equals mergekit's
merge of the HF originals (f32) or of the q8_0 values dequantised by
gguf-py (q8_0). A GGUF output equals llama.cpp's converter run on
mergekit's output.

Randomised methods (dare_linear, dare_ties, della, della_linear): tessel's
mask of each model is read back from merges in which the other models are
replaced by the base (their deltas vanish); the kept fraction lies within
5 binomial standard deviations of the density (della: of its mean keep
probability), and mergekit's own merge function (its TIES/DARE/DELLA code,
with torch.bernoulli made to return those masks) gives tessel's output
within 1e-6. The same --seed gives the same bytes on 1 and 2 threads;
another seed another mask.

Bad input: density outside (0, 1], weights summing to zero with normalize,
t outside [0, 1], a model path that does not exist, the output inside an
input's directory, an unknown key, a NaN in an input tensor (E2401 naming
the tensor and model): each its error code, and nothing written."""
# tessel-venv: .venv-torch2
import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_fixtures as mf  # noqa: E402

FAILURES = []
CHECKS = [0]


def check(ok, what):
    CHECKS[0] += 1
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


# ---- models ----------------------------------------------------------------

ARCHS = {
    "qwen3": dict(model_type="qwen3", tie_word_embeddings=True, head_dim=16),
    "llama": dict(model_type="llama", tie_word_embeddings=False),
}


def make_family(root, arch, tokenizer_dir, vocab):
    """A base and three fine-tunes of one architecture."""
    from transformers import AutoConfig, AutoModelForCausalLM
    kw = dict(ARCHS[arch])
    model_type = kw.pop("model_type")
    config = AutoConfig.for_model(
        model_type, vocab_size=vocab, hidden_size=64, intermediate_size=96,
        num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=128, rms_norm_eps=1e-6, bos_token_id=0,
        eos_token_id=0, **kw)
    torch.manual_seed(100 + len(arch))
    base = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with torch.no_grad():
        for name, p in base.named_parameters():
            if p.dim() == 1:
                p.copy_(1 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))
    dirs = []
    for k in range(4):
        d = os.path.join(root, f"{arch}-{k}")
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(base.state_dict())
        if k:
            torch.manual_seed(1000 * k + len(arch))
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(0.02 * torch.randn_like(p))
        model.save_pretrained(d)
        for f in os.listdir(tokenizer_dir):
            shutil.copy(os.path.join(tokenizer_dir, f), d)
        dirs.append(d)
    return dirs


def hf_tensors(d):
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".safetensors"):
            out.update(load_file(os.path.join(d, f)))
    return out


# ---- running both ----------------------------------------------------------

class Runner:
    def __init__(self, tessel, work):
        self.tessel = tessel
        self.work = work
        self.n = 0
        self.mergekit_yaml = os.path.join(os.path.dirname(sys.executable), "mergekit-yaml")

    def config(self, text):
        self.n += 1
        path = os.path.join(self.work, f"config-{self.n}.yml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def tessel_merge(self, config, out, *extra, expect_ok=True):
        r = subprocess.run([self.tessel, "merge", config, out, "--json", *extra],
                           capture_output=True, text=True)
        if expect_ok and r.returncode != 0:
            raise SystemExit(f"tessel merge {config} failed:\n{r.stdout}\n{r.stderr}")
        return r

    def mergekit(self, config, out, seed=None):
        cmd = [self.mergekit_yaml, config, out, "--no-write-model-card", "--quiet"]
        if seed is not None:
            cmd += ["--random-seed", str(seed)]
        env = dict(os.environ, OMP_NUM_THREADS="2", TRANSFORMERS_VERBOSITY="error")
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise SystemExit(f"mergekit-yaml {config} failed:\n{r.stdout}\n{r.stderr}")


def compare_dirs(label, ours_dir, ref_dir, tol=1e-6):
    ours, ref = hf_tensors(ours_dir), hf_tensors(ref_dir)
    check(sorted(ours) == sorted(ref),
          f"{label}: tensor names differ: {sorted(set(ours) ^ set(ref))[:6]}")
    worst = 0.0
    for name in sorted(set(ours) & set(ref)):
        a, b = ours[name].astype(np.float64), ref[name].astype(np.float64)
        if a.shape != b.shape:
            check(False, f"{label}: {name} shape {a.shape} vs {b.shape}")
            continue
        scale = max(np.abs(b).max(), 1e-30)
        err = np.abs(a - b).max() / scale
        worst = max(worst, err)
        check(err <= tol, f"{label}: {name} differs by {err:.3g} of its scale")
    with open(os.path.join(ours_dir, "config.json")) as f:
        oc = json.load(f)
    with open(os.path.join(ref_dir, "config.json")) as f:
        rc = json.load(f)
    check(oc["num_hidden_layers"] == rc["num_hidden_layers"],
          f"{label}: num_hidden_layers {oc['num_hidden_layers']} vs {rc['num_hidden_layers']}")
    print(f"  {label}: {len(ref)} tensors, worst {worst:.2e}", flush=True)
    return worst


# ---- the deterministic methods ---------------------------------------------

def deterministic_configs(q, l):
    """(label, yaml) pairs; q and l are the qwen3 and llama families."""
    b, m1, m2, m3 = q
    lb, l1, l2, _ = l
    return [
        ("linear", f"""
models:
  - model: {m1}
    parameters: {{weight: 0.6}}
  - model: {m2}
    parameters: {{weight: 0.4}}
merge_method: linear
dtype: float32
"""),
        ("linear filters, gradient, no normalize", f"""
models:
  - model: {m1}
    parameters:
      weight:
        - filter: mlp
          value: [0.2, 0.9]
        - value: 0.6
  - model: {m2}
    parameters:
      weight: [0.8, 0.1, 0.3]
merge_method: linear
parameters:
  normalize: false
dtype: float32
"""),
        ("task_arithmetic", f"""
models:
  - model: {m1}
    parameters: {{weight: 0.5}}
  - model: {m2}
    parameters: {{weight: [0.3, 0.9]}}
merge_method: task_arithmetic
base_model: {b}
parameters:
  lambda: 0.8
dtype: float32
"""),
        ("slerp gradients and filters (slices)", f"""
slices:
  - sources:
      - model: {b}
        layer_range: [0, 3]
      - model: {m1}
        layer_range: [0, 3]
merge_method: slerp
base_model: {b}
parameters:
  t:
    - filter: self_attn
      value: [0, 0.5, 0.3, 0.7, 1]
    - filter: mlp
      value: [1, 0.5, 0.7, 0.3, 0]
    - value: 0.5
dtype: float32
"""),
        ("slerp models", f"""
models:
  - model: {b}
  - model: {m2}
merge_method: slerp
base_model: {b}
parameters:
  t: 0.3
dtype: float32
"""),
        ("nuslerp", f"""
models:
  - model: {m1}
    parameters: {{weight: 1.0}}
  - model: {m2}
    parameters: {{weight: 2.0}}
merge_method: nuslerp
dtype: float32
"""),
        ("nuslerp base row-wise", f"""
models:
  - model: {m1}
    parameters: {{weight: 0.7}}
  - model: {m2}
    parameters: {{weight: 0.4}}
merge_method: nuslerp
base_model: {b}
parameters:
  nuslerp_flatten: false
  nuslerp_row_wise: true
dtype: float32
"""),
        ("ties", f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 0.7}}
  - model: {m2}
    parameters: {{density: 0.7, weight: 0.3}}
  - model: {m3}
    parameters: {{density: [0.3, 0.9], weight: 0.5}}
merge_method: ties
base_model: {b}
dtype: float32
"""),
        ("ties no normalize, int8 mask", f"""
models:
  - model: {m1}
    parameters: {{density: 0.6, weight: 1.0}}
  - model: {m2}
    parameters: {{density: 0.6, weight: -0.5}}
merge_method: ties
base_model: {b}
parameters:
  normalize: false
  int8_mask: true
dtype: float32
"""),
        ("breadcrumbs", f"""
models:
  - model: {m1}
    parameters: {{density: 0.8, gamma: 0.05, weight: 0.6}}
  - model: {m2}
    parameters: {{density: 0.7, weight: 0.4}}
merge_method: breadcrumbs
base_model: {b}
dtype: float32
"""),
        ("breadcrumbs_ties", f"""
models:
  - model: {m1}
    parameters: {{density: 0.8, gamma: 0.02, weight: 0.6}}
  - model: {m2}
    parameters: {{density: 0.9, gamma: 0.1, weight: 0.4}}
merge_method: breadcrumbs_ties
base_model: {b}
parameters:
  normalize: true
dtype: float32
"""),
        ("model_stock", f"""
models:
  - model: {m1}
  - model: {m2}
  - model: {m3}
merge_method: model_stock
base_model: {b}
dtype: float32
"""),
        ("model_stock filter_wise", f"""
models:
  - model: {b}
  - model: {m1}
  - model: {m2}
merge_method: model_stock
base_model: {b}
parameters:
  filter_wise: true
dtype: float32
"""),
        ("passthrough frankenmerge (llama: mergekit cannot write qwen3's layer_types)", f"""
slices:
  - sources:
      - model: {lb}
        layer_range: [0, 2]
  - sources:
      - model: {l1}
        layer_range: [1, 3]
        parameters:
          scale:
            - filter: o_proj
              value: 0.5
            - value: 1.0
merge_method: passthrough
dtype: float32
"""),
        ("llama linear (untied head)", f"""
models:
  - model: {l1}
    parameters: {{weight: 0.25}}
  - model: {l2}
    parameters: {{weight: 0.75}}
merge_method: linear
dtype: float32
"""),
        ("llama ties", f"""
models:
  - model: {l1}
    parameters: {{density: 0.5, weight: 0.5}}
  - model: {l2}
    parameters: {{density: 0.5, weight: 0.5}}
merge_method: ties
base_model: {lb}
dtype: float32
"""),
    ]


def test_deterministic(run, q, l):
    b, m1 = q[0], q[1]
    for label, text in deterministic_configs(q, l):
        cfg = run.config(text)
        ours, ref = os.path.join(run.work, f"t{run.n}"), os.path.join(run.work, f"m{run.n}")
        run.tessel_merge(cfg, ours)
        run.mergekit(cfg, ref)
        compare_dirs(label, ours, ref)
    # qwen3's config.json lists a type per layer; a frankenmerge must keep
    # that list as long as the layers (mergekit 0.1.5 fails to save it).
    from transformers import AutoConfig
    cfg = run.config(f"""
slices:
  - sources:
      - model: {b}
        layer_range: [0, 3]
  - sources:
      - model: {m1}
        layer_range: [1, 3]
merge_method: passthrough
""")
    ours = os.path.join(run.work, f"t{run.n}")
    run.tessel_merge(cfg, ours)
    c = AutoConfig.from_pretrained(ours)
    check(c.num_hidden_layers == 5 and len(c.layer_types) == 5,
          f"qwen3 frankenmerge config: {c.num_hidden_layers} layers, layer_types {c.layer_types}")


# ---- GGUF inputs and outputs -----------------------------------------------

def test_gguf(run, q, l, llama_src):
    with mf.converter(llama_src) as convert:
        # The converter's own gguf-py, on sys.path only in here (so not a
        # plain import, which check-dependencies would look for in the venv).
        gguf = importlib.import_module("gguf")
        # llama f32: the converter interleaves q/k rows; tessel must undo it.
        l1_gguf = os.path.join(run.work, "llama-1.gguf")
        convert(l[1], l1_gguf, "f32")
        q1_q8 = os.path.join(run.work, "qwen3-1-q8_0.gguf")
        convert(q[1], q1_q8, "q8_0")

        text = """
models:
  - model: {a}
    parameters: {{density: 0.5, weight: 0.6}}
  - model: {b}
    parameters: {{density: 0.5, weight: 0.4}}
merge_method: ties
base_model: {base}
dtype: float32
"""
        cfg_hf = run.config(text.format(a=l[1], b=l[2], base=l[0]))
        cfg_mixed = run.config(text.format(a=l1_gguf, b=l[2], base=l[0]))
        ref = os.path.join(run.work, f"m{run.n}")
        ours = os.path.join(run.work, f"t{run.n}")
        run.mergekit(cfg_hf, ref)
        run.tessel_merge(cfg_mixed, ours)
        compare_dirs("llama f32 GGUF + HF inputs", ours, ref)

        # q8_0: mergekit merges the values gguf-py dequantises.
        deq_dir = os.path.join(run.work, "qwen3-1-dequantised")
        shutil.copytree(q[1], deq_dir)
        reader = gguf.GGUFReader(q1_q8)
        names = hf_tensors(q[1])
        deq = {}
        for t in reader.tensors:
            hf = hf_name(t.name, names)
            deq[hf] = gguf.quants.dequantize(t.data, t.tensor_type).reshape(
                names[hf].shape).astype(np.float32)
        for f in os.listdir(deq_dir):
            if f.endswith(".safetensors"):
                os.remove(os.path.join(deq_dir, f))
        save_file(deq, os.path.join(deq_dir, "model.safetensors"), metadata={"format": "pt"})
        cfg_ref = run.config(text.format(a=deq_dir, b=q[2], base=q[0]))
        cfg_q8 = run.config(text.format(a=q1_q8, b=q[2], base=q[0]))
        ref = os.path.join(run.work, f"m{run.n}")
        ours = os.path.join(run.work, f"t{run.n}")
        run.mergekit(cfg_ref, ref)
        run.tessel_merge(cfg_q8, ours)
        compare_dirs("qwen3 q8_0 GGUF + HF inputs", ours, ref)

        # A GGUF output is the converter's file of mergekit's output.
        cfg = run.config(text.format(a=l[1], b=l[2], base=l[0]))
        ours_gguf = os.path.join(run.work, "merged-llama.gguf")
        ref_dir = os.path.join(run.work, f"m{run.n}")
        ref_gguf = os.path.join(run.work, "merged-llama-ref.gguf")
        run.tessel_merge(cfg, ours_gguf)
        run.mergekit(cfg, ref_dir)
        convert(ref_dir, ref_gguf, "f32")
    ours_reader, ref_reader = gguf.GGUFReader(ours_gguf), gguf.GGUFReader(ref_gguf)
    # The metadata too, but general.name (from the file or directory name).
    mine = {k: f.contents() for k, f in ours_reader.fields.items() if not k.startswith("GGUF.")}
    theirs = {k: f.contents() for k, f in ref_reader.fields.items() if not k.startswith("GGUF.")}
    for key in sorted(set(mine) | set(theirs)):
        if key == "general.name":
            continue
        check(mine.get(key) == theirs.get(key),
              f"GGUF output metadata {key}: {str(mine.get(key))[:60]} vs {str(theirs.get(key))[:60]}")
    a = {t.name: t for t in ours_reader.tensors}
    b = {t.name: t for t in ref_reader.tensors}
    check(sorted(a) == sorted(b), f"GGUF output tensor names: {sorted(set(a) ^ set(b))}")
    worst = 0.0
    for name in sorted(set(a) & set(b)):
        check(a[name].tensor_type == b[name].tensor_type, f"GGUF output {name} type")
        x = np.asarray(a[name].data, dtype=np.float64)
        y = np.asarray(b[name].data, dtype=np.float64)
        if x.shape != y.shape:
            check(False, f"GGUF output {name} shape {x.shape} vs {y.shape}")
            continue
        err = np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)
        worst = max(worst, err)
        check(err <= 1e-6, f"GGUF output {name} differs by {err:.3g}")
    print(f"  GGUF output vs converter(mergekit): {len(b)} tensors, worst {worst:.2e}")


def hf_name(gguf_name, hf_names):
    """The HF name of a qwen3 GGUF tensor (the fixtures' map)."""
    table = {
        "token_embd.weight": "model.embed_tokens.weight",
        "output_norm.weight": "model.norm.weight",
        "output.weight": "lm_head.weight",
    }
    if gguf_name in table:
        return table[gguf_name]
    parts = gguf_name.split(".")
    layer, rest = parts[1], ".".join(parts[2:])
    sub = {
        "attn_norm.weight": "input_layernorm.weight",
        "ffn_norm.weight": "post_attention_layernorm.weight",
        "attn_q.weight": "self_attn.q_proj.weight",
        "attn_k.weight": "self_attn.k_proj.weight",
        "attn_v.weight": "self_attn.v_proj.weight",
        "attn_output.weight": "self_attn.o_proj.weight",
        "attn_q_norm.weight": "self_attn.q_norm.weight",
        "attn_k_norm.weight": "self_attn.k_norm.weight",
        "ffn_gate.weight": "mlp.gate_proj.weight",
        "ffn_up.weight": "mlp.up_proj.weight",
        "ffn_down.weight": "mlp.down_proj.weight",
    }[rest]
    name = f"model.layers.{layer}.{sub}"
    assert name in hf_names, name
    return name


# ---- randomised methods ----------------------------------------------------

def test_randomised(run, q):
    b, m1, m2, _ = q
    base = hf_tensors(b)
    for method, extra in [("dare_ties", ""), ("dare_linear", ""),
                          ("della", "epsilon: 0.1, "), ("della_linear", "epsilon: 0.05, ")]:
        text = """
models:
  - model: {a}
    parameters: {{density: 0.4, {extra}weight: 0.7}}
  - model: {c}
    parameters: {{density: 0.6, {extra}weight: 0.5}}
merge_method: {method}
base_model: {base}
dtype: float32
"""
        outs = {}
        for key, (a, c) in {"both": (m1, m2), "first": (m1, b), "second": (b, m2)}.items():
            # The base twice would be one input: a copy under another name
            # stands for "no delta" and keeps the model's place.
            if a == b or c == b:
                alias = os.path.join(run.work, "base-copy")
                if not os.path.exists(alias):
                    shutil.copytree(b, alias)
                a = alias if a == b else a
                c = alias if c == b else c
            cfg = run.config(text.format(a=a, c=c, base=b, method=method, extra=extra))
            out = os.path.join(run.work, f"t{run.n}")
            run.tessel_merge(cfg, out, "--seed", "7")
            outs[key] = hf_tensors(out)
        d1, d2 = hf_tensors(m1), hf_tensors(m2)
        import mergekit.merge_methods.registry as registry
        from mergekit.merge_methods.base import TensorGroup
        merge = registry.get(method)
        worst, kept, total, expected = 0.0, [0, 0], [0, 0], [0.0, 0.0]
        for name in sorted(base):
            if base[name].ndim < 2:
                continue
            masks = []
            for k, (key, src) in enumerate([("first", d1), ("second", d2)]):
                delta = src[name] - base[name]
                m = (outs[key][name] != base[name]) | (delta == 0)
                masks.append(torch.from_numpy(m.astype(np.float32)))
                kept[k] += int(m.sum())
                total[k] += m.size
            density = [0.4, 0.6]
            for k in range(2):
                expected[k] += density[k] * masks[k].numel()
            queue = list(masks)
            real = torch.bernoulli

            def fake(p, *args, **kwargs):
                return queue.pop(0).to(p.dtype).reshape(p.shape)
            torch.bernoulli = fake
            try:
                group = TensorGroup.from_tensors(
                    [torch.from_numpy(base[name]), torch.from_numpy(d1[name]),
                     torch.from_numpy(d2[name])], base_index=0, ids=["b", "a", "c"],
                    name=name)
                params = {"weight": {"a": 0.7, "c": 0.5}, "density": {"a": 0.4, "c": 0.6}}
                if "della" in method:
                    eps = 0.1 if method == "della" else 0.05
                    params["epsilon"] = {"a": eps, "c": eps}
                ref = merge([group], parameters=params)[0].numpy()
            finally:
                torch.bernoulli = real
            got = outs["both"][name]
            err = np.abs(got.astype(np.float64) - ref).max() / np.abs(ref).max()
            worst = max(worst, err)
            check(err <= 1e-6, f"{method}: {name} with mergekit's code on tessel's masks: {err:.3g}")
        for k in range(2):
            n, p = total[k], expected[k] / total[k]
            sigma = (n * p * (1 - p)) ** 0.5
            check(abs(kept[k] - n * p) <= 5 * sigma,
                  f"{method}: model {k} kept {kept[k]} of {n}, expected {n * p:.0f} +- {5 * sigma:.0f}")
        print(f"  {method}: masks kept {kept[0] / total[0]:.3f} and {kept[1] / total[1]:.3f} "
              f"(density 0.4, 0.6); mergekit on the same masks: worst {worst:.2e}")

    # Determinism: threads and seeds.
    cfg = run.config(f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 0.5}}
  - model: {m2}
    parameters: {{density: 0.5, weight: 0.5}}
merge_method: dare_ties
base_model: {b}
dtype: float32
""")
    files = []
    for extra in (["--threads", "1"], ["--threads", "2"], ["--seed", "1"]):
        out = os.path.join(run.work, f"det-{len(files)}")
        run.tessel_merge(cfg, out, *extra)
        with open(os.path.join(out, "model.safetensors"), "rb") as f:
            files.append(f.read())
    check(files[0] == files[1], "dare_ties: 1 and 2 threads give different bytes")
    check(files[0] != files[2], "dare_ties: seeds 0 and 1 give the same bytes")


# ---- bad input ---------------------------------------------------------------

def test_bad_input(run, q):
    b, m1, m2, _ = q
    nan_dir = os.path.join(run.work, "nan-model")
    shutil.copytree(m1, nan_dir)
    t = hf_tensors(nan_dir)
    victim = "model.layers.1.mlp.up_proj.weight"
    t[victim][3, 5] = np.nan
    for f in os.listdir(nan_dir):
        if f.endswith(".safetensors"):
            os.remove(os.path.join(nan_dir, f))
    save_file(t, os.path.join(nan_dir, "model.safetensors"), metadata={"format": "pt"})
    cases = [
        ("density 1.5", f"models:\n  - model: {m1}\n    parameters: {{density: 1.5, weight: 1}}\n"
                        f"merge_method: ties\nbase_model: {b}\n", "E4001", "density"),
        ("density 0", f"models:\n  - model: {m1}\n    parameters: {{density: 0, weight: 1}}\n"
                      f"merge_method: dare_ties\nbase_model: {b}\n", "E4001", "density"),
        ("zero weights", f"models:\n  - model: {m1}\n    parameters: {{weight: 1}}\n"
                         f"  - model: {m2}\n    parameters: {{weight: -1}}\n"
                         "merge_method: linear\n", "E4001", "sum to zero"),
        ("t 1.5", f"models:\n  - model: {b}\n  - model: {m1}\nmerge_method: slerp\n"
                  f"base_model: {b}\nparameters:\n  t: 1.5\n", "E4001", "outside [0, 1]"),
        ("missing model", f"models:\n  - model: {b}/nope\n    parameters: {{weight: 1}}\n"
                          "merge_method: linear\n", "E4001", "does not exist"),
        ("unknown key", f"models:\n  - model: {m1}\n    parameters: {{weight: 1}}\n"
                        "merge_method: linear\nchat_template: chatml\n", "E4001", "chat_template"),
        ("NaN input", f"models:\n  - model: {nan_dir}\n    parameters: {{weight: 1}}\n"
                      f"  - model: {m2}\n    parameters: {{weight: 1}}\n"
                      "merge_method: linear\n", "E2401", victim),
    ]
    for label, text, code, part in cases:
        cfg = run.config(text)
        out = os.path.join(run.work, f"bad-{run.n}")
        r = run.tessel_merge(cfg, out, expect_ok=False)
        check(r.returncode != 0 and code in r.stderr and part in r.stderr,
              f"bad input {label}: want {code} naming '{part}', got rc {r.returncode}: {r.stderr.strip()}")
        leftovers = [f for f in os.listdir(run.work) if f.startswith(f"bad-{run.n}") or
                     f.startswith(f".bad-{run.n}")]
        check(not leftovers, f"bad input {label}: left {leftovers}")
    # The output inside an input's directory.
    cfg = run.config(f"models:\n  - model: {m1}\n    parameters: {{weight: 1}}\n"
                     "merge_method: linear\n")
    inside = os.path.join(m1, "merged")
    r = run.tessel_merge(cfg, inside, expect_ok=False)
    check(r.returncode != 0 and "E4001" in r.stderr and not os.path.exists(inside),
          f"output inside an input: {r.stderr.strip()}")
    print(f"  bad input: {len(cases) + 1} cases")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--llama-src", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", choices=["deterministic", "randomised", "bad", "gguf"],
                    help="run one part (while working on it)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    work = tempfile.mkdtemp(prefix="tessel-merge-")
    try:
        tok = os.path.join(args.fixtures, "tokenizer")
        vocab = mf.load_index(args.fixtures)["vocab_size"]
        q = make_family(work, "qwen3", tok, vocab)
        lfam = make_family(work, "llama", tok, vocab)
        run = Runner(os.path.abspath(args.tessel), work)
        parts = {
            "deterministic": lambda: test_deterministic(run, q, lfam),
            "randomised": lambda: test_randomised(run, q),
            "bad": lambda: test_bad_input(run, q),
            "gguf": lambda: test_gguf(run, q, lfam, mf.llama_cpp_dir(args.llama_src)),
        }
        for name, part in parts.items():
            if args.only in (None, name):
                part()
    finally:
        if args.keep:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"merge: {CHECKS[0]} checks, {len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

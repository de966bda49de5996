"""Issue 15's speed targets: `tessel merge` against `mergekit-yaml` on the
same configs, in one run, same threads. Models of Qwen3-0.6B's shape
(vocab 151936, hidden 1024, 28 layers, 3072 intermediate, 16/8 heads of
128, tied) with random bf16 weights: a base and two fine-tunes (base plus
noise). For slerp (two models), ties and dare_ties (two and three
models), prints both wall times and their ratio (mergekit / tessel, > 1:
tessel is faster), and tessel's throughput — bytes of every input tensor
read plus the output written, over its wall time — as a fraction of this
machine's memory-copy bandwidth (BM_StreamCopy of bench_kernels, which
counts a copy's bytes read and written the same way).

Usage (.venv-torch2's python: mergekit and torch):
    compare_merge.py BUILD/tools/cli/tessel BUILD/bench/bench_kernels
        [--dir /tmp/tessel-merge-bench] [--rounds 2] [--methods slerp,ties,dare_ties]
The models are made once into --dir (3 x 1.2 GB). Inputs are read once
before timing, so both tools find them in the page cache; each time is the
best of --rounds. Peak resident memory of each run comes from
/usr/bin/time's maximum RSS.
"""
# tessel-venv: .venv-torch2
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import run_benchmarks  # noqa: E402

SHAPE = dict(vocab=151936, hidden=1024, layers=28, inter=3072, heads=16, kv=8, head_dim=128)


def make_models(root):
    import torch
    from safetensors.torch import save_file
    s = SHAPE
    names = {"model.embed_tokens.weight": (s["vocab"], s["hidden"]),
             "model.norm.weight": (s["hidden"],)}
    q, kv = s["heads"] * s["head_dim"], s["kv"] * s["head_dim"]
    for i in range(s["layers"]):
        p = f"model.layers.{i}."
        names.update({
            p + "input_layernorm.weight": (s["hidden"],),
            p + "post_attention_layernorm.weight": (s["hidden"],),
            p + "self_attn.q_proj.weight": (q, s["hidden"]),
            p + "self_attn.k_proj.weight": (kv, s["hidden"]),
            p + "self_attn.v_proj.weight": (kv, s["hidden"]),
            p + "self_attn.o_proj.weight": (s["hidden"], q),
            p + "self_attn.q_norm.weight": (s["head_dim"],),
            p + "self_attn.k_norm.weight": (s["head_dim"],),
            p + "mlp.gate_proj.weight": (s["inter"], s["hidden"]),
            p + "mlp.up_proj.weight": (s["inter"], s["hidden"]),
            p + "mlp.down_proj.weight": (s["hidden"], s["inter"]),
        })
    config = {
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
        "vocab_size": s["vocab"], "hidden_size": s["hidden"],
        "intermediate_size": s["inter"], "num_hidden_layers": s["layers"],
        "num_attention_heads": s["heads"], "num_key_value_heads": s["kv"],
        "head_dim": s["head_dim"], "max_position_embeddings": 40960,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "tie_word_embeddings": True,
        "hidden_act": "silu", "torch_dtype": "bfloat16", "bos_token_id": 151643,
        "eos_token_id": 151645,
    }
    dirs = []
    torch.manual_seed(0)
    base = {n: (torch.randn(shape) * (0.02 if len(shape) == 2 else 0.1) +
                (0 if len(shape) == 2 else 1)).to(torch.bfloat16)
            for n, shape in names.items()}
    for k in range(3):
        d = os.path.join(root, f"qwen3-0.6b-{k}")
        dirs.append(d)
        if os.path.exists(os.path.join(d, "model.safetensors")):
            continue
        os.makedirs(d, exist_ok=True)
        torch.manual_seed(k + 1)
        tensors = base if k == 0 else {
            n: (t.float() + 0.002 * torch.randn(t.shape)).to(torch.bfloat16)
            for n, t in base.items()}
        save_file(tensors, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=2)
    return dirs


def configs(dirs):
    b, m1, m2 = dirs
    return {
        ("slerp", 2): f"""
models:
  - model: {b}
  - model: {m1}
merge_method: slerp
base_model: {b}
parameters:
  t: [0, 0.5, 0.3, 0.7, 1]
dtype: bfloat16
""",
        ("ties", 2): f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 1.0}}
merge_method: ties
base_model: {b}
dtype: bfloat16
""",
        ("ties", 3): f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 0.5}}
  - model: {m2}
    parameters: {{density: 0.5, weight: 0.5}}
merge_method: ties
base_model: {b}
dtype: bfloat16
""",
        ("dare_ties", 2): f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 1.0}}
merge_method: dare_ties
base_model: {b}
dtype: bfloat16
""",
        ("dare_ties", 3): f"""
models:
  - model: {m1}
    parameters: {{density: 0.5, weight: 0.5}}
  - model: {m2}
    parameters: {{density: 0.5, weight: 0.5}}
merge_method: dare_ties
base_model: {b}
dtype: bfloat16
""",
    }


def timed(cmd, env=None):
    """Wall seconds and peak RSS (bytes) of one run. The disk is flushed
    first, so that neither tool pays for the other's writeback (tessel
    fsyncs its output, mergekit does not)."""
    os.sync()
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "MAXRSS %M"] + cmd, capture_output=True,
                       text=True, env=env)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    rss = int(re.findall(r"MAXRSS (\d+)", r.stderr)[-1]) * 1024
    return wall, rss, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessel")
    ap.add_argument("bench_kernels")
    ap.add_argument("--dir", default="/tmp/tessel-merge-bench")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--methods", default="slerp,ties,dare_ties")
    args = ap.parse_args()
    threads = os.cpu_count()
    os.makedirs(args.dir, exist_ok=True)
    dirs = make_models(args.dir)
    for d in dirs:  # into the page cache
        with open(os.path.join(d, "model.safetensors"), "rb") as f:
            while f.read(1 << 26):
                pass
    copy = run_benchmarks(args.bench_kernels, "BM_StreamCopy", min_time=1.0)
    copy_gbps = copy["BM_StreamCopy"]["bytes_per_second"] / 1e9
    mergekit = os.path.join(os.path.dirname(sys.executable), "mergekit-yaml")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    print(f"memory copy (BM_StreamCopy, read + written): {copy_gbps:.1f} GB/s; "
          f"{threads} threads; load average {os.getloadavg()[0]:.2f}\n")
    print("| method | models | mergekit s | tessel s | ratio | tessel GB/s (read + written) | "
          "of copy bandwidth | peak RSS mergekit / tessel |")
    print("|---|---|---|---|---|---|---|---|")
    wanted = args.methods.split(",")
    for (method, n), text in configs(dirs).items():
        if method not in wanted:
            continue
        cfg = os.path.join(args.dir, f"{method}-{n}.yml")
        with open(cfg, "w") as f:
            f.write(text)
        out_t, out_m = os.path.join(args.dir, "out-tessel"), os.path.join(args.dir, "out-mergekit")
        best_t = best_m = float("inf")
        rss_t = rss_m = 0
        moved = 0
        for _ in range(args.rounds):
            wall, rss, stdout = timed([args.tessel, "merge", cfg, out_t, "--json",
                                       "--threads", str(threads)], env)
            if wall < best_t:
                best_t, rss_t = wall, rss
                report = json.loads(stdout)
                moved = report["bytes_read"] + report["bytes_written"]
            shutil.rmtree(out_m, ignore_errors=True)
            wall, rss, _ = timed([mergekit, cfg, out_m, "--no-copy-tokenizer",
                                  "--no-write-model-card", "--quiet", "--random-seed", "0"], env)
            if wall < best_m:
                best_m, rss_m = wall, rss
        gbps = moved / best_t / 1e9
        print(f"| {method} | {n} | {best_m:.1f} | {best_t:.2f} | {best_m / best_t:.1f}x | "
              f"{gbps:.2f} | {gbps / copy_gbps:.0%} | {rss_m / 2**30:.2f} / {rss_t / 2**30:.2f} GiB |",
              flush=True)
    shutil.rmtree(os.path.join(args.dir, "out-tessel"), ignore_errors=True)
    shutil.rmtree(os.path.join(args.dir, "out-mergekit"), ignore_errors=True)


if __name__ == "__main__":
    main()

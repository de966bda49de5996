"""`tessel train` and `tessel generate` end to end, on small runs: a
resumed run reproduces the uninterrupted one bit for bit, a NaN stops
training and leaves the last checkpoint intact, text files train, progress
is plain when piped, and the checkpoint is what other tools read."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from safetensors.numpy import load_file

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(tessel, *args, expect=0):
    p = subprocess.run([tessel, *args], capture_output=True, text=True)
    if p.returncode != expect:
        print(p.stdout, p.stderr)
    check(p.returncode == expect, f"tessel {' '.join(args)} exits {expect}")
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


SMALL = ["--steps", "12", "--batch-size", "16", "--layers", "1", "--hidden", "32",
         "--heads", "2", "--kv-heads", "1", "--intermediate", "48", "--save-every", "0"]


def test_resume_is_exact(tessel, tmp):
    whole, split = os.path.join(tmp, "whole"), os.path.join(tmp, "split")
    run(tessel, "train", "--out", whole, *SMALL)
    p = run(tessel, "train", "--out", split, "--stop-after", "5", *SMALL)
    check("--resume" in p.stdout, "a stopped run says how to resume")
    state = json.load(open(os.path.join(split, "trainer_state.json")))
    check(state["step"] == 5 and state["total_steps"] == 12, "stopped at step 5 of 12")
    run(tessel, "train", "--resume", split)
    for name in ["model.safetensors", "optimizer.safetensors"]:
        check(read(os.path.join(whole, name)) == read(os.path.join(split, name)),
              f"resumed run's {name} equals the uninterrupted run's")
    # The checkpoint is the HF layout other tools read.
    weights = load_file(os.path.join(whole, "model.safetensors"))
    config = json.load(open(os.path.join(whole, "config.json")))
    check(config["model_type"] == "qwen3" and config["num_hidden_layers"] == 1,
          "config.json has HuggingFace keys")
    check("model.layers.0.self_attn.q_norm.weight" in weights and
          "model.embed_tokens.weight" in weights and "lm_head.weight" not in weights,
          "weights carry canonical names (lm_head tied)")
    ET.parse(os.path.join(whole, "loss.svg"))  # well-formed
    # tessel inspect lists the checkpoint; --stats agrees with NumPy.
    p = run(tessel, "inspect", "--stats", whole)
    row = next(l.split() for l in p.stdout.splitlines()
               if l.startswith("model.embed_tokens.weight "))
    w = weights["model.embed_tokens.weight"].astype("float64")
    end = next(i for i, tok in enumerate(row) if tok.endswith("]"))  # shape
    check(row[1] == "f32" and row[end + 1] == str(w.nbytes // 2),
          "inspect shows dtype and bytes")
    stats = [float(v) for v in row[end + 2:end + 6]]
    expect = [w.min(), w.max(), w.mean(), w.std()]
    check(all(abs(a - b) <= 1e-3 * max(1e-3, abs(b)) for a, b in zip(stats, expect)),
          f"inspect --stats matches NumPy ({stats} vs {expect})")
    described = json.loads(run(tessel, "inspect", "--json", whole).stdout)
    emb = next(t for t in described["tensors"] if t["name"] == "model.embed_tokens.weight")
    check(emb["dtype"]["base_type"] == "FLOAT32" and
          emb["shape"]["dimensions"] == list(w.shape) and
          emb["memory"]["total_bytes"] > 0 and described["metadata"]["format"] == "pt",
          "inspect --json prints descriptors")
    losses = json.load(open(os.path.join(whole, "trainer_state.json")))["losses"]
    check(len(losses) == 12, "one loss per step in trainer_state.json")
    p = run(tessel, "train", "--resume", split, "--lr", "1", expect=4)
    check("E4001" in p.stderr, "changing a fixed hyper-parameter on resume is E4001")


def test_nan_keeps_last_checkpoint(tessel, tmp):
    out = os.path.join(tmp, "nan")
    args = [a for a in SMALL if a not in ("--save-every", "0")]
    p = run(tessel, "train", "--out", out, "--lr", "1e30", "--warmup", "0",
            "--save-every", "1", *args, expect=2)
    check("E2401" in p.stderr and "intact" in p.stderr,
          "a non-finite loss stops with E2401 naming the intact checkpoint")
    state = json.load(open(os.path.join(out, "trainer_state.json")))
    check(state["step"] >= 1 and all(map(lambda v: v == v, state["losses"])),
          "the kept checkpoint holds only finite losses")
    run(tessel, "generate", "--model", out, "--prompt", "1+1=", "--max-tokens", "2")
    leftovers = [n for n in os.listdir(tmp) if "staged" in n]
    check(not leftovers, "no staged directories are left behind")


def test_text_file(tessel, tmp):
    data = os.path.join(tmp, "poem.txt")
    with open(data, "w") as f:
        f.write("the quick brown fox jumps over the lazy dog\n" * 60)
    out = os.path.join(tmp, "poem")
    p = run(tessel, "train", "--data", data, "--out", out, "--seq-len", "24",
            "--steps", "30", "--batch-size", "8", "--layers", "1", "--hidden", "32",
            "--heads", "2", "--kv-heads", "2", "--intermediate", "64")
    check("held-out loss:" in p.stdout, "a text run reports the held-out loss")
    check("\r" not in p.stderr and "30/30" in p.stderr,
          "progress is plain lines when stderr is a pipe")
    g = run(tessel, "generate", "--model", out, "--prompt", "the quick", "--json",
            "--max-tokens", "10", "--temperature", "0.8", "--top-k", "5", "--top-p",
            "0.9", "--seed", "3")
    result = json.loads(g.stdout)
    check(result["prompt"] == "the quick" and result["tokens"] == 10,
          "generate --json reports the completion")
    again = run(tessel, "generate", "--model", out, "--prompt", "the quick", "--json",
                "--max-tokens", "10", "--temperature", "0.8", "--top-k", "5",
                "--top-p", "0.9", "--seed", "3")
    check(json.loads(again.stdout)["completion"] == result["completion"],
          "the same seed samples the same text")
    tiny = os.path.join(tmp, "tiny.txt")
    with open(tiny, "w") as f:
        f.write("abc")
    p = run(tessel, "train", "--data", tiny, "--out", os.path.join(tmp, "tiny"),
            expect=4)
    check("E4001" in p.stderr, "a too-small data file is E4001")
    p = run(tessel, "generate", "--model", out, "--prompt", "x" * 40, expect=2)
    check("E2302" in p.stderr, "a prompt past max_position_embeddings is E2302")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tessel")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        test_resume_is_exact(args.tessel, tmp)
        test_nan_keeps_last_checkpoint(args.tessel, tmp)
        test_text_file(args.tessel, tmp)
    print("train/generate:", "ok" if not FAILURES else f"{len(FAILURES)} failures")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()

"""tessel's decoder against a PyTorch implementation of the same
architecture (torch_decoder.py) on the same weights, read from the
safetensors file tessel wrote: logits and every parameter gradient of a
cross-entropy loss to a max relative error of 1e-4 (f32), and one AdamW step
from the same gradients to 1e-6 absolute (torch.optim.AdamW).

The relative error is max|a - b| / max|b| per tensor: f32 rounding in
differently ordered sums (GEMM blocking, attention tiles) gives ~1e-6 of
the tensor's scale, far below the bound, while any wrong formula gives
O(1)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_decoder  # noqa: E402

CONFIGS = {
    "qwen3-gqa-tied": dict(model_type="qwen3", vocab_size=50, hidden_size=32,
                           intermediate_size=48, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2,
                           head_dim=8, max_position_embeddings=16,
                           rms_norm_eps=1e-6, rope_theta=10000.0,
                           tie_word_embeddings=True),
    "llama-mha-untied": dict(model_type="llama", vocab_size=40, hidden_size=24,
                             intermediate_size=40, num_hidden_layers=2,
                             num_attention_heads=3, num_key_value_heads=3,
                             head_dim=8, max_position_embeddings=16,
                             rms_norm_eps=1e-5, rope_theta=500.0,
                             tie_word_embeddings=False),
    "llama-gqa-bias": dict(model_type="llama", vocab_size=30, hidden_size=32,
                           intermediate_size=64, num_hidden_layers=1,
                           num_attention_heads=4, num_key_value_heads=1,
                           head_dim=8, max_position_embeddings=8,
                           rms_norm_eps=1e-6, rope_theta=10000.0,
                           tie_word_embeddings=False, attention_bias=True),
}


def rel_err(a, b):
    scale = max(float(np.abs(b).max()), 1e-30)
    return float(np.abs(a - b).max()) / scale


def check_config(tool, name, config, workdir):
    d = os.path.join(workdir, name)
    os.makedirs(d)
    with open(os.path.join(d, "input.json"), "w") as f:
        json.dump(config, f)
    subprocess.run([tool, os.path.join(d, "input.json"), d, "7"], check=True)
    weights = load_file(os.path.join(d, "model.safetensors"))
    step = load_file(os.path.join(d, "step.safetensors"))
    model = torch_decoder.load(os.path.join(d, "config.json"), weights)

    ids = torch.from_numpy(step["ids"])
    targets = torch.from_numpy(step["targets"])
    logits = model(ids)
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
    loss.backward()

    failures = []

    def compare(what, ours, theirs, bound):
        err = rel_err(ours, theirs)
        if not err <= bound:
            failures.append(f"{name}: {what} relative error {err:.3g} > {bound}")
        return err

    worst = compare("logits", step["logits"], logits.detach().numpy(), 1e-4)
    compare("loss", step["loss"].reshape(1), loss.detach().numpy().reshape(1), 1e-5)
    params = dict(model.named_parameters())
    ours_names = {k[len("grad."):] for k in step if k.startswith("grad.")}
    if ours_names != set(params):
        failures.append(f"{name}: parameter names differ: tessel {sorted(ours_names)}, "
                        f"torch {sorted(params)}")
    for pname, p in params.items():
        if pname in ours_names:
            worst = max(worst, compare(f"grad of {pname}", step["grad." + pname],
                                       p.grad.numpy(), 1e-4))
    # The optimiser is compared on its own: both start from the same weights
    # and tessel's gradients (Adam's first step is nearly sign(g) * lr, so
    # gradients that differ by rounding could flip near-zero entries).
    for pname, p in params.items():
        if pname in ours_names:
            p.grad = torch.from_numpy(step["grad." + pname].copy())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.8, 0.95), eps=1e-6,
                            weight_decay=0.1)
    opt.step()
    adam_worst = 0.0
    for pname, p in params.items():
        if pname in ours_names:
            ours = step["after." + pname]
            theirs = p.detach().numpy()
            err = float(np.abs(ours - theirs).max())
            adam_worst = max(adam_worst, err)
            if not err <= 1e-6:
                failures.append(f"{name}: AdamW step of {pname} differs by {err:.3g}")
    print(f"{name}: logits/grads max rel err {worst:.2e}, AdamW max abs diff "
          f"{adam_worst:.2e}, {len(params)} parameters")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    torch.set_num_threads(2)
    failures = []
    with tempfile.TemporaryDirectory() as workdir:
        for name, config in CONFIGS.items():
            failures += check_config(args.tool, name, config, workdir)
    for f in failures:
        print("FAIL", f)
    print("decoder vs PyTorch:", "ok" if not failures else f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

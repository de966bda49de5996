"""One training step (forward, cross-entropy, backward, clipping, AdamW) of
`tessel train`'s default decoder, tessel against PyTorch CPU on the same
config, batch and thread count in the same run: prints tokens/s and the
ratios (target >= 1.0x). Under PyTorch 2.x the peer runs twice: eager and
torch.compile (inductor; the forward and loss compiled, as a training loop
compiles its model; its one-off compile time is left out). With
--baseline, an older bench_train binary runs alternately with the new one
(rounds of each) and the speed-up is printed.

Usage: compare_train.py BUILD/bench/bench_train [--baseline OLD/bench_train]
           [--rounds N]
PyTorch 2.x: scripts/setup --torch2, then run this with .venv-torch2/bin/python."""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "tests", "oracle"))
import torch_decoder  # noqa: E402
from timing import median, run_benchmarks  # noqa: E402

CONFIG = dict(model_type="qwen3", vocab_size=256, hidden_size=128,
              intermediate_size=384, num_hidden_layers=3, num_attention_heads=8,
              num_key_value_heads=4, head_dim=16, max_position_embeddings=13,
              rms_norm_eps=1e-6, rope_theta=10.0, tie_word_embeddings=True)
SEQ = 12


def torch_step_seconds(batch, compiled, steps=20):
    torch.manual_seed(0)
    model = torch_decoder.CausalLM(CONFIG)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    ids = torch.randint(0, 256, (batch, SEQ))
    targets = torch.randint(0, 256, (batch, SEQ))

    def loss_of(ids, targets):
        return torch.nn.functional.cross_entropy(model(ids).reshape(-1, 256),
                                                 targets.reshape(-1))

    loss_fn = torch.compile(loss_of) if compiled else loss_of

    def step():
        loss = loss_fn(ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()

    for _ in range(3):  # the compile happens here
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return median(times)


def tessel_rates(tool, rounds, baseline=None):
    """{batch: (new tok/s, old tok/s or None)}: medians over rounds, the two
    binaries alternating so that both see the same machine."""
    new, old = {}, {}
    for _ in range(rounds):
        for binary, into in ((baseline, old), (tool, new)):
            if binary is None:
                continue
            for name, entry in run_benchmarks(binary, "BM_TrainStep", min_time=2).items():
                into.setdefault(int(name.split("/")[2]), []).append(
                    entry["tokens_per_second"])
    return {b: (median(new[b]), median(old[b]) if b in old else None) for b in new}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("--baseline", help="an older bench_train to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    threads = int(os.environ.get("TESSEL_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    with_compile = int(torch.__version__.split(".")[0]) >= 2
    print(f"PyTorch {torch.__version__}, {threads} threads; decoder 3x128, "
          f"batch x {SEQ} tokens; tessel medians of {args.rounds} rounds")
    rates = tessel_rates(args.tool, args.rounds, args.baseline)
    header = f"{'batch':>6} {'tessel':>8}"
    if args.baseline:
        header += f" {'before':>8} {'speed-up':>9}"
    header += f" {'eager':>8} {'ratio':>7}"
    if with_compile:
        header += f" {'compile':>8} {'ratio':>7}"
    print(header + "   (tokens/s)")
    for batch in sorted(rates, reverse=True):
        ours, before = rates[batch]
        line = f"{batch:>6} {ours:>8.0f}"
        if args.baseline:
            line += f" {before:>8.0f} {ours / before:>8.2f}x"
        eager = batch * SEQ / torch_step_seconds(batch, False)
        line += f" {eager:>8.0f} {ours / eager:>6.2f}x"
        if with_compile:
            compiled = batch * SEQ / torch_step_seconds(batch, True)
            line += f" {compiled:>8.0f} {ours / compiled:>6.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()

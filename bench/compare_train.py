"""One training step (forward, cross-entropy, backward, clipping, AdamW) of
`tessel train`'s default decoder, tessel against PyTorch CPU eager on the
same config, batch and thread count in the same run: prints tokens/s and
the ratio (target >= 1.0x).

Usage: compare_train.py BUILD/bench/bench_train"""
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


def torch_step_seconds(batch, steps=20):
    model = torch_decoder.CausalLM(CONFIG)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    ids = torch.randint(0, 256, (batch, SEQ))
    targets = torch.randint(0, 256, (batch, SEQ))

    def step():
        loss = torch.nn.functional.cross_entropy(model(ids).reshape(-1, 256),
                                                 targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()

    for _ in range(3):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return median(times)


def main():
    tool = sys.argv[1]
    threads = int(os.environ.get("TESSEL_NUM_THREADS", os.cpu_count()))
    torch.set_num_threads(threads)
    print(f"PyTorch {torch.__version__}, {threads} threads; decoder 3x128, "
          f"batch x {SEQ} tokens")
    ours = run_benchmarks(tool, "BM_TrainStep", min_time=2)
    print(f"{'batch':>6} {'tessel tok/s':>14} {'torch tok/s':>13} {'ratio':>7}")
    for name, entry in sorted(ours.items()):
        batch = int(name.split("/")[2])
        tessel_rate = entry["tokens_per_second"]
        torch_rate = batch * SEQ / torch_step_seconds(batch)
        print(f"{batch:>6} {tessel_rate:>14.0f} {torch_rate:>13.0f} "
              f"{tessel_rate / torch_rate:>6.2f}x")


if __name__ == "__main__":
    main()

"""Data-parallel training throughput: `mpirun -np 2 tessel train` with one
thread per rank against one process with two threads, same global batch,
same steps, for the default model and a wider one (hidden 512, 6 layers).
Prints tokens/s of each, the ratio (target >= 0.9) and the all-reduce time
per step. Usage: compare_distributed.py TESSEL [--steps N] [--rounds R]"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

# tessel train's default global batch: 128 sequences of 12 tokens.
BATCH = 128

MODELS = {
    "default (hidden 128, 3 layers)": [],
    "wide (hidden 512, 6 layers)": ["--hidden", "512", "--layers", "6",
                                    "--heads", "8", "--kv-heads", "4",
                                    "--intermediate", "1536"],
}


def run(tessel, ranks, threads, steps, model, out):
    env = dict(os.environ, TESSEL_NUM_THREADS=str(threads),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [tessel, "train", "--steps", str(steps), "--batch-size", str(BATCH),
           "--save-every", "0", "--json", "--out", out, *model]
    if ranks > 1:
        cmd = [shutil.which("mpirun"), "-np", str(ranks), "--oversubscribe",
               "--bind-to", "core", "-x", "TESSEL_NUM_THREADS", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessel")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    print(f"{'model':34} {'1x2 tok/s':>10} {'2x1 tok/s':>10} {'ratio':>6} "
          f"{'allreduce ms/step':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in MODELS.items():
            best1 = best2 = None
            for _ in range(a.rounds):  # alternate, keep the best of each
                r1 = run(a.tessel, 1, 2, a.steps, model, f"{tmp}/a")
                r2 = run(a.tessel, 2, 1, a.steps, model, f"{tmp}/b")
                if best1 is None or r1["tokens_per_second"] > best1[
                        "tokens_per_second"]:
                    best1 = r1
                if best2 is None or r2["tokens_per_second"] > best2[
                        "tokens_per_second"]:
                    best2 = r2
            ratio = best2["tokens_per_second"] / best1["tokens_per_second"]
            print(f"{name:34} {best1['tokens_per_second']:10.0f} "
                  f"{best2['tokens_per_second']:10.0f} {ratio:6.2f} "
                  f"{1e3 * best2['allreduce_seconds_per_step']:18.2f}")


if __name__ == "__main__":
    main()

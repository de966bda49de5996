"""`tessel quantize` against llama.cpp's llama_model_quantize on one model,
as a ratio (llama.cpp time / tessel time, so > 1 means tessel is faster),
with each side's peak resident memory.

The model is a random llama-architecture f16 GGUF of --layers layers of
--hidden width (8 x 1536 with a 4096 FFN and an 8192-token vocabulary: 223M
parameters, 446 MB), written to --dir and deleted afterwards. Both sides use
every CPU (tessel's pool; llama.cpp's nthread = os.cpu_count()), run as
child processes in alternation (`--rounds` rounds; the fastest run of each
counts, since other load only ever adds time), each reading the same warm
input and writing its own output.

tessel's output file is atomic, so it is fsync'ed before it is renamed into
place; llama.cpp closes its file without a flush. The ratio is printed both
ways: as each tool runs, and with llama.cpp's output fsync'ed too (the same
durability).

Usage: compare_quantize_cli.py BUILD/tools/cli/tessel [--mixes Q4_K_M,Q8_0]
       [--rounds 3] [--layers 8 --hidden 1536 --ffn 4096] [--dir /tmp]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

FTYPES = {"Q4_K_M": 15, "Q8_0": 7, "Q4_0": 2, "Q6_K": 18, "Q5_K_M": 17, "IQ4_XS": 30}

# Runs llama_model_quantize in a child process: prints its return code, the
# seconds of the call and of an fsync of its output afterwards, and the
# process's peak resident set (VmHWM, which includes Python and llama_cpp).
LLAMA_CHILD = r"""
import ctypes, os, sys, time
import llama_cpp
src, dst, ftype = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = llama_cpp.llama_model_quantize_default_params()
p.ftype = ftype
p.nthread = os.cpu_count()
t = time.perf_counter()
rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
quantize = time.perf_counter() - t
fd = os.open(dst, os.O_RDONLY)
os.fsync(fd)
os.close(fd)
sync = time.perf_counter() - t - quantize
peak = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(rc, quantize, sync, peak)
"""


def build(path, layers, hidden, ffn, heads, kv_heads, vocab):
    import gguf
    rng = np.random.default_rng(0)
    w = gguf.GGUFWriter(path, "llama")
    head_dim = hidden // heads
    w.add_block_count(layers)
    w.add_context_length(2048)
    w.add_embedding_length(hidden)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(1)
    w.add_tokenizer_model("llama")
    w.add_token_list(["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(3, vocab)])
    w.add_token_scores([0.0] * vocab)
    w.add_token_types([2, 3, 3] + [1] * (vocab - 3))
    # One random f16 pool, sliced per tensor: the values only need to look
    # like weights, and generating 223M normals would take longer than the
    # quantisation itself.
    pool = (rng.standard_normal(1 << 24) * 0.02).astype(np.float16)

    def weight(name, rows, cols):
        n = rows * cols
        reps = -(-n // pool.size)
        data = np.tile(pool, reps)[:n] if reps > 1 else pool[:n]
        w.add_tensor(name, np.roll(data, rows).reshape(rows, cols))

    w.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    weight("token_embd.weight", vocab, hidden)
    weight("output.weight", vocab, hidden)
    q, kv = heads * head_dim, kv_heads * head_dim
    for i in range(layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(hidden, np.float32))
        w.add_tensor(p + "ffn_norm.weight", np.ones(hidden, np.float32))
        weight(p + "attn_q.weight", q, hidden)
        weight(p + "attn_k.weight", kv, hidden)
        weight(p + "attn_v.weight", kv, hidden)
        weight(p + "attn_output.weight", hidden, q)
        weight(p + "ffn_gate.weight", ffn, hidden)
        weight(p + "ffn_up.weight", ffn, hidden)
        weight(p + "ffn_down.weight", hidden, ffn)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run_child(cmd):
    """(stdout, wall seconds) of a child process. Peak memory comes from the
    child's own VmHWM: wait4's ru_maxrss would count the pages of this
    (large) Python process that the child had before its exec."""
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessel")
    ap.add_argument("--mixes", default="Q4_K_M,Q8_0")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=1536)
    ap.add_argument("--ffn", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="tessel-quantize-bench-", dir=args.dir)
    try:
        src = os.path.join(tmp, "model-f16.gguf")
        t = time.perf_counter()
        build(src, args.layers, args.hidden, args.ffn, args.heads, args.kv_heads, args.vocab)
        print(f"model: {args.layers} layers x {args.hidden} (FFN {args.ffn}, vocab {args.vocab}), "
              f"f16, {os.path.getsize(src) / 1e6:.0f} MB (built in {time.perf_counter() - t:.1f} s); "
              f"{os.cpu_count()} CPUs\n")
        print(f"{'mix':8} {'tessel s':>9} {'llama s':>8} {'+fsync':>7} {'ratio':>6} {'ratio fsync':>11} "
              f"{'tessel RSS MB':>13} {'llama RSS MB':>12} {'out MB':>7}")
        for mix in args.mixes.split(","):
            ours, theirs = os.path.join(tmp, "tessel.gguf"), os.path.join(tmp, "llama.gguf")
            best = {"tessel": float("inf"), "llama": float("inf"), "llama_sync": float("inf")}
            rss = {"tessel": 0, "llama": 0}
            for _ in range(args.rounds):
                out, seconds = run_child([args.tessel, "quantize", src, ours, "--type", mix, "--json"])
                summary = json.loads(out)
                best["tessel"] = min(best["tessel"], seconds)
                rss["tessel"] = max(rss["tessel"], summary["peak_resident_bytes"])
                size = summary["file_bytes"]
                out, _ = run_child([sys.executable, "-c", LLAMA_CHILD, src, theirs, str(FTYPES[mix])])
                rc, quantize, sync, peak = out.split()
                if rc != "0":
                    sys.exit(f"llama_model_quantize failed for {mix}")
                best["llama"] = min(best["llama"], float(quantize))
                best["llama_sync"] = min(best["llama_sync"], float(quantize) + float(sync))
                rss["llama"] = max(rss["llama"], int(peak))
                same = open(ours, "rb").read() == open(theirs, "rb").read()
                os.remove(ours)
                os.remove(theirs)
                if not same:
                    sys.exit(f"{mix}: the outputs differ")
            print(f"{mix:8} {best['tessel']:9.2f} {best['llama']:8.2f} {best['llama_sync']:7.2f} "
                  f"{best['llama'] / best['tessel']:6.2f} {best['llama_sync'] / best['tessel']:11.2f} "
                  f"{rss['tessel'] / 1e6:13.0f} {rss['llama'] / 1e6:12.0f} {size / 1e6:7.0f}")
        print("\nratio = llama.cpp seconds / tessel seconds (> 1: tessel faster); outputs "
              "compared byte for byte in every round.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 14's speed targets: whole decoders, tessel (bench_decoder) against
llama.cpp (llama-cpp-python) on the same GGUF file, same threads, in one
run. Prompt processing of 128 and 512 tokens and decode tokens per second,
printed with the ratio tessel / llama.cpp (> 1: tessel is faster) and
decode as a fraction of this machine's read bandwidth in weight bytes.

Usage: compare_models.py BUILD/bench/bench_decoder [--shape 160m|0.6b]
       [--types f32,f16,bf16,q8_0,q4_0,q4_k_m] [--dir CACHE] [--rounds N]
       [--no-mmap]
       [--matmul-precision f32|bf16]
       [--cache-type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl]
       [--decode-after P] [--pairs N]
--cache-type is what tessel keeps its KV cache in (f32 by default; f16 is
llama.cpp's default, which llama.cpp runs with for the float types). For
a block type llama.cpp keeps its cache in the same type, which needs its
flash attention (on for that run only). Decode is 64
single-token steps after a 16-token prompt, or after P tokens with
--decode-after P: at long contexts each step reads the KV cache as well as
the weights (the GB/s column still counts weight bytes only).
The decode ratio is given twice: from the best of `rounds` of each
library, measured minutes apart, and as the median (and range) over
--pairs rounds that alternate one BM_Decode run of tessel's with one
llama.cpp round straight after it. Where both read the weights at the
memory's rate, the host's DRAM rate moving by half within minutes can
swing the first by more than the libraries differ; the paired one sets
them side by side in the same phase.
The GB/s column is decode in weight bytes a token against the machine's
DRAM read rate, from BM_DecodeAgainstRead: in one process, rounds of 32
decode steps between passes of the read ceiling's loop (arrays four times
the last-level cache, 256 MiB at least), medians over the rounds of the
weight GB/s and of its fraction of the reads either side (the host's read
rate moves by half within minutes). A model whose weights fit in the
last-level cache (480 MiB on the Sapphire Rapids VMs here: every
quantised 160M file) decodes from cache, so that fraction can pass 100%.
The products column is BM_DecodeProducts: a decode step's weight
products alone over the same mapped weights, in weight GB/s and as a
fraction of the same read rate; what decode falls short of it is the
rest of a step (norms, RoPE, the cache, attention, hand-offs).
The files are made once into CACHE (default /tmp/tessel-models): a random
Qwen3 f32 GGUF written by bench_decoder, the other types quantised from it
by llama_model_quantize. llama.cpp runs with its defaults (f16 KV cache,
which only helps it) and n_batch = 512; each measurement takes the best of
`rounds`. Both are timed with the weights' pages mapped: llama.cpp maps
the file with MAP_POPULATE while loading, tessel maps it lazily and
bench_decoder runs one untimed token first. The last column is what that
costs each: a fresh load and one token, the file in the page cache
(llama.cpp's first measured, tessel's best of `rounds`).
With --no-mmap both read the weights into memory instead of mapping the
file (tessel: MapMode::Resident, 2 MiB pages; llama.cpp: use_mmap=False,
its buffer in whatever pages malloc gets).
Time it on an idle machine: a busy core halves both.
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import run_benchmarks  # noqa: E402

# llama_ftype of each file type llama_model_quantize makes; the six
# run by default.
FTYPES = {"f32": 0, "f16": 1, "bf16": 32, "q8_0": 7, "q4_0": 2, "q4_k_m": 15,
          "iq4_xs": 30}
DEFAULT_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_k_m"]


def make_files(tool, shape, types, cache):
    import llama_cpp
    os.makedirs(cache, exist_ok=True)
    base = os.path.join(cache, f"qwen3-{shape}-f32.gguf")
    if not os.path.exists(base):
        subprocess.run([tool, "--write-random-qwen3", base, shape], check=True)
    paths = {}
    for t in types:
        path = os.path.join(cache, f"qwen3-{shape}-{t}.gguf")
        if not os.path.exists(path):
            p = llama_cpp.llama_model_quantize_default_params()
            p.ftype = FTYPES[t]
            p.nthread = os.cpu_count()
            if llama_cpp.llama_model_quantize(base.encode(), path.encode(), ctypes.byref(p)) != 0:
                raise RuntimeError(f"llama_model_quantize {t} failed")
        paths[t] = path
    return paths


BLOCK_CACHE_TYPES = ("q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")


def llama_open(path, threads, mmap, decode_after, cache_type):
    """llama.cpp's model and context for `path`, with the seconds its load
    and first token took."""
    import llama_cpp
    cache = {}
    if cache_type in BLOCK_CACHE_TYPES:
        ggml_type = getattr(llama_cpp, "GGML_TYPE_" + cache_type.upper())
        cache = {"type_k": ggml_type, "type_v": ggml_type, "flash_attn": True}
    start = time.perf_counter()
    llm = llama_cpp.Llama(model_path=path, n_ctx=max(1024, decode_after + 64),
                          n_batch=512, n_ubatch=512,
                          n_threads=threads, n_threads_batch=threads, use_mmap=mmap,
                          verbose=False, **cache)
    llm.eval([0])
    return llm, time.perf_counter() - start


def llama_decode(llm, decode_after):
    """Tokens per second of one round of 64 decode steps after a prompt of
    `decode_after` tokens."""
    rng = np.random.default_rng(11)
    ids = [int(i) for i in rng.integers(0, llm.n_vocab(), decode_after + 64)]
    llm.reset()
    llm.eval(ids[:decode_after])
    start = time.perf_counter()
    for t in ids[decode_after:]:
        llm.eval([t])
    return 64 / (time.perf_counter() - start)


def llama_speeds(llm, rounds, decode_after):
    out = {}
    rng = np.random.default_rng(7)
    vocab = llm.n_vocab()
    for n in (128, 512):
        ids = [int(i) for i in rng.integers(0, vocab, n)]
        best = float("inf")
        for _ in range(rounds):
            llm.reset()
            start = time.perf_counter()
            llm.eval(ids)
            best = min(best, time.perf_counter() - start)
        out[f"prompt{n}"] = n / best
    out["decode"] = max(llama_decode(llm, decode_after) for _ in range(rounds))
    return out


def decode_pairs(tool, llm, pairs, decode_after):
    """Decode tessel / llama.cpp as the median over `pairs` rounds of one
    BM_Decode run of tessel's (as tessel_environment set it) and one
    llama.cpp round straight after it: the host's DRAM rate moves by half
    within minutes, and two best-of-N figures taken minutes apart can
    each catch a different phase."""
    ratios = []
    for _ in range(pairs):
        r = run_benchmarks(tool, "BM_Decode/", min_time=0.3)
        tessel = r["BM_Decode/64/manual_time"]["items_per_second"]
        ratios.append(tessel / llama_decode(llm, decode_after))
    if not ratios:
        return None
    # The upper middle value for an even count.
    return sorted(ratios)[len(ratios) // 2], min(ratios), max(ratios)


def tessel_environment(path, mmap, precision, cache_type, decode_after):
    """What bench_decoder reads its model and settings from."""
    os.environ["TESSEL_BENCH_MODEL"] = path
    os.environ["TESSEL_BENCH_NO_MMAP"] = "0" if mmap else "1"
    os.environ["TESSEL_BENCH_MATMUL_PRECISION"] = precision
    os.environ["TESSEL_BENCH_CACHE_TYPE"] = cache_type
    os.environ["TESSEL_BENCH_DECODE_AFTER"] = str(decode_after)


def tessel_speeds(tool, rounds):
    out = {}
    for _ in range(rounds):
        r = run_benchmarks(tool, "BM_(Prompt|Decode|DecodeProducts)/|BM_LoadAndFirstToken",
                           min_time=0.5)
        for key, name in (("prompt128", "BM_Prompt/128/manual_time"),
                          ("prompt512", "BM_Prompt/512/manual_time"),
                          ("decode", "BM_Decode/64/manual_time")):
            if name in r:
                out[key] = max(out.get(key, 0), r[name]["items_per_second"])
        products = r.get("BM_DecodeProducts/64/manual_time")
        if products:
            out["products"] = max(out.get("products", 0), products["weight_GBps"])
        first = r.get("BM_LoadAndFirstToken/manual_time")
        if first:
            seconds = first["real_time"] / 1e3  # reported in ms
            out["first"] = min(out.get("first", float("inf")), seconds)
    paired = run_benchmarks(tool, "BM_DecodeAgainstRead", min_time=0.01)
    for name, e in paired.items():
        if name.startswith("BM_DecodeAgainstRead"):
            out["against_read"] = e
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--shape", default="160m")
    ap.add_argument("--types", default=",".join(DEFAULT_TYPES))
    ap.add_argument("--dir", default="/tmp/tessel-models")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-mmap", action="store_true",
                    help="read the weights into memory instead of mapping the file (both)")
    ap.add_argument("--matmul-precision", default="f32", choices=("f32", "bf16"),
                    help="tessel's MatmulPrecision (bf16: bf16 weights multiply "
                    "bf16-rounded activations, as llama.cpp does)")
    ap.add_argument("--cache-type", default="f32",
                    choices=("f32", "f16", "bf16") + BLOCK_CACHE_TYPES,
                    help="what tessel keeps its KV cache in (llama.cpp: f16, its "
                    "default, or the same block type with flash attention)")
    ap.add_argument("--decode-after", type=int, default=16,
                    help="prompt tokens before the 64 timed decode steps")
    ap.add_argument("--pairs", type=int, default=5,
                    help="alternated tessel / llama.cpp decode rounds for the "
                    "paired decode ratio (0: none)")
    args = ap.parse_args()
    if args.rounds < 1 or args.pairs < 0:
        ap.error("--rounds must be at least 1 and --pairs at least 0")
    types = args.types.split(",")
    paths = make_files(args.tool, args.shape, types, args.dir)
    load = os.getloadavg()[0]
    print(f"Qwen3 {args.shape}, {args.threads} threads, "
          f"weights {'read into memory' if args.no_mmap else 'mapped'}, "
          f"tessel's matmul precision {args.matmul_precision}, "
          f"tessel's KV cache {args.cache_type} (llama.cpp's "
          f"{args.cache_type if args.cache_type in BLOCK_CACHE_TYPES else 'f16'}), "
          f"decode after {args.decode_after} tokens, "
          f"load average {load:.2f}\n")
    print("| type | prompt 128 tessel / llama.cpp | ratio | prompt 512 | ratio | "
          "decode | ratio | paired decode ratio (range) | "
          "decode GB/s (weights) against the read | products alone GB/s | "
          "load + first token ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    reads = []
    for t in types:
        tessel_environment(paths[t], not args.no_mmap, args.matmul_precision,
                           args.cache_type, args.decode_after)
        llm, first = llama_open(paths[t], args.threads, not args.no_mmap,
                                args.decode_after, args.cache_type)
        lc = llama_speeds(llm, args.rounds, args.decode_after)
        lc["first"] = first
        # The pairs need both models loaded; the rest of tessel's figures
        # are taken with llama.cpp's gone, as llama.cpp's were without
        # tessel's.
        pair = decode_pairs(args.tool, llm, args.pairs, args.decode_after)
        del llm
        ts = tessel_speeds(args.tool, args.rounds)
        paired = ts.get("against_read")
        if paired:
            reads.append(paired["read_GBps"])
            gbs = (f"{paired['weight_GBps']:.1f} ({paired['of_read']:.0%} of "
                   f"{paired['read_GBps']:.0f})")
        else:
            gbs = "-"
        if "products" in ts and paired:
            products = (f"{ts['products']:.1f} "
                        f"({ts['products'] / paired['read_GBps']:.0%})")
        else:
            products = "-"
        cells = []
        for k in ("prompt128", "prompt512", "decode"):
            a, b = ts.get(k), lc.get(k)
            cells.append(f"{a:.0f} / {b:.0f}" if a and b else "-")
            cells.append(f"{a / b:.2f}x" if a and b else "-")
        first = (f"{ts['first'] * 1e3:.0f} / {lc['first'] * 1e3:.0f}"
                 if "first" in ts and "first" in lc else "-")
        cells.append(f"{pair[0]:.2f}x ({pair[1]:.2f}-{pair[2]:.2f})" if pair else "-")
        print(f"| {t} | " + " | ".join(cells) + f" | {gbs} | {products} | {first} |",
              flush=True)
    if reads:
        print(f"\nDRAM read beside tessel's decode (medians per type): "
              f"{min(reads):.1f}-{max(reads):.1f} GB/s")


if __name__ == "__main__":
    main()

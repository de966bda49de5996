"""Issue 14's speed targets: whole decoders, tessel (bench_decoder) against
llama.cpp (llama-cpp-python) on the same GGUF file, same threads, in one
run. Prompt processing of 128 and 512 tokens and decode tokens per second,
printed with the ratio tessel / llama.cpp (> 1: tessel is faster) and
decode as a fraction of this machine's read bandwidth in weight bytes.

Usage: compare_models.py BUILD/bench/bench_decoder [--shape 160m|0.6b]
       [--types f32,f16,bf16,q8_0,q4_0,q4_k_m] [--dir CACHE] [--rounds N]
       [--ceilings BUILD/bench/bench_kernels] [--no-mmap]
       [--matmul-precision f32|bf16]
       [--cache-type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl]
       [--decode-after P]
--cache-type is what tessel keeps its KV cache in (f32 by default; f16 is
llama.cpp's default, which llama.cpp runs with for the float types). For
a block type llama.cpp keeps its cache in the same type, which needs its
flash attention (on for that run only). Decode is 64
single-token steps after a 16-token prompt, or after P tokens with
--decode-after P: at long contexts each step reads the KV cache as well as
the weights (the GB/s column still counts weight bytes only).
With --ceilings, the machine's DRAM read bandwidth (BM_StreamRead, arrays
four times the last-level cache, 256 MiB at least) is measured just before
and just after each type's tessel run and decode is reported as a fraction
of the higher of the two (GB/s in the column). A model whose weights fit in the last-level
cache (480 MiB on the Sapphire Rapids VMs here: every quantised 160M file)
decodes from cache, so that fraction can pass 100%.
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

FTYPES = {"f32": 0, "f16": 1, "bf16": 32, "q8_0": 7, "q4_0": 2, "q4_k_m": 15}


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


def llama_speeds(path, threads, rounds, mmap, decode_after, cache_type):
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
    out = {"first": time.perf_counter() - start}
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
    ids = [int(i) for i in rng.integers(0, vocab, decode_after + 64)]
    best = float("inf")
    for _ in range(rounds):
        llm.reset()
        llm.eval(ids[:decode_after])
        start = time.perf_counter()
        for t in ids[decode_after:]:
            llm.eval([t])
        best = min(best, time.perf_counter() - start)
    out["decode"] = 64 / best
    del llm
    return out


def tessel_speeds(tool, path, rounds, mmap, precision, cache_type, decode_after):
    os.environ["TESSEL_BENCH_MODEL"] = path
    os.environ["TESSEL_BENCH_NO_MMAP"] = "0" if mmap else "1"
    os.environ["TESSEL_BENCH_MATMUL_PRECISION"] = precision
    os.environ["TESSEL_BENCH_CACHE_TYPE"] = cache_type
    os.environ["TESSEL_BENCH_DECODE_AFTER"] = str(decode_after)
    out = {}
    for _ in range(rounds):
        r = run_benchmarks(tool, "BM_(Prompt|Decode)/|BM_LoadAndFirstToken", min_time=0.5)
        for key, name in (("prompt128", "BM_Prompt/128/manual_time"),
                          ("prompt512", "BM_Prompt/512/manual_time"),
                          ("decode", "BM_Decode/64/manual_time")):
            if name in r:
                out[key] = max(out.get(key, 0), r[name]["items_per_second"])
        first = r.get("BM_LoadAndFirstToken/manual_time")
        if first:
            seconds = first["real_time"] / 1e3  # reported in ms
            out["first"] = min(out.get("first", float("inf")), seconds)
    return out


def weight_bytes(path):
    """Bytes of every tensor decode streams (all but the embedding table
    when the head is not tied to it)."""
    from gguf import GGUFReader
    reader = GGUFReader(path)
    names = {t.name for t in reader.tensors}
    tied = "output.weight" not in names
    return sum(int(t.n_bytes) for t in reader.tensors
               if tied or t.name != "token_embd.weight")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--shape", default="160m")
    ap.add_argument("--types", default=",".join(FTYPES))
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
    ap.add_argument("--ceilings", default=None,
                    help="bench_kernels, to measure DRAM read bandwidth in the same run")
    args = ap.parse_args()
    types = args.types.split(",")
    paths = make_files(args.tool, args.shape, types, args.dir)
    def read_ceiling():
        r = run_benchmarks(args.ceilings, "BM_StreamRead", min_time=1.0)
        return r["BM_StreamRead"]["bytes_per_second"] / 1e9

    load = os.getloadavg()[0]
    print(f"Qwen3 {args.shape}, {args.threads} threads, "
          f"weights {'read into memory' if args.no_mmap else 'mapped'}, "
          f"tessel's matmul precision {args.matmul_precision}, "
          f"tessel's KV cache {args.cache_type} (llama.cpp's "
          f"{args.cache_type if args.cache_type in BLOCK_CACHE_TYPES else 'f16'}), "
          f"decode after {args.decode_after} tokens, "
          f"load average {load:.2f}\n")
    print("| type | prompt 128 tessel / llama.cpp | ratio | prompt 512 | ratio | "
          "decode | ratio | decode GB/s (weights) | load + first token ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    reads = []
    for t in types:
        lc = llama_speeds(paths[t], args.threads, args.rounds, not args.no_mmap,
                          args.decode_after, args.cache_type)
        # The ceiling moves with the other tenants of the host (31-41 GB/s
        # within one hour here): measured on each side of tessel's run, the
        # higher one counts.
        before = read_ceiling() if args.ceilings else None
        ts = tessel_speeds(args.tool, paths[t], args.rounds, not args.no_mmap,
                           args.matmul_precision, args.cache_type, args.decode_after)
        read_gbps = max(before, read_ceiling()) if args.ceilings else None
        if read_gbps:
            reads.append(read_gbps)
        gbs = ts.get("decode", 0) * weight_bytes(paths[t]) / 1e9
        frac = f" ({gbs / read_gbps:.0%} of {read_gbps:.0f})" if read_gbps else ""
        cells = []
        for k in ("prompt128", "prompt512", "decode"):
            a, b = ts.get(k), lc.get(k)
            cells.append(f"{a:.0f} / {b:.0f}" if a and b else "-")
            cells.append(f"{a / b:.2f}x" if a and b else "-")
        first = (f"{ts['first'] * 1e3:.0f} / {lc['first'] * 1e3:.0f}"
                 if "first" in ts and "first" in lc else "-")
        print(f"| {t} | " + " | ".join(cells) + f" | {gbs:.1f}{frac} | {first} |", flush=True)
    if reads:
        print(f"\nDRAM read (BM_StreamRead, arrays of 4x the last-level cache) around "
              f"tessel's runs: {min(reads):.1f}-{max(reads):.1f} GB/s")


if __name__ == "__main__":
    main()
